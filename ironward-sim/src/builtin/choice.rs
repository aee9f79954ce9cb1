//! The figures a choice of breaker turns on, read around a backend's outage: what reached the
//! failing backend, how long after its recovery the breaker still refused, what failed after
//! it, and the goodput. Both recovery verdicts open with them, in one table.

use core::fmt::Write;
use core::time::Duration;

use crate::report::VariantRun;
use crate::scenario::Focus;
use crate::summary::Table;
use crate::words::grouped;

use super::verdict::stretch;

/// The variants the recovery scenarios compare, in their order: each breaker family, alone
/// and with the adaptive limiter in front of it.
pub(super) const FOUR: [&str; 4] = ["sre", "classic", "sre+limiter", "classic+limiter"];

/// The outage of `run`'s backend: the first phase of its schedule in which every call fails.
pub(super) fn outage(run: &VariantRun) -> Option<Focus> {
    let schedule = &run.variant.backend.schedule;
    schedule
        .iter()
        .find(|p| p.end > p.start && p.failure.is_some_and(|f| f.from >= 1.0 && f.to >= 1.0))
        .map(|p| Focus {
            from: p.start,
            to: p.end,
        })
}

/// One variant's figures around an outage.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Choice {
    /// Attempts that reached the backend while it failed.
    pub(super) during: u64,
    /// From the recovery to the end of the last interval in which the breaker refused an
    /// attempt: from then on it admits every attempt. `None` when it still refused in the
    /// run's last interval.
    pub(super) admits: Option<Duration>,
    /// Attempts that failed after the recovery: timed out, refused by the backend's full
    /// queue, or answered with an error. The flood a breaker lets onto a backend that is
    /// back but not yet able to serve it.
    pub(super) failed: u64,
    /// Attempts the client's breaker or limiter refused after the recovery.
    pub(super) refused: u64,
    /// Calls that succeeded after the recovery, a second.
    pub(super) goodput: f64,
}

impl Choice {
    /// The figures of `run` around `outage`, which ends before the run does.
    pub(super) fn of(run: &VariantRun, outage: Focus) -> Self {
        let end = run.variant.duration;
        let after = Focus {
            from: outage.to,
            to: Duration::ZERO,
        };
        let last = run
            .rows
            .iter()
            .rev()
            .find(|r| after.contains(r.start, end) && r.refused.breaker > 0);
        let admits = match last {
            None => Some(Duration::ZERO),
            Some(row) => Some(row.start + run.variant.interval)
                .filter(|&close| close < end)
                .map(|close| close - outage.to),
        };
        let sum = run.sum(after);
        let seconds = end.saturating_sub(outage.to).as_secs_f64();
        Self {
            during: run.sum(outage).admitted,
            admits,
            failed: sum.timed_out + sum.refused.queue + sum.failed,
            refused: sum.refused.breaker + sum.refused.limiter,
            goodput: if seconds > 0.0 {
                sum.succeeded as f64 / seconds
            } else {
                0.0
            },
        }
    }
}

/// Writes the table of the [`Choice`] figures of `runs` (named as [`FOUR`]) around `outage`,
/// and returns them.
pub(super) fn table(out: &mut String, runs: [&VariantRun; 4], outage: Focus) -> [Choice; 4] {
    let choices = runs.map(|r| Choice::of(r, outage));
    let after = Focus {
        from: outage.to,
        to: Duration::ZERO,
    };
    let mut table = Table::new(out, &FOUR);
    let _ = writeln!(table.out, "while the backend fails, {}:", stretch(outage));
    let cells = |f: fn(&Choice) -> String| choices.iter().map(f);
    table.line("  reached the backend", cells(|c| grouped(c.during)));
    let _ = writeln!(table.out, "after it recovers, {}:", stretch(after));
    table.line(
        "  breaker refusing none after",
        cells(|c| {
            c.admits
                .map_or("never".into(), |d| format!("{} s", d.as_secs_f64()))
        }),
    );
    table.line(
        "  attempts failed or timed out",
        cells(|c| grouped(c.failed)),
    );
    table.line(
        "  refused by breaker or limiter",
        cells(|c| grouped(c.refused)),
    );
    table.line(
        "  goodput, calls a second",
        cells(|c| format!("{:.1}", c.goodput)),
    );
    choices
}
