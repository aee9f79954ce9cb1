//! What every bench target of ironward-benches shares: criterion's settings, the groups, and
//! the by-hand driving of a tower service.
//!
//! Each target includes this as `mod common;`, the usual way for bench and test targets of
//! one crate to share code; not every target uses every item.

#![allow(dead_code, reason = "each bench target uses the part it needs")]

pub(crate) mod overhead;

use std::cell::Cell;
use std::convert::Infallible;
use std::future::{Future, Ready, ready};
use std::hint::black_box;
use std::num::NonZeroU32;
use std::pin::pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use criterion::{BenchmarkGroup, Criterion, Throughput, measurement::WallTime};
use failsafe::CircuitBreaker as _;
use http::{Request, Response};
use ironward::classic::{OpenWait, Record, State};
use ironward::{CLASSIC, Classic, ClassicBreaker, SRE, Sre, SreBreaker};
use tower::{BoxError, Service};

/// Criterion with the short measurement this 2-core machine can afford, overridable from the
/// command line as usual: `scripts/bench`, which runs each target several times, passes
/// shorter times of its own.
pub(crate) fn criterion() -> Criterion {
    Criterion::default()
        .measurement_time(Duration::from_millis(1500))
        .warm_up_time(Duration::from_millis(500))
        .sample_size(30)
        .configure_from_args()
}

/// A tokio current-thread runtime with its timer, to be entered (never run) for a whole
/// bench: a deadline's or tower's `Timeout`'s `Sleep` needs the timer in the thread's context,
/// and none of them is ever due within a run.
pub(crate) fn timer() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a tokio runtime")
}

/// A group whose throughput is one decision (or one request) an element.
pub(crate) fn group<'a>(c: &'a mut Criterion, name: &str) -> BenchmarkGroup<'a, WallTime> {
    let mut g = c.benchmark_group(name);
    g.throughput(Throughput::Elements(1));
    g
}

/// The inner service's handler: an empty `200 OK`, ready at once.
pub(crate) fn answer(_request: Request<()>) -> Ready<Result<Response<()>, Infallible>> {
    ready(Ok(Response::new(())))
}

/// Sends one request through `service` by hand: `poll_ready`, then `call` with a fresh
/// `http::Request<()>` (no allocation), then one poll of the response future, all with a
/// no-op waker, so that no executor is measured. `Poll::Pending` when the service is not
/// ready, which is how tower's own limits say "wait". Every response future here completes on
/// its first poll, which the assertion checks (a branch that is always taken the same way).
pub(crate) fn send<S: Service<Request<()>>>(
    service: &mut S,
) -> Poll<Result<S::Response, S::Error>> {
    let mut cx = Context::from_waker(Waker::noop());
    match service.poll_ready(&mut cx) {
        Poll::Ready(Ok(())) => {}
        Poll::Ready(Err(err)) => return Poll::Ready(Err(err)),
        Poll::Pending => return Poll::Pending,
    }
    let mut future = pin!(service.call(black_box(Request::new(()))));
    let output = future.as_mut().poll(&mut cx);
    assert!(
        output.is_ready(),
        "a response future waited on the inner service"
    );
    output
}

/// Whether a request was answered by the inner service.
pub(crate) fn answered<E>(sent: &Poll<Result<Response<()>, E>>) -> bool {
    matches!(sent, Poll::Ready(Ok(_)))
}

/// Whether a request was refused at once with the error `T`, boxed.
pub(crate) fn refused_with<T: std::error::Error + 'static>(
    sent: &Poll<Result<Response<()>, BoxError>>,
) -> bool {
    matches!(sent, Poll::Ready(Err(err)) if err.is::<T>())
}

/// The classic breaker of every classic row: resilience4j's defaults (`CLASSIC`: the last 100
/// calls, opening at half of them failed once 100 are in), which tower-resilience's breaker
/// has too, open for an hour like every peer's refusing row, so that nothing comes back
/// within a run.
pub(crate) const CLASSIC_HOUR: Classic = Classic {
    open: OpenWait::Fixed(Duration::from_secs(3600)),
    ..CLASSIC
};

/// The classic breaker of the rows beside failsafe's and throttle-net's breakers, which open
/// after 5 failures in a row by default: the same rule (`Record::Consecutive`), open for an
/// hour.
pub(crate) const CONSECUTIVE_HOUR: Classic = Classic {
    record: Record::Consecutive { failures: 5 },
    ..CLASSIC_HOUR
};

/// A core breaker under `policy` at `now`; opened by 100 failures (enough for either record)
/// if `open`.
pub(crate) fn classic_breaker(policy: Classic, open: bool, now: Duration) -> ClassicBreaker {
    let mut breaker = ClassicBreaker::new(policy, now);
    for _ in 0..if open { 100 } else { 0 } {
        if breaker.state(now) == State::Open {
            break;
        }
        let permit = breaker.check(now).expect("closed until the window is full");
        let _ = breaker.fail(permit, now);
    }
    let state = if open { State::Open } else { State::Closed };
    assert_eq!(breaker.state(now), state);
    breaker
}

/// A core SRE breaker whose probe waits an hour, so that none is let through while a
/// refusing row runs: healthy, or holding 100 failures, each read at `now()`.
pub(crate) fn sre_breaker(healthy: bool, now: impl Fn() -> Duration) -> SreBreaker {
    let sre = Sre {
        probe: Duration::from_secs(3600),
        ..SRE
    };
    let mut breaker = SreBreaker::new(sre, now());
    for _ in 0..if healthy { 0 } else { 100 } {
        let permit = breaker.allow(now(), 0.99).expect("over the ratio");
        breaker.fail(permit, now());
    }
    breaker
}

/// The failsafe breaker of every failsafe row.
pub(crate) type FailsafeBreaker = failsafe::StateMachine<
    failsafe::failure_policy::ConsecutiveFailures<failsafe::backoff::Constant>,
    (),
>;

/// failsafe's breaker as every failsafe row runs it: open after 5 consecutive failures, for
/// an hour (a constant backoff); opened by 5 failed calls when `open`. It reads no clock while
/// closed. Named rather than opaque, so that a row can call it through failsafe's futures
/// `CircuitBreaker` as well as its own.
pub(crate) fn failsafe_breaker(open: bool) -> FailsafeBreaker {
    let policy = failsafe::failure_policy::consecutive_failures(
        5,
        failsafe::backoff::constant(Duration::from_secs(3600)),
    );
    let breaker = failsafe::Config::new().failure_policy(policy).build();
    if open {
        for _ in 0..5 {
            let _ = breaker.call(|| Err::<(), _>(()));
        }
    }
    assert_eq!(breaker.is_call_permitted(), !open);
    breaker
}

/// A governor quota of `per_second` cells with a burst of `burst`.
pub(crate) fn quota(per_second: u32, burst: u32) -> governor::Quota {
    let nz = |n: u32| NonZeroU32::new(n).expect("a positive count");
    governor::Quota::per_second(nz(per_second)).allow_burst(nz(burst))
}

/// A fake clock that moves `step` nanoseconds on at each reading, so that every call sees an
/// instant of its own: governor reads it through its `Clock` trait, ironward's routine calls
/// [`tick`](Stepping::tick) and makes the `Duration` its API takes.
///
/// Not governor's `FakeRelativeClock` advanced in a batch setup: criterion runs all of a
/// batch's setups before its routines, so every `check` of a batch would read the same instant
/// and the "allowed" row would refuse all but the burst.
#[derive(Debug, Clone)]
pub(crate) struct Stepping {
    now: Rc<Cell<u64>>,
    step: u64,
}

impl Stepping {
    pub(crate) fn new(step: u64) -> Self {
        Self {
            now: Rc::new(Cell::new(0)),
            step,
        }
    }

    /// The next reading, in nanoseconds.
    pub(crate) fn tick(&self) -> u64 {
        let now = self.now.get() + self.step;
        self.now.set(now);
        now
    }
}

impl governor::clock::Clock for Stepping {
    type Instant = governor::nanos::Nanos;

    fn now(&self) -> Self::Instant {
        governor::nanos::Nanos::new(self.tick())
    }
}
