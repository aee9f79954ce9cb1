//! The verdicts on a backend's recovery from an outage: `outage` and `cold-recovery`.

use core::cmp::Ordering;
use core::fmt::Write;
use core::time::Duration;

use crate::policy::BreakerPolicy;
use crate::report::{Report, Sum, VariantRun};
use crate::scenario::Focus;
use crate::words::grouped;

use super::verdict::{outside, runs, span, stretch, than};

pub(super) fn outage(report: &Report) -> Option<String> {
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
