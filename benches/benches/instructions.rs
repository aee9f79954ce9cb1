//! Instructions per decision, counted by Valgrind's callgrind through gungraun: a figure that is
//! the same on every run of the same build, where the nanoseconds of the criterion targets move
//! with the load the machine carries. `scripts/bench` runs this target when Valgrind is
//! installed (installing gungraun's runner if it is missing) and sets the counts beside the
//! times in `BENCHMARKS.md`.
//!
//! Each benchmark makes its decisions `laps` times over, and runs once with 1000 laps and once
//! with 2000: a lap's count is the difference over 1000, so that what a run does once (making
//! the state, the first decision that opens a fast path, the call into the function) drops
//! out. One process runs each, under callgrind, one thread.
//!
//! The rows are the ones the timed tables find over their peer, with the same workloads:
//!
//! - `breaker`: one call asked and passed (`healthy`) or refused (`refusing`), through
//!   the core's `SreBreaker` (`ironward`) and `ClassicBreaker` (`ironward classic`) as
//!   `breaker_real_clock` and `classic_real_clock` drive them, one clock reading a call, through
//!   ironward-tokio's `SharedSreBreaker` on one thread (`ironward shared`), which reads its
//!   clock when the call is asked and when it is passed, and through failsafe's breaker
//!   (`common::failsafe_breaker`). ironward's read the manual clock (one load, time passed in);
//!   the shared breaker's rows also `Clock::coarse` (one load of a time its own thread stores)
//!   and `Clock::monotonic` (the system's clock, whose instructions are counted but whose cost
//!   on a virtual machine is mostly not instructions).
//! - `bucket`: `Bucket::take` and `SharedBucket::take` against governor's `check`, on the
//!   `Stepping` clock `bucket_fake_clock` uses, allowed and refused.
//! - `budget`: a success and a failure reported and a retry asked, on `SharedBudget` and on a
//!   `Mutex<Budget>` locked per response, as `shared_budget_2_threads` does on one thread.
//! - `metered`: one request through each layer of `layer_overhead`, built without
//!   ironward-tower's `metrics` feature (`off`) or with it (`on`, no recorder installed, so
//!   every handle is `metrics`' no-op one): like the `metered` target, this one is built
//!   twice.

#![allow(
    missing_docs,
    reason = "gungraun's macros make a public module per benchmark"
)]

mod common;

use common::overhead::{self, Laps, Piece};
use common::{
    CONSECUTIVE_HOUR, Stepping, classic_breaker, failsafe_breaker, quota, send, sre_breaker,
};

use std::hint::black_box;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use failsafe::CircuitBreaker as _;
use gungraun::{library_benchmark, library_benchmark_group, main};
use http::{Request, Response};
use ironward::{Bucket, Budget, ClassicBreaker, SharedBucket, SharedBudget, SreBreaker};
use ironward_tokio::{Clock, SharedSreBreaker};
use tower::Service;

/// The clock a breaker row reads.
#[derive(Clone, Copy, Debug)]
enum Read {
    /// `Clock::manual`, never moved: time passed in.
    Manual,
    /// `Clock::coarse` at a millisecond.
    Coarse,
    /// `Clock::monotonic`: the system's clock.
    Monotonic,
}

impl Read {
    fn clock(self) -> Clock {
        match self {
            Self::Manual => Clock::manual(Duration::from_secs(1)).0,
            Self::Coarse => Clock::coarse(Duration::from_millis(1)),
            Self::Monotonic => Clock::monotonic(),
        }
    }
}

// `laps` calls to ironward's shared SRE breaker on one thread, each asked and, let through,
// passed, reading `read`'s clock for each; healthy, or holding 100 failures under a probe of
// an hour and asked with a draw of 0 (refused).
#[library_benchmark]
#[bench::healthy_1000(true, Read::Manual, 1000)]
#[bench::healthy_2000(true, Read::Manual, 2000)]
#[bench::healthy_coarse_clock_1000(true, Read::Coarse, 1000)]
#[bench::healthy_coarse_clock_2000(true, Read::Coarse, 2000)]
#[bench::healthy_monotonic_clock_1000(true, Read::Monotonic, 1000)]
#[bench::healthy_monotonic_clock_2000(true, Read::Monotonic, 2000)]
#[bench::refusing_1000(false, Read::Manual, 1000)]
#[bench::refusing_2000(false, Read::Manual, 2000)]
#[bench::refusing_coarse_clock_1000(false, Read::Coarse, 1000)]
#[bench::refusing_coarse_clock_2000(false, Read::Coarse, 2000)]
#[bench::refusing_monotonic_clock_1000(false, Read::Monotonic, 1000)]
#[bench::refusing_monotonic_clock_2000(false, Read::Monotonic, 2000)]
fn breaker_ironward_shared(healthy: bool, read: Read, laps: u64) -> u64 {
    let clock = read.clock();
    let breaker = SharedSreBreaker::from(sre_breaker(healthy, || clock.now()));
    let roll = if healthy { 0.5 } else { 0.0 };
    let allowed = (0..laps)
        .filter(|_| {
            let permit = breaker.allow(clock.now(), black_box(roll));
            permit.is_some_and(|permit| {
                breaker.pass(permit, clock.now());
                true
            })
        })
        .count();
    assert_eq!(allowed == 0, !healthy);
    laps
}

// `laps` calls to the core's `SreBreaker` as `breaker_real_clock` makes them, one reading of
// the manual clock for a call asked and passed; healthy or refusing as above. (On the coarse
// clock a core row counts one instruction more, as a shared one counts two.)
#[library_benchmark]
#[bench::healthy_1000(true, 1000)]
#[bench::healthy_2000(true, 2000)]
#[bench::refusing_1000(false, 1000)]
#[bench::refusing_2000(false, 2000)]
fn breaker_ironward(healthy: bool, laps: u64) -> u64 {
    let clock = Read::Manual.clock();
    let breaker = sre_breaker(healthy, || clock.now());
    core_laps(breaker, &clock, healthy, laps)
}

// The same on the core's `ClassicBreaker` as `classic_real_clock` drives it: five failures in
// a row open it for an hour (`common::CONSECUTIVE_HOUR`), and it is open unless healthy.
#[library_benchmark]
#[bench::healthy_1000(true, 1000)]
#[bench::healthy_2000(true, 2000)]
#[bench::refusing_1000(false, 1000)]
#[bench::refusing_2000(false, 2000)]
fn breaker_ironward_classic(healthy: bool, laps: u64) -> u64 {
    let clock = Read::Manual.clock();
    let breaker = classic_breaker(CONSECUTIVE_HOUR, !healthy, clock.now());
    core_laps(breaker, &clock, healthy, laps)
}

/// A core breaker as the rows drive it: one call asked at `now` and, let through, passed.
/// Each `call` is inlined into the loop of [`core_laps`], as a timed row's closure is into
/// criterion's: left to the optimiser, the choice moved the counts by a fifth with no
/// change to the breakers.
trait Core {
    fn call(&mut self, now: Duration) -> bool;
}

impl Core for SreBreaker {
    #[inline(always)]
    fn call(&mut self, now: Duration) -> bool {
        // A draw that a healthy window lets through and a full one of failures refuses.
        let roll = black_box(0.0);
        self.allow(now, roll).is_some_and(|permit| {
            self.pass(permit, now);
            true
        })
    }
}

impl Core for ClassicBreaker {
    #[inline(always)]
    fn call(&mut self, now: Duration) -> bool {
        self.allow(now).is_some_and(|permit| {
            let _ = self.pass(permit, now);
            true
        })
    }
}

/// `laps` calls to `breaker`, one reading of `clock` each; checks they went as `healthy`
/// says, and is `laps`.
fn core_laps(mut breaker: impl Core, clock: &Clock, healthy: bool, laps: u64) -> u64 {
    let allowed = (0..laps).filter(|_| breaker.call(clock.now())).count();
    assert_eq!(allowed == 0, !healthy);
    laps
}

// `laps` calls to failsafe's breaker, closed or open.
#[library_benchmark]
#[bench::healthy_1000(true, 1000)]
#[bench::healthy_2000(true, 2000)]
#[bench::refusing_1000(false, 1000)]
#[bench::refusing_2000(false, 2000)]
fn breaker_failsafe(healthy: bool, laps: u64) -> u64 {
    let breaker = failsafe_breaker(!healthy);
    let allowed = (0..laps)
        .filter(|_| breaker.call(|| Ok::<_, ()>(black_box(1u8))).is_ok())
        .count();
    assert_eq!(allowed == 0, !healthy);
    laps
}

/// The workloads of `bucket_fake_clock`: allowed, a million tokens a second with a burst of 10
/// and a step of 1 µs; refused, one token a second, a burst of 1 spent first, a step of 1 ns.
fn bucket_terms(allowed: bool) -> (u32, u32, u64) {
    if allowed {
        (1_000_000, 10, 1_000)
    } else {
        (1, 1, 1)
    }
}

/// `$laps` takes of one token from `$bucket`, a `Bucket` or a `SharedBucket`, on the stepping
/// clock at `$step`, after one at zero that spends the burst of 1 unless the workload is
/// `$allowed`; checks that they went the intended way, and is `$laps`. A macro rather than a
/// function taking the take as a closure: through the closure `SharedBucket::take` inlined
/// otherwise and counted a tenth more instructions, which is the harness, not the bucket.
macro_rules! takes {
    ($bucket:ident, $allowed:expr, $step:expr, $laps:expr) => {{
        assert!($allowed || $bucket.take(Duration::ZERO, 1.0));
        let clock = Stepping::new($step);
        let taken = (0..$laps)
            .filter(|_| $bucket.take(Duration::from_nanos(clock.tick()), 1.0))
            .count();
        assert_eq!(taken == 0, !$allowed);
        $laps
    }};
}

// `laps` takes from ironward's `Bucket`.
#[library_benchmark]
#[bench::allowed_1000(true, 1000)]
#[bench::allowed_2000(true, 2000)]
#[bench::refused_1000(false, 1000)]
#[bench::refused_2000(false, 2000)]
fn bucket_ironward(allowed: bool, laps: u64) -> u64 {
    let (rate, burst, step) = bucket_terms(allowed);
    let mut bucket = Bucket::new(f64::from(rate), f64::from(burst), Duration::ZERO);
    takes!(bucket, allowed, step, laps)
}

// `laps` takes from ironward's `SharedBucket`, on one thread.
#[library_benchmark]
#[bench::allowed_1000(true, 1000)]
#[bench::allowed_2000(true, 2000)]
#[bench::refused_1000(false, 1000)]
#[bench::refused_2000(false, 2000)]
fn bucket_ironward_shared(allowed: bool, laps: u64) -> u64 {
    let (rate, burst, step) = bucket_terms(allowed);
    let bucket = SharedBucket::new(f64::from(rate), f64::from(burst), Duration::ZERO);
    takes!(bucket, allowed, step, laps)
}

// `laps` checks of governor's direct limiter on the stepping clock.
#[library_benchmark]
#[bench::allowed_1000(true, 1000)]
#[bench::allowed_2000(true, 2000)]
#[bench::refused_1000(false, 1000)]
#[bench::refused_2000(false, 2000)]
fn bucket_governor(allowed: bool, laps: u64) -> u64 {
    let (rate, burst, step) = bucket_terms(allowed);
    let limiter = governor::RateLimiter::direct_with_clock(quota(rate, burst), Stepping::new(step));
    assert!(allowed || limiter.check().is_ok());
    let taken = (0..laps).filter(|_| limiter.check().is_ok()).count();
    assert_eq!(taken == 0, !allowed);
    laps
}

// `laps` times a success and a failure reported and a retry asked of a budget of 10 tokens
// giving back one a success, which never runs dry, on ironward's `SharedBudget`.
#[library_benchmark]
#[bench::allowed_1000(1000)]
#[bench::allowed_2000(2000)]
fn budget_ironward(laps: u64) -> u64 {
    let budget = SharedBudget::new(10, 1.0);
    let allowed = (0..laps)
        .filter(|_| {
            budget.pass();
            budget.fail();
            budget.can_retry()
        })
        .count();
    assert_eq!(allowed as u64, laps);
    laps
}

// [`budget_ironward`] on a `Mutex<Budget>`, locked for each response as an edge takes them.
#[library_benchmark]
#[bench::allowed_1000(1000)]
#[bench::allowed_2000(2000)]
fn budget_mutex(laps: u64) -> u64 {
    let budget = Mutex::new(Budget::new(10, 1.0));
    let lock = || budget.lock().unwrap_or_else(PoisonError::into_inner);
    let allowed = (0..laps)
        .filter(|_| {
            lock().pass();
            let mut budget = lock();
            budget.fail();
            budget.can_retry()
        })
        .count();
    assert_eq!(allowed as u64, laps);
    laps
}

/// Sends a fixed count of requests, each answered, through a layer's service.
struct Count(u64);

impl Laps for Count {
    fn run<S>(&mut self, mut service: S)
    where
        S: Service<Request<()>, Response = Response<()>>,
    {
        for _ in 0..self.0 {
            assert!(common::answered(&black_box(send(&mut service))));
        }
    }
}

// `laps` requests through `piece`'s layer, in this build: `off` without the `metrics`
// feature, `on` with it.
#[library_benchmark]
#[bench::breaker_1000(Piece::Breaker, 1000)]
#[bench::breaker_2000(Piece::Breaker, 2000)]
#[bench::shed_1000(Piece::Shed, 1000)]
#[bench::shed_2000(Piece::Shed, 2000)]
#[bench::rate_limit_1000(Piece::RateLimit, 1000)]
#[bench::rate_limit_2000(Piece::RateLimit, 2000)]
#[bench::gate_1000(Piece::Gate, 1000)]
#[bench::gate_2000(Piece::Gate, 2000)]
#[bench::deadline_1000(Piece::Deadline, 1000)]
#[bench::deadline_2000(Piece::Deadline, 2000)]
fn metered(piece: Piece, laps: u64) -> u64 {
    let timer = common::timer();
    let _entered = timer.enter();
    overhead::admitted(&mut Count(laps), piece);
    laps
}

library_benchmark_group!(
    name = breaker;
    benchmarks = breaker_ironward, breaker_ironward_classic, breaker_ironward_shared, breaker_failsafe
);
library_benchmark_group!(
    name = bucket;
    benchmarks = bucket_ironward, bucket_ironward_shared, bucket_governor
);
library_benchmark_group!(
    name = budget;
    benchmarks = budget_ironward, budget_mutex
);
library_benchmark_group!(
    name = layers;
    benchmarks = metered
);

main!(library_benchmark_groups = breaker, bucket, budget, layers);
