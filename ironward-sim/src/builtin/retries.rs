//! The verdict on retries: `retry-storm`.

use core::cmp::Ordering;
use core::fmt::Write;
use core::time::Duration;

use crate::report::{Report, Sum, VariantRun};
use crate::words::grouped;

use super::verdict::{runs, than};

pub(super) fn retry_storm(report: &Report) -> Option<String> {
    let [rigid, full, decorrelated] = runs(report, ["rigid", "full", "decorrelated"])?;
    let all = [rigid, full, decorrelated];
    let [r, f, d] = all.map(VariantRun::total);
    if [r, f, d].iter().any(|t| t.offered == 0) {
        return Some("No conclusion: no call arrived in some variant's run.".into());
    }
    let done = |run: &VariantRun, sum: &Sum| match (run.last_end, sum.gave_up, run.unfinished) {
        (_, _, left) if left > 0 => format!("not yet ({} still under way)", grouped(left)),
        (Some(end), 0, _) => format!("{:.2} s", end.as_secs_f64()),
        (Some(end), failed, _) => {
            format!(
                "{:.2} s ({} never succeeded)",
                end.as_secs_f64(),
                grouped(failed)
            )
        }
        (None, _, _) => "-".into(),
    };
    let mut out = format!(
        "{} synchronised calls. Total attempts: rigid {}, full {}, decorrelated {}.\n  \
         Last call done at: rigid {}, full {}, decorrelated {}.\n",
        grouped(r.offered),
        grouped(r.attempts()),
        grouped(f.attempts()),
        grouped(d.attempts()),
        done(rigid, &r),
        done(full, &f),
        done(decorrelated, &d),
    );
    let finished = all.iter().all(|run| run.unfinished == 0);
    if !finished {
        let _ = writeln!(
            out,
            "Calls were still under way when the run ended at {} s: when the storm is over is \
             not measured, and the attempts are counted only until then.",
            rigid.variant.duration.as_secs_f64()
        );
    }
    let ended = |run: &VariantRun| run.last_end.unwrap_or(Duration::MAX);
    let mut better = 0;
    for (name, run, sum) in [("full", full, f), ("decorrelated", decorrelated, d)] {
        let _ = write!(
            out,
            "With {name}: {} attempts, {} rigid's {}",
            grouped(sum.attempts()),
            than(sum.attempts(), r.attempts()),
            grouped(r.attempts())
        );
        let sooner = ended(run) < ended(rigid);
        if finished {
            let _ = write!(
                out,
                ", and done {}",
                match ended(run).cmp(&ended(rigid)) {
                    Ordering::Less => "sooner",
                    Ordering::Greater => "later",
                    Ordering::Equal => "at the same time",
                }
            );
        }
        let _ = writeln!(out, ".");
        if sum.attempts() < r.attempts() && finished && sooner {
            better += 1;
        }
    }
    if better == 2 {
        let _ = write!(
            out,
            "With no jitter the retries collided again and again; jitter spread them, so \
             fewer attempts found the backend full."
        );
    }
    Some(out.trim_end().to_string())
}
