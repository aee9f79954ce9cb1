//! The verdict of `sharing-closed`: the convergence table of the limited runs, then what
//! the same clients get with no limiter at all.

use core::fmt::Write;

use crate::optimum::capacity;
use crate::report::{Report, millis};

use super::converge::convergence;
use super::verdict::runs;

/// The convergence verdict, and the limiter's latency and goodput beside none's.
pub(super) fn sharing_closed(report: &Report) -> Option<String> {
    let mut out = convergence(report)?;
    let [limited, none] = runs(report, ["adaptive", "none"])?;
    let (a, b) = (limited.total(), none.total());
    let secs = none.variant.duration.as_secs_f64();
    let most = capacity(&none.variant.backend, core::time::Duration::ZERO);
    let figure =
        |p: Option<core::time::Duration>| p.map_or("-".into(), |p| format!("{:.0} ms", millis(p)));
    let _ = write!(
        out,
        "\nOver the whole run, {} served {:.0} calls/s of the {most:.0} the backend can, with a \
         99th percentile of {}; with no limiter, {:.0} calls/s and {}.",
        limited.variant.name,
        a.succeeded as f64 / secs,
        figure(limited.p99),
        b.succeeded as f64 / secs,
        figure(none.p99),
    );
    Some(out)
}
