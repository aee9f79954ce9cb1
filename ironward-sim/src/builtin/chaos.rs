//! The verdict of `chaos`: what the injected faults cost the calls, with retries and
//! without, and whether the breaker mistook them for an outage.

use core::fmt::Write;
use core::time::Duration;

use crate::report::{Report, Sum, VariantRun, millis};
use crate::words::grouped;

use super::verdict::{runs, than};

/// The share `part` is of `whole`, in per cent (0 for an empty whole).
fn percent(part: u64, whole: u64) -> f64 {
    100.0 * part as f64 / whole.max(1) as f64
}

/// A latency as a sentence gives it.
fn ms(d: Option<Duration>) -> String {
    d.map_or("-".into(), |d| format!("{:.0} ms", millis(d)))
}

/// How the faults were injected into `sum`'s attempts, as a clause.
fn faults(sum: &Sum) -> String {
    let i = sum.injected;
    format!(
        "{} of {} attempts ({:.1}%): {} errors, {} latencies, {} aborts, {} replaced answers",
        grouped(i.total()),
        grouped(sum.attempts()),
        percent(i.total(), sum.attempts()),
        grouped(i.error),
        grouped(i.latency),
        grouped(i.abort),
        grouped(i.replace),
    )
}

pub(super) fn chaos(report: &Report) -> Option<String> {
    let [calm, retries, once] = runs(report, ["calm", "retries", "no-retries"])?;
    let [c, r, o] = [calm, retries, once].map(VariantRun::total);
    if [c, r, o].iter().any(|t| t.offered == 0) {
        return Some("No conclusion: no call arrived in some variant's run.".into());
    }
    if r.injected.total() == 0 || o.injected.total() == 0 {
        return Some(
            "No conclusion: the chaos policy injected nothing into retries or no-retries, so \
             there is nothing for the retries or the breaker to absorb."
                .into(),
        );
    }
    let share = |s: &Sum| percent(s.succeeded, s.offered);
    let mut out = format!(
        "Chaos hit retries in {}, and no-retries in {}.\n",
        faults(&r),
        faults(&o)
    );
    let _ = writeln!(
        out,
        "Calls succeeded: calm {} ({:.2}%), retries {} ({:.2}%), no-retries {} ({:.2}%).",
        grouped(c.succeeded),
        share(&c),
        grouped(r.succeeded),
        share(&r),
        grouped(o.succeeded),
        share(&o),
    );
    let _ = writeln!(
        out,
        "With retries the client made {} retries ({:.1}% more attempts than calls) and gave \
         up on {} calls, {} the {} of no-retries.",
        grouped(r.retries),
        percent(r.retries, r.offered),
        grouped(r.gave_up),
        than(r.gave_up, o.gave_up),
        grouped(o.gave_up),
    );
    let _ = writeln!(
        out,
        "The faults' price is latency: the 99th percentile was {} with retries, {} without, \
         and {} with no chaos.",
        ms(retries.p99),
        ms(once.p99),
        ms(calm.p99),
    );
    let refused = [r, o].map(|s| s.refused.breaker);
    if refused == [0, 0] {
        let _ = writeln!(
            out,
            "The breaker refused no attempt in either: it heard every injected failure, and \
             faults scattered at this rate never outweighed the successes enough to open it."
        );
    } else {
        let _ = writeln!(
            out,
            "The breaker refused {} attempts with retries ({:.2}%) and {} without ({:.2}%).",
            grouped(refused[0]),
            percent(refused[0], r.attempts()),
            grouped(refused[1]),
            percent(refused[1], o.attempts()),
        );
    }
    let lost = |s: &Sum| c.succeeded.saturating_sub(s.succeeded);
    if r.succeeded > o.succeeded {
        let _ = write!(
            out,
            "The retries absorbed the faults: the retrying client lost {} calls to them against \
             no chaos, the client without retries {}.",
            grouped(lost(&r)),
            grouped(lost(&o)),
        );
    } else {
        let _ = write!(
            out,
            "The retries did not absorb the faults: {} calls succeeded with them, {} without.",
            grouped(r.succeeded),
            grouped(o.succeeded),
        );
    }
    Some(out)
}
