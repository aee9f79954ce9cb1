//! The verdicts on a backend's recovery from an outage: `outage` (the two breaker families)
//! and `cold-recovery` (what the adaptive limiter adds to either). Both compare the same four
//! variants ([`FOUR`]) and open with the same table ([`choice::table`]).

use core::cmp::Ordering;
use core::fmt::Write;
use core::time::Duration;

use crate::policy::BreakerPolicy;
use crate::report::{Report, Sum, VariantRun};
use crate::scenario::Focus;
use crate::words::grouped;

use super::choice::{self, Choice, FOUR};
use super::verdict::{outside, runs, span, stretch, than};

/// What both verdicts start from: the four runs, the backend's outage, the table of the
/// figures a choice of breaker turns on, and those figures.
struct Opening<'a> {
    runs: [&'a VariantRun; 4],
    outage: Focus,
    text: String,
    choices: [Choice; 4],
}

/// The opening of a recovery verdict; `None` when a variant is missing, and `Err` with the
/// refusal to conclude when the stretches it reads are not inside the run or the backend
/// has no outage to recover from.
fn opening(report: &Report) -> Option<Result<Opening<'_>, String>> {
    let runs = runs(report, FOUR)?;
    if let Some(refusal) = outside(&runs, report.focus, "the recovery") {
        return Some(Err(refusal));
    }
    let outages = runs.map(choice::outage);
    let Some(outage) = outages[0].filter(|o| outages.iter().all(|p| *p == Some(*o))) else {
        return Some(Err(
            "No conclusion: the comparison reads a backend's recovery from an \
                         outage, a phase of its schedule in which every call fails, and the \
                         variants' backends have none, or not the same one."
                .into(),
        ));
    };
    let after = Focus {
        from: outage.to,
        to: Duration::ZERO,
    };
    if let Some(refusal) = outside(&runs, after, "the recovery") {
        return Some(Err(refusal));
    }
    let mut text = String::new();
    let choices = choice::table(&mut text, runs, outage);
    Some(Ok(Opening {
        runs,
        outage,
        text,
        choices,
    }))
}

/// "sre 81, classic 550, sre+limiter 78, classic+limiter 81": a figure of each variant.
fn each(figures: [u64; 4]) -> String {
    let named = FOUR.iter().zip(figures);
    let cells: Vec<String> = named.map(|(n, f)| format!("{n} {}", grouped(f))).collect();
    cells.join(", ")
}

pub(super) fn outage(report: &Report) -> Option<String> {
    let Opening {
        runs,
        outage: _,
        mut text,
        choices,
    } = match opening(report)? {
        Ok(opening) => opening,
        Err(refusal) => return Some(refusal),
    };
    let out = &mut text;
    let focus = report.focus;
    let [s, c, ..] = runs.map(|r| r.sum(focus));
    let rises = runs.map(|r| rise(r, focus));
    let (rs, rc) = (rises[0], rises[1]);
    let _ = writeln!(
        out,
        "From {}: most calls inside the backend: {}; largest rise in attempts reaching it from \
         one interval to the next: {}.",
        stretch(focus),
        each(runs.map(|r| r.sum(focus).peak_in_flight)),
        each(rises),
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
    let [cs, cc, ..] = choices;
    let policies = (
        runs[1].variant.policies.breaker,
        runs[0].variant.policies.breaker,
    );
    let families = match policies {
        (Some(BreakerPolicy::Classic(_)), Some(BreakerPolicy::Sre(sre))) => Some(sre),
        _ => None,
    };
    if families.is_some() && fill == (Ordering::Greater, Ordering::Greater) {
        let _ = write!(
            out,
            " Closing at once, the classic breaker hands the cold backend the whole load; the \
             SRE breaker's share grows with its successes."
        );
    }
    let _ = write!(
        out,
        "\nWhile the backend failed, classic let {} attempts reach it, {}.",
        grouped(cc.during),
        against(cc.during, "sre", cs.during),
    );
    if families.is_some() && cc.during < cs.during {
        let _ = write!(
            out,
            " Open, the classic breaker lets through its probes alone; the SRE breaker refuses \
             a share that grows as failures fill its window, and never every call."
        );
    }
    let _ = write!(
        out,
        " After the recovery {} attempts failed with classic, {}.",
        grouped(cc.failed),
        against(cc.failed, "sre", cs.failed),
    );
    if let Some(sre) = families.filter(|_| cs.failed > cc.failed) {
        let _ = write!(
            out,
            " The SRE breaker lets through up to k={} times what succeeds, more than a backend \
             still warming serves in time.",
            sre.k
        );
    }
    limiter_pairs(out, &choices);
    Some(text)
}

/// Each breaker with the limiter against the same breaker without it, in failed attempts and
/// goodput after the recovery.
fn limiter_pairs(out: &mut String, choices: &[Choice; 4]) {
    for (alone, both) in [(0, 2), (1, 3)] {
        let (a, b) = (choices[alone], choices[both]);
        let _ = write!(
            out,
            "\nAfter the recovery {} had {} failed attempts, {}, and a goodput of {:.1} calls a \
             second against {:.1}.",
            FOUR[both],
            grouped(b.failed),
            against(b.failed, FOUR[alone], a.failed),
            b.goodput,
            a.goodput,
        );
    }
}

/// How `a` stands against `other`'s figure `b`: "fewer than sre's 5,206".
fn against(a: u64, other: &str, b: u64) -> String {
    format!("{} {other}'s {}", than(a, b), grouped(b))
}

/// The largest rise, from one interval to the next, in attempts reaching the backend, over
/// the intervals that start within `focus`: how sudden the load on the backend became.
fn rise(run: &VariantRun, focus: Focus) -> u64 {
    run.rows
        .windows(2)
        .filter(|w| focus.contains(w[1].start, run.variant.duration))
        .map(|w| w[1].admitted.saturating_sub(w[0].admitted))
        .max()
        .unwrap_or(0)
}

/// How much slower than its latency the backend of `run` serves at `t`: the product of the
/// slowdowns of the schedule's phases in force then, as the backend reads them.
fn slowdown(run: &VariantRun, t: Duration) -> f64 {
    run.variant.backend.conditions(ironward::clock::nanos(t)).1
}

/// How many calls inside the backend of `run` it completes within the client's timeout at
/// `t`, by Little's law: its workers, each finishing `timeout / service time` calls in the
/// time a caller waits.
pub(super) fn in_time(run: &VariantRun, t: Duration) -> u64 {
    let backend = &run.variant.backend;
    let service = backend.latency.mean().as_secs_f64() * slowdown(run, t);
    let timeout = run.variant.client.timeout.as_secs_f64();
    (f64::from(backend.workers) * timeout / service.max(f64::MIN_POSITIVE)) as u64
}

pub(super) fn cold_recovery(report: &Report) -> Option<String> {
    let Opening {
        runs,
        outage,
        mut text,
        choices: _,
    } = match opening(report)? {
        Ok(opening) => opening,
        Err(refusal) => return Some(refusal),
    };
    let out = &mut text;
    let focus = report.focus;
    let sums: [Sum; 4] = runs.map(|r| r.sum(focus));
    let at = outage.to;
    let bound = in_time(runs[0], at);
    let _ = writeln!(
        out,
        "From {}: most calls inside the backend: {}; attempts timed out: {}.",
        stretch(focus),
        each(sums.map(|s| s.peak_in_flight)),
        each(sums.map(|s| s.timed_out)),
    );
    let (within, over): (Vec<usize>, Vec<usize>) =
        (0..4).partition(|&i| sums[i].peak_in_flight <= bound);
    let named = |which: &[usize]| {
        let names: Vec<&str> = which.iter().map(|&i| FOUR[i]).collect();
        names.join(", ")
    };
    let _ = write!(
        out,
        "At {} s the backend serves {:.1} times slower than warm: its {} workers complete {} \
         calls inside the client's {} timeout.",
        at.as_secs_f64(),
        slowdown(runs[0], at),
        runs[0].variant.backend.workers,
        grouped(bound),
        span(runs[0].variant.client.timeout),
    );
    match (within.is_empty(), over.is_empty()) {
        (false, false) => {
            let _ = write!(
                out,
                " {} held no more calls than that after it; {} held more.",
                named(&within),
                named(&over)
            );
        }
        (false, true) => {
            let _ = write!(out, " Every variant held no more calls than that after it.");
        }
        _ => {
            let _ = write!(out, " Every variant held more calls than that after it.");
        }
    }
    for (alone, both) in [(0, 2), (1, 3)] {
        let (a, b) = (sums[alone], sums[both]);
        let _ = write!(
            out,
            "\n{} timed out {} attempts, {}, and {} calls succeeded, {} its {}.",
            FOUR[both],
            grouped(b.timed_out),
            against(b.timed_out, FOUR[alone], a.timed_out),
            grouped(b.succeeded),
            than(b.succeeded, a.succeeded),
            grouped(a.succeeded),
        );
    }
    Some(text)
}
