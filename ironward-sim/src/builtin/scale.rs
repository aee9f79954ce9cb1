//! The verdict on scale: `scale`.

use crate::report::Report;
use crate::words::grouped;

use super::verdict::span;

pub(super) fn scale(report: &Report) -> Option<String> {
    let run = report.runs.first()?;
    let total = run.total();
    Some(format!(
        "{} decisions ({} calls and {} retries) over {} of simulated traffic.",
        grouped(total.attempts()),
        grouped(total.offered),
        grouped(total.retries),
        span(run.variant.duration),
    ))
}
