//! The classic breaker's cost per call, alone and shared by threads, beside failsafe's breaker
//! and the `Mutex` around the core breaker its shared form replaces.
//!
//! - `classic`: the core's `ClassicBreaker` deciding alone, on one thread, at a `now` given
//!   (the clock's cost left out, as the `breaker` group leaves it out of the SRE breaker's),
//!   beside failsafe, which reads no clock while closed; and the same with a count record
//!   (`_window` rows, no peer).
//! - `classic_real_clock`: the same on one thread reading `Instant` for each call, beside
//!   failsafe; throttle-net's rows of the group are in `peers`, as in `breaker_real_clock`,
//!   whose SRE rows these mirror.
//! - `shared_classic_2_threads`: ironward-tokio's `SharedClassicBreaker` shared by two
//!   threads, beside the `Mutex<ClassicBreaker>` it replaces and failsafe, as `threads` runs
//!   `SharedSreBreaker` (its harness, its `_1_thread` and `_<n>_threads` rows).
//!
//! Beside failsafe and throttle-net, whose breakers open after 5 failures in a row, the
//! classic breaker runs the same rule (`CONSECUTIVE_HOUR`); the `_window` rows run
//! `CLASSIC_HOUR` (resilience4j's defaults, a count record of 100), as tower-resilience's
//! layer does in `peers`. Each is open for an hour: healthy, every call let through and
//! succeeding; refusing, opened by failures in the setup, every call refused. Function ids
//! are `<crate>/<case>`; `scripts/bench` turns the estimates into `BENCHMARKS.md`.

mod common;
#[path = "threads/harness.rs"]
mod harness;

use common::{CLASSIC_HOUR, CONSECUTIVE_HOUR, classic_breaker, failsafe_breaker, group};
use harness::{failsafe, lock, shared};

use std::hint::black_box;
use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion};
use failsafe::CircuitBreaker as _;
use ironward_tokio::{Clock, SharedClassicBreaker};

/// Healthy: `allow` and `pass` of a success at one `now`. Refusing: `allow` on an open
/// breaker (the reason, built by `check`, dropped). `now` moves on by a microsecond a call,
/// as a caller's clock would, without reading one.
fn decision(c: &mut Criterion) {
    let mut g = group(c, "classic");
    for healthy in [true, false] {
        let case = if healthy { "healthy" } else { "refusing" };
        for (policy, row) in [
            (CONSECUTIVE_HOUR, case),
            (CLASSIC_HOUR, &format!("{case}_window")),
        ] {
            g.bench_function(format!("ironward/{row}"), |b| {
                let mut breaker = classic_breaker(policy, !healthy, Duration::ZERO);
                let mut now = Duration::ZERO;
                b.iter(|| {
                    now += Duration::from_micros(1);
                    breaker.allow(black_box(now)).is_some_and(|permit| {
                        let _ = breaker.pass(permit, now);
                        true
                    })
                });
                assert_eq!(breaker.allow(now).is_some(), healthy);
            });
        }
        g.bench_function(format!("failsafe/{case}"), |b| {
            let breaker = failsafe_breaker(!healthy);
            b.iter(|| breaker.call(|| Ok::<_, ()>(black_box(1u8))).is_ok());
            assert_eq!(breaker.is_call_permitted(), healthy);
        });
    }
    g.finish();
}

/// Healthy: `allow` and `pass` of a success, one reading of `Instant` for both, as the SRE
/// row of `breaker_real_clock`. Refusing: `allow` on an open breaker (the reason, built by
/// `check`, dropped), one reading. The `_coarse_clock` rows read ironward-tokio's
/// `Clock::coarse` (one load of a time a thread of its own ticks every millisecond) instead,
/// as a layer built `with_clock(Clock::coarse(..))` does.
fn alone(c: &mut Criterion) {
    let mut g = group(c, "classic_real_clock");
    let coarse = Clock::coarse(Duration::from_millis(1));
    for healthy in [true, false] {
        let case = if healthy { "healthy" } else { "refusing" };
        let start = Instant::now();
        classic_on_clock(&mut g, case, healthy, || start.elapsed());
        let coarse_case = format!("{case}_coarse_clock");
        classic_on_clock(&mut g, &coarse_case, healthy, || coarse.now());
        g.bench_function(format!("failsafe/{case}"), |b| {
            let breaker = failsafe_breaker(!healthy);
            b.iter(|| breaker.call(|| Ok::<_, ()>(black_box(1u8))).is_ok());
            assert_eq!(breaker.is_call_permitted(), healthy);
        });
    }
    g.finish();
}

/// `ClassicBreaker`'s row `row` of `classic_real_clock` on the clock `now`. A generic
/// function rather than a loop over `&dyn Fn` clocks: the call through a pointer would be
/// timed with ironward's rows and not failsafe's.
fn classic_on_clock(
    g: &mut BenchmarkGroup<'_, WallTime>,
    row: &str,
    healthy: bool,
    now: impl Fn() -> Duration,
) {
    g.bench_function(format!("ironward/{row}"), |b| {
        let mut breaker = classic_breaker(CONSECUTIVE_HOUR, !healthy, now());
        b.iter(|| {
            let now = now();
            breaker.allow(now).is_some_and(|permit| {
                let _ = breaker.pass(permit, now);
                true
            })
        });
        assert_eq!(breaker.allow(now()).is_some(), healthy);
    });
}

/// One classic breaker shared by the threads, a call asked and settled with a reading of
/// `Instant` each, as ironward-tower's `BreakerService` drives it. `ironward` is
/// `SharedClassicBreaker` (healthy: loads of its opening and a note of the time on the
/// thread's stripe to ask, a compare-and-swap on the stripe to pass; refusing: loads of the
/// refusal it published and a note of the time on the stripe, no lock); `mutex` is
/// `Mutex<ClassicBreaker>`, `check` and `pass` each under the lock; failsafe's `call` takes
/// its lock to ask and, closed, again to record. Both ironward rows run `CONSECUTIVE_HOUR`;
/// its `_coarse_clock` rows read `Clock::coarse` for each call instead of `Instant`.
fn two_threads(c: &mut Criterion) {
    let mut g = group(c, "shared_classic_2_threads");
    let cores = thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let coarse = Clock::coarse(Duration::from_millis(1));
    for healthy in [true, false] {
        let name = if healthy { "healthy" } else { "refusing" };
        let all = format!("{name}_{cores}_threads");
        let one = format!("{name}_1_thread");
        for (threads, case) in [(2, name.to_owned()), (1, one.clone())] {
            let shared_breaker = SharedClassicBreaker::from(classic_breaker(
                CONSECUTIVE_HOUR,
                !healthy,
                coarse.now(),
            ));
            let breaker = &shared_breaker;
            shared(
                &mut g,
                &format!("ironward/{case}_coarse_clock"),
                threads,
                healthy,
                |n| vec![breaker; n],
                |breaker| {
                    let permit = breaker.allow(coarse.now());
                    permit.is_some_and(|permit| {
                        breaker.pass(permit, coarse.now());
                        true
                    })
                },
            );
        }
        for (threads, case) in [(2, name), (1, one.as_str()), (cores, all.as_str())] {
            let start = Instant::now();
            let shared_breaker = SharedClassicBreaker::from(classic_breaker(
                CONSECUTIVE_HOUR,
                !healthy,
                start.elapsed(),
            ));
            let breaker = &shared_breaker;
            shared(
                &mut g,
                &format!("ironward/{case}"),
                threads,
                healthy,
                |n| vec![breaker; n],
                |breaker| {
                    let permit = breaker.allow(start.elapsed());
                    permit.is_some_and(|permit| {
                        breaker.pass(permit, start.elapsed());
                        true
                    })
                },
            );
            assert_eq!(shared_breaker.ratio(start.elapsed()) == 0.0, healthy);

            let start = Instant::now();
            let mutex = Mutex::new(classic_breaker(CONSECUTIVE_HOUR, !healthy, start.elapsed()));
            let breaker = &mutex;
            shared(
                &mut g,
                &format!("mutex/{case}"),
                threads,
                healthy,
                |n| vec![breaker; n],
                |breaker| {
                    let now = start.elapsed();
                    let permit = lock(breaker).allow(now);
                    permit.is_some_and(|permit| {
                        let now = start.elapsed();
                        let _ = lock(breaker).pass(permit, now);
                        true
                    })
                },
            );

            failsafe(&mut g, case, threads, healthy);
        }
    }
    g.finish();
}

fn main() {
    let mut c = common::criterion();
    decision(&mut c);
    alone(&mut c);
    two_threads(&mut c);
    c.final_summary();
}
