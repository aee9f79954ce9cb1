//! The verdict on quotas: `quota`.

use core::fmt::Write;
use core::time::Duration;

use crate::report::{Report, VariantRun};
use crate::scenario::Focus;
use crate::words::grouped;

use super::verdict::{outside, runs, span};

pub(super) fn quota(report: &Report) -> Option<String> {
    let [bucket, sliding, period] = runs(report, ["bucket", "sliding", "period"])?;
    let window = bucket.variant.window;
    let whole = Focus {
        from: Duration::ZERO,
        to: window,
    };
    if let Some(refusal) = outside(&[bucket, sliding, period], whole, "a whole window") {
        return Some(refusal);
    }
    let mut out = format!(
        "The most calls reaching the backend in any {} window: bucket {}, sliding {}, period {}.",
        span(window),
        grouped(bucket.peak_window),
        grouped(sliding.peak_window),
        grouped(period.peak_window),
    );
    for run in [bucket, sliding, period] {
        let _ = write!(out, "\n  {}", limit(run, window));
    }
    Some(out)
}

/// What a quota variant's own limit let through in its busiest window, against the most
/// that limit allows there: the sentence points whichever way the figures do.
fn limit(run: &VariantRun, window: Duration) -> String {
    let p = &run.variant.policies;
    let (name, peak) = (&run.variant.name, run.peak_window);
    let against = |what: String, quota: u32, per: Duration| {
        if per != window {
            return format!(
                "{name} ({what}): its quota is per {}, the peak counted per {}; not compared.",
                span(per),
                span(window)
            );
        }
        let quota = u64::from(quota);
        if peak > quota {
            format!(
                "{name} ({what}) let {} through in one {} window: {:.2} times its quota.",
                grouped(peak),
                span(window),
                peak as f64 / quota.max(1) as f64
            )
        } else {
            format!(
                "{name} ({what}) never let more than its quota through in any {} window.",
                span(window)
            )
        }
    };
    match (p.period, p.sliding, p.bucket) {
        (Some(q), None, None) => {
            let what = format!("a fixed period of {} per {}", q.quota, span(q.period));
            let line = against(what, q.quota, q.period);
            if peak > u64::from(q.quota) && q.period == window {
                format!(
                    "{line} A period resets at its boundary, so a quota spent just before it \
                     is followed by another just after."
                )
            } else {
                line
            }
        }
        (None, Some(q), None) => against(
            format!(
                "an exact sliding window of {} per {}",
                q.quota,
                span(q.window)
            ),
            q.quota,
            q.window,
        ),
        (None, None, Some(b)) => {
            let most = b.burst + b.rate * window.as_secs_f64();
            format!(
                "{name} (a token bucket of {} a second, bursts of {}) let {} through in one \
                 {} window, {} the {} its burst and rate allow there.",
                b.rate,
                b.burst,
                grouped(peak),
                span(window),
                if peak as f64 <= most {
                    "within"
                } else {
                    "more than"
                },
                most.floor()
            )
        }
        _ => format!("{name}: not one quota policy, so no limit to hold its peak against."),
    }
}
