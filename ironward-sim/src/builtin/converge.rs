//! The verdicts on convergence (`sharing`, `mmc`, `capacity-halves`, `bimodal`, `drops`,
//! `runaway`): each limiter's limit against the backend's Little's-law optimum, in one table.
//!
//! The bar is the one a new user holds a default to: from any start, within 2× of the
//! optimum in 10 s and within ±25 % (or one call) after 30 s; a 99th percentile of the calls
//! it admits at most twice the backend's unloaded one; at least 90 % of the backend's
//! capacity served; and a limit that does not run away. Each is worked out per stretch of a constant optimum
//! (a backend whose cores halve has three), the worst stretch counting.

use core::fmt::Write;
use core::time::Duration;

use crate::optimum::{capacity, optimum, shifts};
use crate::report::{Report, Row, VariantRun, millis};
use crate::summary::Table;

use super::verdict::span;

/// Within this factor of the optimum counts as near it.
pub(super) const NEAR: f64 = 2.0;
/// How soon the limit must be near the optimum.
pub(super) const REACH: Duration = Duration::from_secs(10);
/// From how long into a stretch the limit must be within [`ERROR`] of the optimum.
pub(super) const SETTLE: Duration = Duration::from_secs(30);
/// The largest error allowed once settled, as a share of the optimum; a limit one call
/// from the optimum is allowed too, since a whole limit can come no nearer to a small one
/// (at an optimum of 1, ±25 % would forbid the one step up any limiter needs to find that
/// capacity has come back).
pub(super) const ERROR: f64 = 0.25;
/// The largest 99th percentile allowed, as a multiple of the unloaded one.
pub(super) const P99: f64 = 2.0;
/// The least goodput allowed, as a share of the capacity.
pub(super) const GOODPUT: f64 = 0.9;

/// One run's figures against the optimum.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Convergence {
    /// How long after a stretch starts the limit is within [`NEAR`]× of the optimum and
    /// stays so to the stretch's end, the worst stretch's; `None` for never.
    pub(crate) reach: Option<Duration>,
    /// The largest error of the limit against the optimum, as a share of it, over the
    /// intervals at least [`SETTLE`] into their stretch; `None` when none is.
    pub(crate) error: Option<f64>,
    /// Whether the limit in each of those intervals is within [`ERROR`] of the optimum or
    /// within one call of it.
    pub(crate) settled: bool,
    /// The 99th percentile of the successes in the median one of those intervals, over
    /// the backend's unloaded 99th percentile.
    pub(crate) p99: Option<f64>,
    /// The successes a second in those intervals, over what the backend serves at most.
    pub(crate) goodput: Option<f64>,
    /// Whether the limit ended above [`NEAR`]× the optimum and above where it was halfway
    /// through the last stretch: still climbing, away from it.
    pub(crate) runaway: bool,
    /// The limit in the last interval.
    pub(crate) last: u32,
}

impl Convergence {
    /// The figures of `run`, which ran a limiter.
    pub(crate) fn of(run: &VariantRun) -> Self {
        let (backend, end) = (&run.variant.backend, run.variant.duration);
        let interval = run.variant.interval;
        let starts = shifts(backend, end);
        let stretch = |row: &Row| {
            let at = starts.iter().rposition(|&s| s <= row.start).unwrap_or(0);
            (starts[at], starts.get(at + 1).copied().unwrap_or(end))
        };
        let near = |row: &Row| {
            let (limit, best) = (f64::from(row.limit), optimum(backend, row.start));
            limit <= best * NEAR && limit * NEAR >= best
        };
        let mut reach = Some(Duration::ZERO);
        for (i, &from) in starts.iter().enumerate() {
            let to = starts.get(i + 1).copied().unwrap_or(end);
            let rows: Vec<&Row> = run
                .rows
                .iter()
                .filter(|r| r.start >= from && r.start < to)
                .collect();
            let first = (0..rows.len()).rev().take_while(|&k| near(rows[k])).last();
            let after = first.map(|k| rows[k].start + interval - from);
            reach = reach.zip(after).map(|(a, b)| a.max(b));
        }
        let settled: Vec<&Row> = run
            .rows
            .iter()
            .filter(|r| r.start >= stretch(r).0 + SETTLE)
            .collect();
        let error = settled
            .iter()
            .map(|r| (f64::from(r.limit) / optimum(backend, r.start) - 1.0).abs())
            .reduce(f64::max);
        // A limit of 0 is a run without a limiter, never within a call of anything.
        let within = settled.iter().all(|r| {
            let (limit, best) = (f64::from(r.limit), optimum(backend, r.start));
            r.limit > 0 && ((limit / best - 1.0).abs() <= ERROR || (limit - best).abs() <= 1.0)
        });
        let mut p99s: Vec<Duration> = settled.iter().filter_map(|r| r.p99).collect();
        p99s.sort();
        let unloaded = backend.latency.p99().as_secs_f64();
        let p99 = p99s.get(p99s.len() / 2).map(|p| p.as_secs_f64() / unloaded);
        let served: u64 = settled.iter().map(|r| r.succeeded).sum();
        let most: f64 = settled
            .iter()
            .map(|r| capacity(backend, r.start) * interval.as_secs_f64())
            .sum();
        let goodput = (most > 0.0).then(|| served as f64 / most);
        let last = run.rows.last().map_or(0, |r| r.limit);
        let (from, _) = run.rows.last().map_or((Duration::ZERO, end), stretch);
        let halfway = from + (end - from) / 2;
        let middle = run
            .rows
            .iter()
            .find(|r| r.start >= halfway)
            .map_or(0, |r| r.limit);
        let best = optimum(backend, end.saturating_sub(interval));
        Self {
            reach,
            error,
            settled: error.is_some() && within,
            p99,
            goodput,
            runaway: f64::from(last) > best * NEAR && last > middle,
            last,
        }
    }

    /// Which of the five verdicts the run meets: near in time, settled, p99, goodput, no
    /// runaway.
    pub(crate) fn met(&self) -> [bool; 5] {
        [
            self.reach.is_some_and(|r| r <= REACH),
            self.settled,
            self.p99.is_some_and(|p| p <= P99),
            self.goodput.is_some_and(|g| g >= GOODPUT),
            !self.runaway,
        ]
    }
}

/// The optimum as a sentence: "1 in flight", "10 in flight, 5 from 40 s, 10 from 80 s".
fn optimum_words(run: &VariantRun) -> String {
    let backend = &run.variant.backend;
    let figure = |v: f64| format!("{}", (v * 100.0).round() / 100.0);
    shifts(backend, run.variant.duration)
        .into_iter()
        .enumerate()
        .map(|(i, at)| match i {
            0 => format!("{} in flight", figure(optimum(backend, at))),
            _ => format!("{} from {} s", figure(optimum(backend, at)), at.as_secs()),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn convergence(report: &Report) -> Option<String> {
    let runs: Vec<&VariantRun> = report
        .runs
        .iter()
        .filter(|r| r.variant.policies.limiter.is_some())
        .collect();
    let first = runs.first()?;
    if first.variant.duration < SETTLE + first.variant.interval {
        return Some(format!(
            "No conclusion: the verdicts read the limit from {} on, which is not inside the run \
             (it ends at {} s).",
            span(SETTLE),
            first.variant.duration.as_secs_f64()
        ));
    }
    let backend = &first.variant.backend;
    let mut out = format!(
        "The backend serves {:.0} calls/s, each taking {:.1} ms unloaded (99th percentile \
         {:.1} ms): by Little's law, the optimum limit is {}.\n",
        capacity(backend, Duration::ZERO),
        millis(backend.latency.mean()),
        millis(backend.latency.p99()),
        optimum_words(first),
    );
    let figures: Vec<Convergence> = runs.iter().map(|r| Convergence::of(r)).collect();
    let names: Vec<&str> = runs.iter().map(|r| r.variant.name.as_str()).collect();
    let mut table = Table::new(&mut out, &names);
    let cells = |f: &dyn Fn(&Convergence) -> String| figures.iter().map(f).collect::<Vec<_>>();
    let mark = |ok: bool| if ok { "" } else { " ✗" };
    table.line(
        &format!("within {NEAR}× after (≤ {})", span(REACH)),
        cells(&|c| {
            let text = c.reach.map_or("never".into(), span);
            format!("{text}{}", mark(c.met()[0]))
        })
        .into_iter(),
    );
    table.line(
        &format!(
            "worst error from {} (≤ {:.0} % or 1 call)",
            span(SETTLE),
            ERROR * 100.0
        ),
        cells(&|c| match c.error {
            Some(e) => format!("{:.0} %{}", e * 100.0, mark(c.met()[1])),
            None => "-".into(),
        })
        .into_iter(),
    );
    table.line(
        &format!("p99 / unloaded p99 (≤ {P99})"),
        cells(&|c| match c.p99 {
            Some(p) => format!("{p:.1}×{}", mark(c.met()[2])),
            None => "- ✗".into(),
        })
        .into_iter(),
    );
    table.line(
        &format!("goodput / capacity (≥ {:.0} %)", GOODPUT * 100.0),
        cells(&|c| match c.goodput {
            Some(g) => format!("{:.0} %{}", g * 100.0, mark(c.met()[3])),
            None => "-".into(),
        })
        .into_iter(),
    );
    table.line(
        "runaway",
        cells(&|c| {
            if c.runaway {
                "yes ✗".into()
            } else {
                "no".into()
            }
        })
        .into_iter(),
    );
    table.line(
        "limit at the end",
        cells(&|c| c.last.to_string()).into_iter(),
    );
    table.line(
        "verdicts met",
        cells(&|c| format!("{} of 5", c.met().iter().filter(|&&m| m).count())).into_iter(),
    );
    let all: Vec<&str> = names
        .iter()
        .zip(&figures)
        .filter(|(_, c)| c.met().iter().all(|&m| m))
        .map(|(n, _)| *n)
        .collect();
    let _ = write!(
        out,
        "{}",
        match all.as_slice() {
            [] => "No limiter met every verdict.".to_string(),
            some => format!("Every verdict met by: {}.", some.join(", ")),
        }
    );
    Some(out)
}
