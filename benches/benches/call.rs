//! The front door, `ironward_tokio::call`, beside the Rust crates a caller would otherwise
//! wrap an async call in: its retry beside backon's `Retryable` and tokio-retry's `Retry`, its
//! breaker beside failsafe's breaker for futures.
//!
//! - `call_retry`: `first_try`, a call that succeeds at once; `fails_3_then_ok`, a call that
//!   fails three times, then succeeds, with waits of zero between (four attempts). ironward
//!   is `(|| fut).retry(&policy)` ([`RetryExt`]) on rules of four attempts, a zero base and
//!   no jitter, on the default monotonic clock and dice; backon `(|| fut).retry(builder)` with
//!   a `ConstantBuilder` of three retries at zero delay and a sleeper that does nothing (its
//!   crate's sleepers are features); tokio-retry `Retry::start` over a `FixedInterval` of
//!   zero, three times, which sleeps each wait on tokio's timer.
//! - `call_breaker` and `call_classic`: `healthy`, a call let through that succeeds and is
//!   recorded; `refusing`, a call refused at once, its closure never called. ironward is
//!   [`Breaker`] with the SRE policy (`call_breaker`) or the classic one opening after 5
//!   failures in a row, for an hour (`call_classic`), on the monotonic clock; failsafe is its
//!   futures `CircuitBreaker::call` on the breaker every failsafe row runs (5 failures in a
//!   row, an hour open), which reads no clock while closed. The SRE breaker refuses a share
//!   of calls rather than all of them: opened by 100 failures, it is asked with a draw of 0,
//!   which it refuses, as the `breaker` group's refusing rows are.
//!
//! Each ironward row has a `<case>_coarse_clock` twin on ironward-tokio's `Clock::coarse`
//! (a load of a time a thread of its own ticks every millisecond) instead of the monotonic
//! clock, which `scripts/bench` sets beside the same peers as `<case>`: what the clock reads
//! cost (two a breaker's call, one a retry's first attempt, two each retry), apart from the
//! rest.
//!
//! Every row drives one whole call, its future built and run to its answer, by the same
//! executor: `block_on` of one tokio current-thread runtime (with its timer, which
//! tokio-retry's waits need), made once and reused for every iteration, whose own cost is in
//! every row. The operation is a future ready at once, its value through `black_box`.
//! Function ids are `<crate>/<case>`; each row checks its answer before and after measuring.

mod common;

use common::{CONSECUTIVE_HOUR, failsafe_breaker, group};

use std::cell::Cell;
use std::future::{Future, IntoFuture, Ready, ready};
use std::hint::black_box;
use std::time::Duration;

use backon::{ConstantBuilder, Retryable};
use criterion::{Bencher, Criterion};
use failsafe::futures::CircuitBreaker as _;
use ironward::retry::Rules;
use ironward::{BACKOFF, Backoff, Jitter, SRE};
use ironward_tokio::call::{Breaker, Retry, RetryExt};
use ironward_tokio::{Clock, Dice};
use tokio::runtime::Runtime;
use tokio_retry::strategy::FixedInterval;

/// The runtime every row's calls run on: one thread, its timer on.
fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a current-thread runtime")
}

/// The error the failing attempts return.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Busy;

/// The attempts of `fails_3_then_ok` that fail, before the one that succeeds.
const FAILURES: u32 = 3;

/// An operation failing [`FAILURES`] times, then answering the attempt's number, counted in
/// `attempts` (set by the caller before each call: `first_try` starts it past the failures).
fn flaky(attempts: &Cell<u32>) -> impl Fn() -> Ready<Result<u32, Busy>> + '_ {
    move || {
        let n = black_box(attempts.get() + 1);
        attempts.set(n);
        ready(if n <= FAILURES { Err(Busy) } else { Ok(n) })
    }
}

/// Runs the case's row: `call()` on `rt` with `attempts` set to what the case starts from,
/// checked to answer the succeeding attempt's number before and after.
fn bench_retry<Fut: Future>(
    b: &mut Bencher<'_>,
    rt: &Runtime,
    (attempts, start): (&Cell<u32>, u32),
    call: impl Fn() -> Fut,
    ok: impl Fn(Fut::Output) -> Option<u32>,
) {
    let once = || {
        attempts.set(start);
        rt.block_on(call())
    };
    assert_eq!(ok(once()), Some(FAILURES + 1));
    b.iter(once);
    assert_eq!(ok(once()), Some(FAILURES + 1));
}

fn retry(c: &mut Criterion) {
    let rt = runtime();
    let mut g = group(c, "call_retry");
    let policy = Retry::new(Rules::new(Backoff {
        base: Duration::ZERO,
        attempts: FAILURES + 1,
        jitter: Jitter::Rigid,
        ..BACKOFF
    }));
    let builder = ConstantBuilder::new()
        .with_delay(Duration::ZERO)
        .with_max_times(FAILURES as usize);
    let zero = || FixedInterval::new(Duration::ZERO).take(FAILURES as usize);
    let coarse = policy
        .clone()
        .with_clock(Clock::coarse(Duration::from_millis(1)));
    let attempts = Cell::new(0);
    for (start, case) in [(FAILURES, "first_try"), (0, "fails_3_then_ok")] {
        let counted = (&attempts, start);
        for (row, policy) in [(case, &policy), (&format!("{case}_coarse_clock"), &coarse)] {
            g.bench_function(format!("ironward/{row}"), |b| {
                let call = || RetryExt::retry(flaky(&attempts), policy).into_future();
                bench_retry(b, &rt, counted, call, Result::ok);
            });
        }
        g.bench_function(format!("backon/{case}"), |b| {
            let call = || Retryable::retry(flaky(&attempts), builder).sleep(|_| ready(()));
            bench_retry(b, &rt, counted, call, Result::ok);
        });
        g.bench_function(format!("tokio-retry/{case}"), |b| {
            let call = || tokio_retry::Retry::start(zero(), flaky(&attempts));
            bench_retry(b, &rt, counted, call, Result::ok);
        });
    }
    g.finish();
}

/// A call that succeeds at once.
fn fine() -> Ready<Result<u8, Busy>> {
    ready(Ok(black_box(1)))
}

fn breaker(c: &mut Criterion) {
    let rt = runtime();
    let coarse_clock = Clock::coarse(Duration::from_millis(1));
    for (name, sre) in [("call_breaker", true), ("call_classic", false)] {
        let mut g = group(c, name);
        for healthy in [true, false] {
            let case = if healthy { "healthy" } else { "refusing" };
            let coarse = &format!("{case}_coarse_clock");
            for (row, clock) in [(case, Clock::monotonic()), (coarse, coarse_clock.clone())] {
                g.bench_function(format!("ironward/{row}"), |b| {
                    // Both families answer a `Result<u8, CallError<Busy, _>>`; the loop is
                    // the same code for each.
                    macro_rules! run {
                        ($breaker:expr) => {{
                            let breaker = $breaker.with_clock(clock.clone());
                            if !healthy {
                                for _ in 0..100 {
                                    let failed = || ready(Err::<u8, _>(Busy));
                                    let _ = rt.block_on(breaker.call(failed));
                                }
                            }
                            let once = || rt.block_on(breaker.call(fine)).is_ok();
                            assert_eq!(once(), healthy);
                            b.iter(once);
                            assert_eq!(once(), healthy);
                        }};
                    }
                    if sre {
                        // Opened by 100 failures, the SRE breaker refuses a draw of 0.
                        let dice = if healthy {
                            Dice::random()
                        } else {
                            Dice::from_fn(|| 0.0)
                        };
                        run!(Breaker::new(SRE).with_dice(dice));
                    } else {
                        run!(Breaker::new(CONSECUTIVE_HOUR));
                    }
                });
            }
            g.bench_function(format!("failsafe/{case}"), |b| {
                let breaker = failsafe_breaker(!healthy);
                let once = || rt.block_on(breaker.call(fine())).is_ok();
                assert_eq!(once(), healthy);
                b.iter(once);
                assert_eq!(once(), healthy);
            });
        }
        g.finish();
    }
}

fn main() {
    let mut c = common::criterion();
    retry(&mut c);
    breaker(&mut c);
    c.final_summary();
}
