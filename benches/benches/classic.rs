//! The classic breaker's cost per call, alone and shared by threads, beside failsafe's breaker
//! and the `Mutex` around the core breaker its shared form replaces.
//!
//! - `classic_real_clock`: the core's `ClassicBreaker`, on one thread, reading `Instant` for
//!   each call, beside failsafe (which reads no clock while closed); throttle-net's rows of
//!   the group are in `peers`, as in `breaker_real_clock`, whose SRE rows these mirror.
//! - `shared_classic_2_threads`: ironward-tokio's `SharedClassicBreaker` shared by two
//!   threads, beside the `Mutex<ClassicBreaker>` it replaces and failsafe, as `threads` runs
//!   `SharedSreBreaker` (its harness, its `_1_thread` and `_<n>_threads` rows).
//!
//! Every breaker runs `CLASSIC_HOUR` (resilience4j's defaults, open for an hour) or failsafe's
//! consecutive-failures policy: healthy, every call let through and succeeding; refusing,
//! opened by failures in the setup, every call refused. Function ids are `<crate>/<case>`;
//! `scripts/bench` turns the estimates into `BENCHMARKS.md`.

mod common;
#[path = "threads/harness.rs"]
mod harness;

use common::{CLASSIC_HOUR, failsafe_breaker, group};
use harness::{failsafe, lock, shared};

use std::hint::black_box;
use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant};

use criterion::Criterion;
use failsafe::CircuitBreaker as _;
use ironward::ClassicBreaker;
use ironward::classic::State;
use ironward_tokio::SharedClassicBreaker;

/// A core breaker under `CLASSIC_HOUR` at `now`; opened by a window of 100 failures if
/// `open`.
fn classic(open: bool, now: Duration) -> ClassicBreaker {
    let mut breaker = ClassicBreaker::new(CLASSIC_HOUR, now);
    for _ in 0..if open { 100 } else { 0 } {
        let permit = breaker.check(now).expect("closed until the window is full");
        let _ = breaker.fail(permit, now);
    }
    let state = if open { State::Open } else { State::Closed };
    assert_eq!(breaker.state(now), state);
    breaker
}

/// Healthy: `allow` and `pass` of a success, one reading of `Instant` for both, as the SRE
/// row of `breaker_real_clock` (a count record of 100 calls: each pass writes the ring).
/// Refusing: `allow` on an open breaker (the reason, built by `check`, dropped), one reading.
fn alone(c: &mut Criterion) {
    let mut g = group(c, "classic_real_clock");
    for healthy in [true, false] {
        let case = if healthy { "healthy" } else { "refusing" };
        g.bench_function(format!("ironward/{case}"), |b| {
            let start = Instant::now();
            let mut breaker = classic(!healthy, start.elapsed());
            b.iter(|| {
                let now = start.elapsed();
                breaker.allow(now).is_some_and(|permit| {
                    let _ = breaker.pass(permit, now);
                    true
                })
            });
            assert_eq!(breaker.allow(start.elapsed()).is_some(), healthy);
        });
        g.bench_function(format!("failsafe/{case}"), |b| {
            let breaker = failsafe_breaker(!healthy);
            b.iter(|| breaker.call(|| Ok::<_, ()>(black_box(1u8))).is_ok());
            assert_eq!(breaker.is_call_permitted(), healthy);
        });
    }
    g.finish();
}

/// One classic breaker shared by the threads, a call asked and settled with a reading of
/// `Instant` each, as ironward-tower's `BreakerService` drives it. `ironward` is
/// `SharedClassicBreaker` (healthy: loads of its opening and a note of the time on the
/// thread's stripe to ask, a compare-and-swap on the stripe to pass; refusing: loads of the
/// refusal it published and a note of the time on the stripe, no lock); `mutex` is `Mutex<ClassicBreaker>`, `check` and `pass`
/// each under the lock; failsafe's `call` takes its lock to ask and, closed, again to record.
fn two_threads(c: &mut Criterion) {
    let mut g = group(c, "shared_classic_2_threads");
    let cores = thread::available_parallelism().map_or(1, std::num::NonZero::get);
    for healthy in [true, false] {
        let name = if healthy { "healthy" } else { "refusing" };
        let all = format!("{name}_{cores}_threads");
        let one = format!("{name}_1_thread");
        for (threads, case) in [(2, name), (1, one.as_str()), (cores, all.as_str())] {
            let start = Instant::now();
            let shared_breaker = SharedClassicBreaker::from(classic(!healthy, start.elapsed()));
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
            let mutex = Mutex::new(classic(!healthy, start.elapsed()));
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
    alone(&mut c);
    two_threads(&mut c);
    c.final_summary();
}
