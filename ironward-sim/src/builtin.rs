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
    /// The outage's cold start: the SRE breaker with the adaptive limiter, against either
    /// breaker alone and the limiter alone.
    ColdRecovery,
    /// The backend's latency triples for two minutes under overload: the limit against
    /// Little's law, for ironward's limiter, Vegas and Gradient2.
    LatencyShift,
    /// Twice the capacity, of four criticalities: the limiter and none.
    Priorities,
}

impl Builtin {
    /// Every built-in scenario.
    pub const ALL: [Builtin; 8] = [
        Self::Outage,
        Self::Overload,
        Self::RetryStorm,
        Self::Quota,
        Self::Scale,
        Self::ColdRecovery,
        Self::LatencyShift,
        Self::Priorities,
    ];

    /// The name it runs by.
    pub fn name(self) -> &'static str {
        match self {
            Self::Outage => "outage",
            Self::Overload => "overload",
            Self::RetryStorm => "retry-storm",
            Self::Quota => "quota",
            Self::Scale => "scale",
            Self::ColdRecovery => "cold-recovery",
            Self::LatencyShift => "latency-shift",
            Self::Priorities => "priorities",
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
            Self::ColdRecovery => include_str!("../scenarios/cold-recovery.toml"),
            Self::LatencyShift => include_str!("../scenarios/latency-shift.toml"),
            Self::Priorities => include_str!("../scenarios/priorities.toml"),
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
            Self::ColdRecovery => cold_recovery(report),
            Self::LatencyShift => latency_shift(report),
            Self::Priorities => priorities(report),
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

/// How much slower than its latency the backend of `run` serves at `t`: the product of the
/// slowdowns of the schedule's phases in force then, as the backend reads them.
fn slowdown(run: &Run, t: Duration) -> f64 {
    run.variant.backend.conditions(ironward::clock::nanos(t)).1
}

/// How many calls inside the backend of `run` it completes within the client's timeout at
/// `t`, by Little's law: its workers, each finishing `timeout / service time` calls in the
/// time a caller waits.
pub(crate) fn in_time(run: &Run, t: Duration) -> u64 {
    let backend = &run.variant.backend;
    let service = backend.latency.mean().as_secs_f64() * slowdown(run, t);
    let timeout = run.variant.client.timeout.as_secs_f64();
    (f64::from(backend.workers) * timeout / service.max(f64::MIN_POSITIVE)) as u64
}

fn cold_recovery(report: &Report) -> Option<String> {
    let names = ["sre+limiter", "sre", "classic", "limiter"];
    let all = runs(report, names)?;
    let focus = report.focus;
    if let Some(refusal) = outside(&all, focus, "the recovery") {
        return Some(refusal);
    }
    let [b, s, c, l] = all.map(|r| r.sum(focus));
    let bound = in_time(all[0], focus.from);
    let list = |f: fn(&Sum) -> u64| {
        names
            .iter()
            .zip([b, s, c, l])
            .map(|(n, sum)| format!("{n} {}", grouped(f(&sum))))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut out = format!(
        "From {}:\n  most calls inside the backend: {};\n  attempts timed out: {};\n  calls \
         succeeded: {}.\n",
        stretch(focus),
        list(|s| s.peak_in_flight),
        list(|s| s.timed_out),
        list(|s| s.succeeded),
    );
    let _ = write!(
        out,
        "At {} s the backend serves {:.1} times slower than warm: its {} workers complete {} \
         calls inside the client's {} timeout. With the SRE breaker and the limiter it held \
         at most {} calls, {} that; it timed out {} attempts, {} the classic breaker's {}; \
         and {} calls succeeded, {} the SRE breaker's {} and {} the classic breaker's {}.",
        focus.from.as_secs_f64(),
        slowdown(all[0], focus.from),
        all[0].variant.backend.workers,
        grouped(bound),
        span(all[0].variant.client.timeout),
        grouped(b.peak_in_flight),
        if b.peak_in_flight <= bound {
            "within"
        } else {
            "more than"
        },
        grouped(b.timed_out),
        than(b.timed_out, c.timed_out),
        grouped(c.timed_out),
        grouped(b.succeeded),
        than(b.succeeded, s.succeeded),
        grouped(s.succeeded),
        than(b.succeeded, c.succeeded),
        grouped(c.succeeded),
    );
    Some(out)
}

/// The capacity Little's law gives the backend of `run`: it completes `workers / service`
/// calls a second, each taking `service`, so `workers` calls in flight keep it busy without a
/// queue, whatever its latency.
pub(crate) fn little(run: &Run) -> u64 {
    u64::from(run.variant.backend.workers)
}

/// For each shift of the backend's latency (each start and end of a slowdown inside the
/// run), the shift and how long after it `run`'s limit came within `tolerance` of
/// [`little`]'s capacity and stayed there until the next shift; `None` for never.
pub(crate) fn settled(run: &Run, tolerance: f64) -> Vec<(Duration, Option<Duration>)> {
    let end = run.variant.duration;
    let mut shifts: Vec<Duration> = run
        .variant
        .backend
        .schedule
        .iter()
        .filter(|p| p.slowdown.is_some())
        .flat_map(|p| [p.start, p.end])
        .filter(|&t| t < end)
        .collect();
    shifts.sort();
    shifts.dedup();
    let capacity = little(run) as f64;
    let near = |limit: u32| (f64::from(limit) - capacity).abs() <= tolerance * capacity;
    shifts
        .iter()
        .enumerate()
        .map(|(i, &at)| {
            let until = shifts.get(i + 1).copied().unwrap_or(end);
            let rows: Vec<_> = run
                .rows
                .iter()
                .filter(|r| r.start >= at && r.start < until)
                .collect();
            // The first row from which every row to the next shift is near the capacity.
            let from = (0..rows.len())
                .rev()
                .take_while(|&k| near(rows[k].limit))
                .last()
                .map(|k| rows[k].start - at);
            (at, from)
        })
        .collect()
}

fn latency_shift(report: &Report) -> Option<String> {
    let names = ["vegas-probe", "vegas-no-probe", "gradient2"];
    let all = runs(report, names)?;
    let focus = report.focus;
    if let Some(refusal) = outside(&all, focus, "the shifts") {
        return Some(refusal);
    }
    let capacity = little(all[0]);
    let mut out = format!(
        "The backend has {} workers: by Little's law {} calls in flight keep it busy \
         without a queue, at its normal latency and at three times it. The limit came within \
         10 % of that and stayed there:",
        all[0].variant.backend.workers,
        grouped(capacity)
    );
    for (name, run) in names.iter().zip(all) {
        let each: Vec<String> = settled(run, 0.1)
            .into_iter()
            .map(|(at, after)| match after {
                Some(after) => format!("{} after the shift at {} s", span(after), at.as_secs()),
                None => format!("never after the shift at {} s", at.as_secs()),
            })
            .collect();
        let last = run.rows.last().map_or(0, |r| r.limit);
        let _ = write!(
            out,
            "\n  {name}: {} (limit {} at the end);",
            each.join(", "),
            last
        );
    }
    let worst = all[0]
        .rows
        .iter()
        .filter(|r| focus.contains(r.start, all[0].variant.duration))
        .filter_map(|r| r.p99)
        .max();
    if let Some(worst) = worst {
        let timeout = all[0].variant.client.timeout;
        let _ = write!(
            out,
            "\nWith the probe, the worst p99 latency of an interval was {:.1} ms, {} the \
             client's {} timeout.",
            millis(worst),
            if worst < timeout {
                "under"
            } else {
                "not under"
            },
            span(timeout)
        );
    }
    Some(out)
}

/// The intervals of `run` within `focus` in which a sheddable attempt reached the backend
/// while a critical or critical_plus one was refused.
pub(crate) fn inversions(run: &Run, focus: Focus) -> Vec<Duration> {
    run.rows
        .iter()
        .filter(|r| focus.contains(r.start, run.variant.duration))
        .filter(|r| r.admitted_by[0] > 0 && r.refused_by[2] + r.refused_by[3] > 0)
        .map(|r| r.start)
        .collect()
}

fn priorities(report: &Report) -> Option<String> {
    let [limiter, none] = runs(report, ["limiter", "none"])?;
    let focus = report.focus;
    if let Some(refusal) = outside(&[limiter, none], focus, "the overload") {
        return Some(refusal);
    }
    let mut out = format!("From {}, attempts admitted and refused:", stretch(focus));
    for run in [limiter, none] {
        let Sum {
            admitted_by: admitted,
            refused_by: refused,
            ..
        } = run.sum(focus);
        let classes: Vec<String> = ironward::Criticality::ALL
            .into_iter()
            .rev()
            .map(|c| {
                format!(
                    "{c} {} / {}",
                    grouped(admitted[c.rank()]),
                    grouped(refused[c.rank()])
                )
            })
            .collect();
        let bad = inversions(run, focus).len();
        let _ = write!(
            out,
            "\n  {}: {}; {} interval{} admitted a sheddable attempt while refusing a critical \
             one.",
            run.variant.name,
            classes.join(", "),
            grouped(bad as u64),
            if bad == 1 { "" } else { "s" },
        );
    }
    Some(out)
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

    /// The built-in's report, with only the variants `keep` names run.
    fn run_of(builtin: Builtin, keep: &[&str]) -> Report {
        let mut scenario = builtin.scenario().unwrap();
        scenario
            .variants
            .retain(|v| keep.contains(&v.name.as_str()));
        assert_eq!(scenario.variants.len(), keep.len());
        scenario.run(|_| {})
    }

    // With the SRE breaker and the limiter, after a cold recovery: the backend holds no more
    // than it completes inside the client's timeout, no more attempts time out than with the
    // classic breaker, and at least as many calls succeed as with either breaker alone.
    #[test]
    fn cold_recovery_breaker_and_limiter_hold_what_the_backend_serves_in_time() {
        let report = run_of(Builtin::ColdRecovery, &["sre+limiter", "sre", "classic"]);
        let focus = report.focus;
        let both = report.run("sre+limiter").unwrap();
        let [b, s, c] =
            ["sre+limiter", "sre", "classic"].map(|n| report.run(n).unwrap().sum(focus));
        let bound = in_time(both, focus.from);
        assert_eq!(bound, 265, "50 workers at 4 × 47 ms in 1 s");
        assert!(b.peak_in_flight <= bound, "{} > {bound}", b.peak_in_flight);
        assert!(
            b.timed_out <= c.timed_out,
            "{} > {}",
            b.timed_out,
            c.timed_out
        );
        assert!(
            b.succeeded >= s.succeeded.max(c.succeeded),
            "{b:?} {s:?} {c:?}"
        );
        let verdict = Builtin::ColdRecovery.verdict(&report);
        assert_eq!(verdict, None, "the verdict needs the limiter alone too");
    }

    // After each shift the limit comes within 10 % of the capacity Little's law gives within
    // 30 s and stays there, and the p99 latency stays under the client's timeout.
    #[test]
    fn latency_shift_the_limit_settles_near_littles_law_after_each_shift() {
        let report = run_of(Builtin::LatencyShift, &["vegas-probe"]);
        let run = report.run("vegas-probe").unwrap();
        let shifts = settled(run, 0.1);
        assert_eq!(shifts.len(), 2);
        for (at, after) in shifts {
            let after = after.unwrap_or_else(|| panic!("never settled after {at:?}"));
            assert!(after <= Duration::from_secs(30), "{after:?} after {at:?}");
        }
        let timeout = run.variant.client.timeout;
        assert!(
            run.rows
                .iter()
                .filter_map(|r| r.p99)
                .all(|p99| p99 < timeout)
        );
    }

    #[test]
    fn latency_shift_vegas_as_netflix_runs_it_does_not_settle() {
        let report = run_of(Builtin::LatencyShift, &["vegas-no-probe"]);
        let shifts = settled(report.run("vegas-no-probe").unwrap(), 0.1);
        // The slower backend reads as a queue it cannot drain: the limit falls away.
        assert_eq!(shifts[0].1, None);
    }

    // At twice the capacity, no interval admits a sheddable attempt while refusing a
    // critical or critical_plus one; without the limiter every interval does.
    #[test]
    fn priorities_never_admit_the_sheddable_while_refusing_the_critical() {
        let report = Builtin::Priorities.scenario().unwrap().run(|_| {});
        let focus = report.focus;
        let limiter = report.run("limiter").unwrap();
        assert_eq!(inversions(limiter, focus), []);
        let refused: u64 = limiter.rows.iter().map(|r| r.refused_by[0]).sum();
        assert!(refused > 0, "the overload refuses the sheddable");
        let none = report.run("none").unwrap();
        assert!(inversions(none, focus).len() > 100);
        let verdict = Builtin::Priorities.verdict(&report).unwrap();
        assert!(
            verdict.contains("limiter: ") && verdict.contains("0 intervals"),
            "{verdict}"
        );
    }

    #[test]
    fn the_limiter_verdicts_refuse_a_run_that_ends_before_their_stretch() {
        let mut scenario = Builtin::Priorities.scenario().unwrap();
        for variant in &mut scenario.variants {
            variant.duration = Duration::from_secs(10);
        }
        let verdict = Builtin::Priorities.verdict(&scenario.run(|_| {})).unwrap();
        assert!(verdict.starts_with("No conclusion"), "{verdict}");
    }
}
