//! The verdicts on overload: `overload` (the shedder), `latency-shift` and `priorities` (the
//! limiter).

use core::cmp::Ordering;
use core::fmt::Write;
use core::time::Duration;

use crate::report::{Report, Sum, VariantRun, millis};
use crate::scenario::Focus;
use crate::words::grouped;

use super::verdict::{outside, runs, span, stretch, than};

pub(super) fn overload(report: &Report) -> Option<String> {
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
    let p99 = |run: &VariantRun| {
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

/// The capacity Little's law gives the backend of `run`: it completes `workers / service`
/// calls a second, each taking `service`, so `workers` calls in flight keep it busy without a
/// queue, whatever its latency.
fn little(run: &VariantRun) -> u64 {
    u64::from(run.variant.backend.workers)
}

/// For each shift of the backend's latency (each start and end of a slowdown inside the
/// run), the shift and how long after it `run`'s limit came within `tolerance` of
/// [`little`]'s capacity and stayed there until the next shift; `None` for never.
pub(super) fn settled(run: &VariantRun, tolerance: f64) -> Vec<(Duration, Option<Duration>)> {
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

pub(super) fn latency_shift(report: &Report) -> Option<String> {
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
pub(super) fn inversions(run: &VariantRun, focus: Focus) -> Vec<Duration> {
    run.rows
        .iter()
        .filter(|r| focus.contains(r.start, run.variant.duration))
        .filter(|r| r.admitted_by[0] > 0 && r.refused_by[2] + r.refused_by[3] > 0)
        .map(|r| r.start)
        .collect()
}

pub(super) fn priorities(report: &Report) -> Option<String> {
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
