//! The scenarios that ship with the simulator, and what each one's figures say.

use core::cmp::Ordering;
use core::fmt::Write;
use core::time::Duration;

use crate::policy::BreakerPolicy;
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
    ///
    /// A verdict states only what the run measured. When a stretch it reads (the recovery,
    /// the overload, a whole window) is not inside the run, it says so and concludes
    /// nothing; otherwise each sentence is built from the figures and points the way they
    /// do, so a variant that contradicts the scenario's expectation is reported as such.
    pub fn verdict(self, report: &Report) -> Option<String> {
        let text = match self {
            Self::Outage => outage(report),
            Self::Overload => overload(report),
            Self::RetryStorm => retry_storm(report),
            Self::Quota => quota(report),
            Self::Scale => scale(report),
        }?;
        Some(wrap(&text, 92))
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

/// `text` with every line longer than `width` broken at spaces, each continuation indented
/// two spaces past its line.
fn wrap(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / width);
    for line in text.lines() {
        let indent = line.len() - line.trim_start().len();
        let mut current = String::from(&line[..indent]);
        for word in line.split_whitespace() {
            let fresh = current.trim().is_empty();
            if !fresh && current.chars().count() + 1 + word.chars().count() > width {
                out.push_str(&current);
                out.push('\n');
                current = " ".repeat(indent + 2);
            } else if !fresh {
                current.push(' ');
            }
            current.push_str(word);
        }
        out.push_str(&current);
        out.push('\n');
    }
    out.truncate(out.trim_end().len());
    out
}

/// A stretch as a sentence says it: "120 s to 130 s", "120 s to the end".
fn stretch(focus: Focus) -> String {
    let at = |d: Duration| format!("{} s", d.as_secs_f64());
    match focus.to.is_zero() {
        true => format!("{} to the end", at(focus.from)),
        false => format!("{} to {}", at(focus.from), at(focus.to)),
    }
}

/// The refusal to conclude when `focus` is not inside every run a comparison reads, or
/// `None` when it is: figures summed over a stretch the run never reached are zeros that
/// measured nothing, and a conclusion drawn from them would be made up.
fn outside(runs: &[&Run], focus: Focus, what: &str) -> Option<String> {
    let short = runs
        .iter()
        .filter(|r| !r.covers(focus))
        .min_by_key(|r| r.variant.duration)?;
    let end = short.variant.duration;
    let who = match runs.iter().all(|r| r.variant.duration == end) {
        true => "it",
        false => short.variant.name.as_str(),
    };
    Some(format!(
        "No conclusion: the comparison reads {what}, {}, which is not inside the run ({who} \
         ends at {} s).",
        stretch(focus),
        end.as_secs_f64(),
    ))
}

/// How `a` stands against `b`, as a count: "more than", "fewer than" or "as many as".
fn than(a: u64, b: u64) -> &'static str {
    match a.cmp(&b) {
        Ordering::Greater => "more than",
        Ordering::Less => "fewer than",
        Ordering::Equal => "as many as",
    }
}

fn outage(report: &Report) -> Option<String> {
    let [sre, classic, none] = runs(report, ["sre", "classic", "none"])?;
    let focus = report.focus;
    if let Some(refusal) = outside(&[sre, classic, none], focus, "the recovery") {
        return Some(refusal);
    }
    let after = Focus {
        from: focus.from,
        to: Duration::ZERO,
    };
    let [s, c, n] = [sre, classic, none].map(|r| r.sum(focus));
    let [rs, rc, rn] = [sre, classic, none].map(|r| rise(r, focus));
    let [ls, lc, ln] = [sre, classic, none].map(|r| r.sum(after));
    let from = focus.from.as_secs_f64();
    let mut out = String::new();
    let back =
        sre.variant.backend.schedule.iter().any(|p| {
            p.end == focus.from && p.failure.is_some_and(|f| f.from >= 1.0 && f.to >= 1.0)
        });
    if back {
        let _ = writeln!(out, "The backend comes back from its outage at {from} s.");
    }
    let _ = write!(
        out,
        "From {}:\n  \
         most calls inside the backend: classic {}, sre {}, none {};\n  \
         largest rise in attempts reaching it from one interval to the next: classic {}, \
         sre {}, none {}.\n\
         From {from} s to the end: calls succeeded: classic {}, sre {}, none {};\n  \
         attempts timed out: classic {}, sre {}, none {}.\n",
        stretch(focus),
        grouped(c.peak_in_flight),
        grouped(s.peak_in_flight),
        grouped(n.peak_in_flight),
        grouped(rc),
        grouped(rs),
        grouped(rn),
        grouped(lc.succeeded),
        grouped(ls.succeeded),
        grouped(ln.succeeded),
        grouped(lc.timed_out),
        grouped(ls.timed_out),
        grouped(ln.timed_out),
    );
    let fill = (c.peak_in_flight.cmp(&s.peak_in_flight), rc.cmp(&rs));
    let _ = match fill {
        (Ordering::Greater, Ordering::Greater) | (Ordering::Less, Ordering::Less) => {
            let (fast, slow) = match fill.0 {
                Ordering::Greater => (
                    ("classic", c.peak_in_flight, rc),
                    ("sre", s.peak_in_flight, rs),
                ),
                _ => (
                    ("sre", s.peak_in_flight, rs),
                    ("classic", c.peak_in_flight, rc),
                ),
            };
            write!(
                out,
                "With {} the recovering backend was loaded faster than with {}: it filled to \
                 {} calls against {}, its load rising by up to {} from one interval to the \
                 next against {}.",
                fast.0,
                slow.0,
                grouped(fast.1),
                grouped(slow.1),
                grouped(fast.2),
                grouped(slow.2)
            )
        }
        (Ordering::Equal, Ordering::Equal) => {
            write!(
                out,
                "With classic and with sre the recovering backend was loaded alike."
            )
        }
        _ => write!(
            out,
            "The figures are mixed: classic filled the backend to {} calls against sre's {}, \
             but its load rose by up to {} from one interval to the next against {}.",
            grouped(c.peak_in_flight),
            grouped(s.peak_in_flight),
            grouped(rc),
            grouped(rs)
        ),
    };
    let policies = (
        classic.variant.policies.breaker,
        sre.variant.policies.breaker,
    );
    if let (Some(BreakerPolicy::Classic(_)), Some(BreakerPolicy::Sre(sre_policy))) = policies {
        if fill == (Ordering::Greater, Ordering::Greater) {
            let _ = write!(
                out,
                " Closing at once, the classic breaker hands the cold backend the whole \
                 load; the SRE breaker's share grows with its successes."
            );
        }
        if ls.timed_out > lc.timed_out {
            let _ = write!(
                out,
                " After the recovery more attempts timed out with the SRE breaker than with \
                 the classic one ({} against {}): it lets through up to k={} times what \
                 succeeds, more than a backend still warming serves in time.",
                grouped(ls.timed_out),
                grouped(lc.timed_out),
                sre_policy.k
            );
        }
    }
    for (name, l) in [("classic", lc), ("sre", ls)] {
        let _ = write!(
            out,
            "\nFrom {from} s on, {name} timed out {} attempts, {} none's {}, and {} calls \
             succeeded, {} none's {}.",
            grouped(l.timed_out),
            than(l.timed_out, ln.timed_out),
            grouped(ln.timed_out),
            grouped(l.succeeded),
            than(l.succeeded, ln.succeeded),
            grouped(ln.succeeded),
        );
    }
    Some(out)
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
    if let Some(refusal) = outside(&[shedder, none], focus, "the overload") {
        return Some(refusal);
    }
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
        (each.get(each.len() / 2).copied(), each.last().copied())
    };
    let ms = |d: Option<Duration>| d.map_or("-".into(), |d| format!("{:.0} ms", millis(d)));
    let ((ps, ws), (pn, wn)) = (p99(shedder), p99(none));
    let (gs, gn) = (s.succeeded as f64 / seconds, n.succeeded as f64 / seconds);
    let mut out = format!(
        "From {}: goodput: shedder {gs:.0} calls/s, none {gn:.0} calls/s\n  \
         ({} and {} calls succeeded, of {} offered);\n  \
         99th-percentile latency of the successes, in the median interval:\n    \
         shedder {} (worst {}), none {} (worst {});\n  \
         attempts timed out: shedder {}, none {};\n  \
         refused by the shedder: {}.\n",
        stretch(focus),
        grouped(s.succeeded),
        grouped(n.succeeded),
        grouped(n.offered),
        ms(ps),
        ms(ws),
        ms(pn),
        ms(wn),
        grouped(s.timed_out),
        grouped(n.timed_out),
        grouped(s.refused.shedder),
    );
    let _ = write!(
        out,
        "The shedder kept {} goodput than none ({gs:.0} against {gn:.0} calls/s), and {} \
         attempts timed out with it, {} the {} without it.",
        match s.succeeded.cmp(&n.succeeded) {
            Ordering::Greater => "more",
            Ordering::Less => "less",
            Ordering::Equal => "no more",
        },
        grouped(s.timed_out),
        than(s.timed_out, n.timed_out),
        grouped(n.timed_out),
    );
    if let (Some(ps), Some(pn)) = (ps, pn) {
        let way = match ps.cmp(&pn) {
            Ordering::Less => "lower than",
            Ordering::Greater => "higher than",
            Ordering::Equal => "the same as",
        };
        let _ = write!(
            out,
            " Its median interval's 99th percentile was {way} none's ({} against {}).",
            ms(Some(ps)),
            ms(Some(pn))
        );
    }
    if s.refused.shedder == 0 {
        let _ = write!(out, " The shedder refused nothing.");
    } else if s.succeeded > n.succeeded && s.timed_out < n.timed_out {
        let _ = write!(
            out,
            " Refusing at once what the backend could not serve in time, it spared the work \
             that would have finished after its caller gave up."
        );
    }
    Some(out)
}

fn retry_storm(report: &Report) -> Option<String> {
    let [rigid, full, decorrelated] = runs(report, ["rigid", "full", "decorrelated"])?;
    let all = [rigid, full, decorrelated];
    let [r, f, d] = all.map(Run::total);
    if [r, f, d].iter().any(|t| t.offered == 0) {
        return Some("No conclusion: no call arrived in some variant's run.".into());
    }
    let done = |run: &Run, sum: &Sum| match (run.last_end, sum.gave_up, run.unfinished) {
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
    let ended = |run: &Run| run.last_end.unwrap_or(Duration::MAX);
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

fn quota(report: &Report) -> Option<String> {
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
fn limit(run: &Run, window: Duration) -> String {
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
