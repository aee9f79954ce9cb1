//! The scenarios that ship with the simulator, and what each one's figures say.

use core::time::Duration;

use crate::report::{Report, Run, Sum, millis};
use crate::scenario::{Focus, Scenario, ScenarioError};
use crate::summary::grouped;

/// A scenario that ships with the simulator, runnable by name.
///
/// Each is a TOML file in the crate's `scenarios/` folder, embedded in the binary and read by
/// [`Scenario::from_toml`] like any other: `ironward-sim show NAME` prints it as a starting
/// point for a scenario of one's own. Each has a [`verdict`](Builtin::verdict) that states
/// its comparison in figures.
///
/// # Examples
///
/// ```
/// use ironward_sim::Builtin;
///
/// let quota = Builtin::from_name("quota").unwrap();
/// let scenario = quota.scenario().unwrap();
/// let names: Vec<&str> = scenario.variants.iter().map(|v| v.name.as_str()).collect();
/// assert_eq!(names, ["bucket", "sliding", "period"]);
///
/// let report = scenario.run(|_| {});
/// let (sliding, period) = (report.run("sliding").unwrap(), report.run("period").unwrap());
/// // A fixed period lets a second quota through across its boundary; the exact window never.
/// assert!(sliding.peak_window <= 100);
/// assert!(period.peak_window > 150);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Builtin {
    /// A backend fails for a minute and comes back cold: the SRE breaker, a classic breaker
    /// and none, on the same traffic.
    Outage,
    /// 1.4 times the backend's capacity for three minutes: the adaptive shedder and none.
    Overload,
    /// A thousand synchronised clients retry: Rigid, Full and Decorrelated jitter.
    RetryStorm,
    /// A quota of 100 a second against spikes across the period boundary: Bucket, Sliding
    /// and Period.
    Quota,
    /// An hour of 10,000 calls a second through a breaker and a shedder.
    Scale,
}

impl Builtin {
    /// Every built-in scenario.
    pub const ALL: [Builtin; 5] = [
        Self::Outage,
        Self::Overload,
        Self::RetryStorm,
        Self::Quota,
        Self::Scale,
    ];

    /// The name it runs by.
    pub fn name(self) -> &'static str {
        match self {
            Self::Outage => "outage",
            Self::Overload => "overload",
            Self::RetryStorm => "retry-storm",
            Self::Quota => "quota",
            Self::Scale => "scale",
        }
    }

    /// The built-in scenario called `name`.
    pub fn from_name(name: &str) -> Result<Self, ScenarioError> {
        Self::ALL
            .into_iter()
            .find(|b| b.name() == name)
            .ok_or_else(|| ScenarioError::Unknown(name.into()))
    }

    /// The scenario file, comments and all.
    pub fn text(self) -> &'static str {
        match self {
            Self::Outage => include_str!("../scenarios/outage.toml"),
            Self::Overload => include_str!("../scenarios/overload.toml"),
            Self::RetryStorm => include_str!("../scenarios/retry-storm.toml"),
            Self::Quota => include_str!("../scenarios/quota.toml"),
            Self::Scale => include_str!("../scenarios/scale.toml"),
        }
    }

    /// The scenario, read from [`text`](Builtin::text). Every built-in reads (a test says
    /// so); the `Result` is [`Scenario::from_toml`]'s.
    pub fn scenario(self) -> Result<Scenario, ScenarioError> {
        Scenario::from_toml(self.text())
    }

    /// The comparison the scenario exists to make, stated in figures from `report`; `None`
    /// when the report lacks a variant the comparison needs.
    pub fn verdict(self, report: &Report) -> Option<String> {
        match self {
            Self::Outage => outage(report),
            Self::Overload => overload(report),
            Self::RetryStorm => retry_storm(report),
            Self::Quota => quota(report),
            Self::Scale => scale(report),
        }
    }
}

/// The named runs, or `None` if one is missing.
fn runs<'a, const N: usize>(report: &'a Report, names: [&str; N]) -> Option<[&'a Run; N]> {
    let mut out = [report.runs.first()?; N];
    for (slot, name) in out.iter_mut().zip(names) {
        *slot = report.run(name)?;
    }
    Some(out)
}

fn outage(report: &Report) -> Option<String> {
    let [sre, classic, none] = runs(report, ["sre", "classic", "none"])?;
    let focus = report.focus;
    let after = Focus {
        from: focus.from,
        to: Duration::ZERO,
    };
    let [s, c, n] = [sre, classic, none].map(|r| r.sum(focus));
    let [rs, rc, rn] = [sre, classic, none].map(|r| rise(r, focus));
    let [ls, lc, ln] = [sre, classic, none].map(|r| r.sum(after));
    Some(format!(
        "The backend comes back at {} s, cold. In the {} after:\n  \
         most calls inside the backend: classic breaker {}, SRE breaker {}, no breaker {};\n  \
         largest rise in attempts reaching it from one second to the next: classic {}, SRE {}, \
         none {}.\n\
         From {} s to the end: calls succeeded: classic {}, SRE {}, none {};\n  \
         attempts timed out: classic {}, SRE {}, none {}.\n\
         Closing at once, the classic breaker sends the whole load to the cold backend; the SRE\n\
         breaker lets through a share that grows with its successes, up to half as much again\n\
         as succeeds (k = 1.5), which a backend still warming may not keep up with.",
        focus.from.as_secs(),
        span(focus.to.saturating_sub(focus.from)),
        grouped(c.peak_in_flight),
        grouped(s.peak_in_flight),
        grouped(n.peak_in_flight),
        grouped(rc),
        grouped(rs),
        grouped(rn),
        focus.from.as_secs(),
        grouped(lc.succeeded),
        grouped(ls.succeeded),
        grouped(ln.succeeded),
        grouped(lc.timed_out),
        grouped(ls.timed_out),
        grouped(ln.timed_out),
    ))
}

/// The largest rise, from one interval to the next, in attempts reaching the backend, over
/// the intervals that start within `focus`: how sudden the load on the backend became.
pub(crate) fn rise(run: &Run, focus: Focus) -> u64 {
    run.rows
        .windows(2)
        .filter(|w| focus.contains(w[1].start, run.variant.duration))
        .map(|w| w[1].admitted.saturating_sub(w[0].admitted))
        .max()
        .unwrap_or(0)
}

fn overload(report: &Report) -> Option<String> {
    let [shedder, none] = runs(report, ["shedder", "none"])?;
    let focus = report.focus;
    let to = if focus.to.is_zero() {
        shedder.variant.duration
    } else {
        focus.to
    };
    let seconds = to.saturating_sub(focus.from).as_secs_f64().max(1e-9);
    let [s, n] = [shedder, none].map(|r| r.sum(focus));
    let p99 = |run: &Run| {
        let mut each: Vec<Duration> = run
            .rows
            .iter()
            .filter(|r| focus.contains(r.start, run.variant.duration))
            .filter_map(|r| r.p99)
            .collect();
        each.sort();
        let ms = |d: Option<&Duration>| d.map_or("-".into(), |d| format!("{:.0} ms", millis(*d)));
        format!(
            "{} (worst {})",
            ms(each.get(each.len() / 2)),
            ms(each.last())
        )
    };
    Some(format!(
        "Under the overload ({} s to {} s), goodput: shedder {:.0} calls/s, none {:.0} calls/s\n  \
         ({} and {} calls succeeded, of {} offered);\n  \
         99th-percentile latency of the successes, in the median second:\n    \
         shedder {}, none {};\n  \
         attempts timed out: shedder {}, none {} (work the backend did for nobody).\n\
         Without a shedder the deep queue fills and every call waits longer than its caller;\n\
         with one, the backend refuses at once what it could not serve in time.",
        focus.from.as_secs(),
        to.as_secs(),
        s.succeeded as f64 / seconds,
        n.succeeded as f64 / seconds,
        grouped(s.succeeded),
        grouped(n.succeeded),
        grouped(n.offered),
        p99(shedder),
        p99(none),
        grouped(s.timed_out),
        grouped(n.timed_out),
    ))
}

fn retry_storm(report: &Report) -> Option<String> {
    let [rigid, full, decorrelated] = runs(report, ["rigid", "full", "decorrelated"])?;
    let [r, f, d] = [rigid, full, decorrelated].map(Run::total);
    let done = |run: &Run, sum: &Sum| match (run.last_end, sum.gave_up + run.unfinished) {
        (Some(end), 0) => format!("{:.2} s", end.as_secs_f64()),
        (Some(end), left) => format!("{:.2} s ({} never succeeded)", end.as_secs_f64(), left),
        (None, _) => "-".into(),
    };
    Some(format!(
        "{} synchronised calls. Total attempts: Rigid {}, Full {}, Decorrelated {}.\n  \
         Last call done at: Rigid {}, Full {}, Decorrelated {}.\n  \
         With no jitter the retries collide again and again; jitter spreads them so that\n  \
         fewer attempts find the backend full.",
        grouped(r.offered),
        grouped(r.attempts()),
        grouped(f.attempts()),
        grouped(d.attempts()),
        done(rigid, &r),
        done(full, &f),
        done(decorrelated, &d),
    ))
}

fn quota(report: &Report) -> Option<String> {
    let [bucket, sliding, period] = runs(report, ["bucket", "sliding", "period"])?;
    let window = bucket.variant.window;
    Some(format!(
        "The most calls reaching the backend in any {}: Bucket {}, Sliding {}, Period {}.\n  \
         A fixed period resets at its boundary, so a client that spends the quota just before\n  \
         it spends another just after: up to twice the quota in a moment. The exact sliding\n  \
         window never lets more than the quota through in any window; the bucket lets its\n  \
         burst through, then its rate.",
        span(window),
        grouped(bucket.peak_window),
        grouped(sliding.peak_window),
        grouped(period.peak_window),
    ))
}

fn scale(report: &Report) -> Option<String> {
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

fn span(d: Duration) -> String {
    crate::summary::span(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_reads_and_is_found_by_its_name() {
        for builtin in Builtin::ALL {
            let scenario = builtin.scenario().unwrap();
            assert_eq!(scenario.name, builtin.name());
            assert_eq!(Builtin::from_name(builtin.name()), Ok(builtin));
        }
        assert_eq!(
            Builtin::from_name("nope"),
            Err(ScenarioError::Unknown("nope".into()))
        );
    }

    #[test]
    fn a_verdict_needs_its_variants() {
        let report = Scenario::default().run(|_| {});
        assert_eq!(Builtin::Outage.verdict(&report), None);
        assert!(Builtin::Scale.verdict(&report).is_some());
    }
}
