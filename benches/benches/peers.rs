//! ironward beside the peers that `decisions` leaves out: throttle-net's `SlidingWindowLog` and
//! `CircuitBreaker`, and tower-resilience's rate limiter and circuit breaker.
//!
//! Rows go into the groups of `decisions` wherever the peer can be measured the same way as
//! ironward there, so that `scripts/bench` puts them side by side with ironward's rows from
//! that target (which this one does not repeat):
//!
//! - `sliding`: throttle-net's log on a clock that steps on at each reading, as the ironward
//!   rows' time steps on at each call.
//! - `breaker_real_clock` and `classic_real_clock`: throttle-net's breaker on the real clock,
//!   which it reads itself, beside the SRE breaker and the classic one.
//!
//! tower-resilience offers its limiter and its breaker only as tower layers, reading
//! `Instant::now` inside, so its rows are in `layer_rate_limit`, `layer_breaker` and
//! `layer_classic_breaker`, next to ironward-tower's layers on the real clock. A request
//! there is `poll_ready`, `call` with a fresh `http::Request<()>` and one poll of the
//! response future, by hand with `Waker::noop()` (no runtime); the inner service answers at
//! once. Those rows include the tower service overhead on both sides. throttle-net has no
//! fixed-window limiter, so `period` gets no peer row.
//!
//! Function ids are `<crate>/<case>`. Every row checks that the limiter or breaker is in the
//! state it is about (it allows, or it refuses) before measuring and again after.

mod common;

use common::{CLASSIC_HOUR, group};

use std::fmt;
use std::future::{Future, Ready, ready};
use std::hint::black_box;
use std::pin::pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use clock_lib::{Clock, Monotonic, Wall};
use criterion::{BatchSize, BenchmarkGroup, Criterion, measurement::WallTime};
use http::{Request, Response};
use ironward::{Classic, ClassicBreaker, ClassicReason, SRE};
use ironward_tokio::{SharedCircuitBreaker, SharedClassicBreaker};
use ironward_tower::{BreakerLayer, BreakerRefused, Dice, Limited, Quota, QuotaLayer};
use throttle_net::{BreakerState, CircuitBreaker, Decision, SlidingWindowLog};
use tower::{BoxError, Layer, Service};
use tower_resilience_circuitbreaker::{CircuitBreakerError, CircuitBreakerLayer};
use tower_resilience_ratelimiter::{RateLimiterLayer, RateLimiterServiceError, WindowType};

/// A throttle-net clock that moves `step` nanoseconds on from the last reading each time it is
/// read (a plain load and store), so that each decision sees its own time, as the ironward rows
/// of `sliding` get theirs from the batch setup. throttle-net's own `ManualClock` would not do:
/// advanced in the batch setup, it would have moved a whole batch on before the batch's first
/// call, and every call of the batch would read the same instant.
struct Stepping {
    origin: Instant,
    nanos: AtomicU64,
    step: u64,
}

impl Clock for Stepping {
    fn now(&self) -> Monotonic {
        let nanos = self.nanos.load(Ordering::Relaxed) + self.step;
        self.nanos.store(nanos, Ordering::Relaxed);
        Monotonic::from(self.origin + Duration::from_nanos(nanos))
    }

    fn wall(&self) -> Wall {
        Wall::now()
    }
}

/// `SlidingWindowLog::try_acquire` on a `Stepping` clock, against the ironward rows of
/// `decisions` with the same workloads: allowed is a million a second over 1 s with a step of
/// 1 µs; refused is a quota of 1 used at the start, with a step of 1 ns. The batch setup is
/// empty, kept so that the harness's own cost is the same as in the ironward rows. The clock's
/// reading (an `Instant` plus the offset) and throttle-net's conversion of it to nanoseconds
/// since its epoch are in the row: that is how throttle-net takes time, whatever the clock.
fn sliding(c: &mut Criterion) {
    let mut g = group(c, "sliding");
    for (case, quota, step) in [("allowed", 1_000_000, 1_000), ("refused", 1, 1)] {
        g.bench_function(format!("throttle-net/{case}"), |b| {
            let clock = Stepping {
                origin: Instant::now(),
                nanos: AtomicU64::new(0),
                step,
            };
            let limiter = SlidingWindowLog::new(quota, Duration::from_secs(1)).with_clock(clock);
            assert!(limiter.try_acquire());
            // The next call, a step later, takes the path the row is about.
            let in_state = || limiter.try_acquire() == (case == "allowed");
            assert!(in_state());
            b.iter_batched(|| (), |()| limiter.try_acquire(), BatchSize::SmallInput);
            assert!(in_state());
        });
    }
    g.finish();
}

/// A limiter that always grants: throttle-net's breaker wraps a limiter, and this one leaves
/// the breaker's own work alone in the row.
struct Unlimited;

impl throttle_net::Limiter for Unlimited {
    fn peek(&self, _cost: u32) -> Decision {
        Decision::Acquired
    }

    fn acquire_cost(&self, _cost: u32) -> Decision {
        Decision::Acquired
    }

    fn available(&self) -> u32 {
        u32::MAX
    }

    fn capacity(&self) -> u32 {
        u32::MAX
    }
}

/// throttle-net's `CircuitBreaker` with its defaults (open after 5 consecutive failures, as
/// the failsafe rows), a cooldown of an hour and an always-granting limiter, on its default
/// clock (`Instant::now`, read in `try_acquire` and again when the permit is settled).
/// Healthy: `try_acquire` then `Permit::success`, the form of ironward's `allow` and `pass`.
/// Refusing: `try_acquire` on a breaker opened by 5 failed permits. The same rows go into
/// `breaker_real_clock`, beside the SRE breaker, and `classic_real_clock`, beside the classic
/// one (throttle-net's is a classic breaker too).
fn breaker(c: &mut Criterion) {
    let build = || {
        CircuitBreaker::builder()
            .cooldown(Duration::from_secs(3600))
            .build(Unlimited)
    };
    for name in ["breaker_real_clock", "classic_real_clock"] {
        let mut g = group(c, name);
        g.bench_function("throttle-net/healthy", |b| {
            let breaker = build();
            assert_eq!(breaker.state(), BreakerState::Closed);
            b.iter(|| match breaker.try_acquire() {
                Ok(Some(permit)) => {
                    permit.success();
                    true
                }
                _ => false,
            });
            assert_eq!(breaker.state(), BreakerState::Closed);
        });
        g.bench_function("throttle-net/refusing", |b| {
            let breaker = build();
            for _ in 0..5 {
                let permit = breaker.try_acquire().expect("closed").expect("granted");
                permit.failure();
            }
            assert_eq!(breaker.state(), BreakerState::Open);
            assert!(breaker.try_acquire().is_err());
            b.iter(|| matches!(breaker.try_acquire(), Ok(Some(_))));
            assert!(breaker.try_acquire().is_err());
        });
        g.finish();
    }
}

/// The inner service's error, when it is told to fail.
#[derive(Debug)]
struct Down;

impl fmt::Display for Down {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("backend down")
    }
}

impl std::error::Error for Down {}

/// The inner service of the layer rows: an empty `200 OK` at once, or `Down` when `fail`.
#[derive(Debug, Clone, Copy)]
struct Backend {
    fail: bool,
}

impl Service<Request<()>> for Backend {
    type Response = Response<()>;
    type Error = Down;
    type Future = Ready<Result<Response<()>, Down>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Down>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _request: Request<()>) -> Self::Future {
        ready(if self.fail {
            Err(Down)
        } else {
            Ok(Response::new(()))
        })
    }
}

/// Sends one request through `service`: `poll_ready`, `call`, and one poll of the response
/// future, with a no-op waker. Panics if either waits: none of the rows here ever should.
fn send<S: Service<Request<()>>>(service: &mut S) -> Result<S::Response, S::Error> {
    let mut cx = Context::from_waker(Waker::noop());
    let Poll::Ready(ready) = service.poll_ready(&mut cx) else {
        panic!("the service was not ready");
    };
    ready?;
    let mut future = pin!(service.call(black_box(Request::new(()))));
    match future.as_mut().poll(&mut cx) {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("the response future waited"),
    }
}

/// A rate-limit layer of tower-resilience: `window`, `quota` permits a `period`, and a timeout
/// of zero, so that a call finding no permit is refused at once (by default it would wait up
/// to 100 ms for one).
fn resilience_limiter(window: WindowType, quota: usize, period: Duration) -> RateLimiterLayer {
    RateLimiterLayer::builder()
        .window_type(window)
        .limit_for_period(quota)
        .refresh_period(period)
        .timeout_duration(Duration::ZERO)
        .build()
        .expect("a valid rate limiter")
}

/// ironward-tower's `QuotaLayer` running `Sliding` and `Period` against tower-resilience's
/// `RateLimiterLayer` with its `SlidingLog` and `Fixed` windows, the same algorithms, both on
/// the real clock, through the layer (tower service overhead included).
///
/// ironward's layer reads the clock once and decides under a `std` mutex; a refusal also
/// computes the wait and boxes a `Limited` (an allocation). tower-resilience's `call` clones
/// the inner service and two `Arc`s, boxes an async block (an allocation), and in it takes a
/// `std` mutex around the window; it reads `Instant::now` three times when it admits (the
/// start of the wait, the window, the event it emits) and four when it refuses (the timeout
/// left too), and clones its name (a `String`, an allocation) into the event on every
/// decision, listeners or not.
///
/// tower-resilience sends no `RateLimit` fields, so ironward's layer is built without them
/// here, like for like; what they cost an admitted request is `layer_rate_limit allowed`
/// beside `allowed_without_headers`.
///
/// Allowed: a million in 1 ms, a rate of a billion a second that no run reaches (the real
/// clock makes "a million in 1 s" run out within the run), so each call drops about one old
/// stamp and adds one, as in `sliding`. Refused: a quota of 1 for an hour, used in the setup.
fn layer_rate_limit(c: &mut Criterion) {
    let mut g = group(c, "layer_rate_limit");
    let (ms, hour) = (Duration::from_millis(1), Duration::from_secs(3600));
    let cases = [
        ("sliding_log", "allowed", 1_000_000u32, ms),
        ("sliding_log", "refused", 1, hour),
        ("fixed_window", "allowed", 1_000_000, ms),
        ("fixed_window", "refused", 1, hour),
    ];
    for (window, case, quota, period) in cases {
        let refused = case == "refused";
        g.bench_function(format!("ironward/{window}/{case}"), |b| {
            let limit = match window {
                "sliding_log" => Quota::sliding(quota, period),
                _ => Quota::period(quota, period),
            };
            let layer = QuotaLayer::new(limit).with_headers(false);
            let mut service = layer.layer(Backend { fail: false });
            assert!(send(&mut service).is_ok());
            let in_state = |service: &mut _| {
                let sent: Result<_, BoxError> = send(service);
                match sent {
                    Ok(_) => !refused,
                    Err(err) => refused && err.is::<Limited>(),
                }
            };
            assert!(in_state(&mut service));
            b.iter(|| send(&mut service).is_ok());
            assert!(in_state(&mut service));
        });
        g.bench_function(format!("tower-resilience/{window}/{case}"), |b| {
            let kind = match window {
                "sliding_log" => WindowType::SlidingLog,
                _ => WindowType::Fixed,
            };
            let layer = resilience_limiter(kind, quota as usize, period);
            let mut service = layer.layer(Backend { fail: false });
            assert!(send(&mut service).is_ok());
            let in_state = |service: &mut _| match send(service) {
                Ok(_) => !refused,
                Err(err) => refused && matches!(err, RateLimiterServiceError::RateLimited),
            };
            assert!(in_state(&mut service));
            b.iter(|| send(&mut service).is_ok());
            assert!(in_state(&mut service));
        });
    }
    g.finish();
}

/// A `Dice` that rolls whatever `draw` holds (an `f64`'s bits), so a setup can change it.
fn dice(draw: &Arc<AtomicU64>) -> Dice {
    let draw = Arc::clone(draw);
    Dice::from_fn(move || f64::from_bits(draw.load(Ordering::Relaxed)))
}

/// ironward-tower's `BreakerLayer` (the SRE preset, a fixed draw as in `breaker`) against
/// tower-resilience's `CircuitBreakerLayer` (its defaults: a count window of 100, opening at
/// a 50 % failure rate, and an hour's wait in open), both on the real clock, through the layer
/// (tower service overhead included). Both treat an error from the inner service as a failure.
///
/// `healthy_call`: a call that succeeds through a healthy breaker. ironward reads its clock
/// and the draw and decides under a `std` mutex in `call`, then reads the clock again and
/// records the success under the mutex when the response future completes (an `Arc` clone
/// held by the future in between); nothing is allocated.
/// tower-resilience checks its state atomically in `poll_ready`, then `call` clones the inner
/// service and two `Arc`s and boxes an async block that takes a tokio mutex to admit and again
/// to record; it reads `Instant::now` four times (the admission event, the call's start and
/// end, the success event) and clones its name (a `String`) for each of its two events.
///
/// `refusing_call`: a call refused by a breaker that 100 failed calls opened. ironward is asked
/// with a draw of 0, which its throttle refuses (the probe lets one call a second through); a
/// refusal is `BreakerRefused`, which carries the core's `SreReason` (56 bytes, so the one
/// `Box` of the error is an allocation, and its free is in the row too). tower-resilience,
/// open, takes its tokio mutex in `poll_ready` and reads the clock to check the wait, then
/// `call` boxes an async block that takes the mutex again to emit the rejection event (a clock
/// read and a `String` clone) before failing.
fn layer_breaker(c: &mut Criterion) {
    let mut g = group(c, "layer_breaker");
    for case in ["healthy_call", "refusing_call"] {
        let refusing = case == "refusing_call";
        g.bench_function(format!("ironward/{case}"), |b| {
            let draw = Arc::new(AtomicU64::new(0.5f64.to_bits()));
            let layer = BreakerLayer::new(SRE).with_dice(dice(&draw));
            if refusing {
                draw.store(0.99f64.to_bits(), Ordering::Relaxed);
                let mut failing = layer.layer(Backend { fail: true });
                for _ in 0..100 {
                    let _ = send(&mut failing);
                }
                draw.store(0.0f64.to_bits(), Ordering::Relaxed);
            }
            let mut service = layer.layer(Backend { fail: false });
            let in_state = |service: &mut _| {
                let sent: Result<_, BoxError> = send(service);
                match sent {
                    Ok(_) => !refusing,
                    Err(err) => refusing && err.is::<BreakerRefused>(),
                }
            };
            assert!(in_state(&mut service));
            b.iter(|| send(&mut service).is_ok());
            assert!(in_state(&mut service));
        });
        resilience_breaker(&mut g, case);
    }
    g.finish();
}

/// tower-resilience's row of `case` in a layer breaker group: its `CircuitBreakerLayer` with
/// its defaults and an hour's wait in open (see `layer_breaker`), opened by 100 failed calls
/// for `refusing_call`.
fn resilience_breaker(g: &mut BenchmarkGroup<'_, WallTime>, case: &str) {
    let refusing = case == "refusing_call";
    g.bench_function(format!("tower-resilience/{case}"), |b| {
        let (layer, handle) = CircuitBreakerLayer::builder()
            .wait_duration_in_open(Duration::from_secs(3600))
            .build_with_handle()
            .expect("a valid circuit breaker");
        if refusing {
            let mut failing = layer.layer(Backend { fail: true });
            for _ in 0..100 {
                let _ = send(&mut failing);
            }
            assert!(handle.is_open());
        }
        let mut service = layer.layer(Backend { fail: false });
        let in_state = |service: &mut _| match send(service) {
            Ok(_) => !refusing,
            Err(err) => refusing && matches!(err, CircuitBreakerError::OpenCircuit),
        };
        assert!(in_state(&mut service));
        b.iter(|| send(&mut service).is_ok());
        assert!(in_state(&mut service));
    });
}

/// ironward-tower's `BreakerLayer` running the classic family, against tower-resilience's
/// `CircuitBreakerLayer`, the same breaker: both resilience4j's defaults (a count window of
/// 100 calls opening at half of them failed) with an hour's wait in open, on the real clock,
/// through the layer (tower service overhead included), an error from the inner service a
/// failure for both. tower-resilience's rows are those of `layer_breaker`, measured again
/// here.
///
/// `ironward` is `BreakerLayer::for_breaker::<SharedClassicBreaker>(CLASSIC_HOUR)`: `call`
/// reads the clock and asks the shared breaker (its opening's loads, no lock, while healthy),
/// and the response future reads the clock again and passes the success (a compare-and-swap
/// on the thread's stripe); after each decision the layer asks for a change of state (one
/// load). `mutex` is the same layer over `Mutex<ClassicBreaker>`, the lock taken to ask, to
/// settle and to take a change of state. Refusing: 100 failed calls opened each breaker; a
/// refusal is `BreakerRefused<ClassicReason>` (its `Box` an allocation, its free in the row
/// too), decided from the refusal it published without a lock by `SharedClassicBreaker`,
/// under the lock by `Mutex<ClassicBreaker>`.
fn layer_classic_breaker(c: &mut Criterion) {
    let mut g = group(c, "layer_classic_breaker");
    for case in ["healthy_call", "refusing_call"] {
        classic_layer::<SharedClassicBreaker>(&mut g, "ironward", case);
        classic_layer::<Mutex<ClassicBreaker>>(&mut g, "mutex", case);
        resilience_breaker(&mut g, case);
    }
    g.finish();
}

/// The row `<crate>/<case>` of `layer_classic_breaker`: ironward-tower's layer over the
/// shared form `B` of the classic breaker.
fn classic_layer<B>(g: &mut BenchmarkGroup<'_, WallTime>, name: &str, case: &str)
where
    B: SharedCircuitBreaker<Policy = Classic, Reason = ClassicReason>,
{
    let refusing = case == "refusing_call";
    g.bench_function(format!("{name}/{case}"), |b| {
        let layer = BreakerLayer::for_breaker::<B>(CLASSIC_HOUR);
        if refusing {
            let mut failing = layer.layer(Backend { fail: true });
            for _ in 0..100 {
                let _ = send(&mut failing);
            }
        }
        let mut service = layer.layer(Backend { fail: false });
        let in_state = |service: &mut _| {
            let sent: Result<_, BoxError> = send(service);
            match sent {
                Ok(_) => !refusing,
                Err(err) => refusing && err.is::<BreakerRefused<ClassicReason>>(),
            }
        };
        assert!(in_state(&mut service));
        b.iter(|| send(&mut service).is_ok());
        assert!(in_state(&mut service));
    });
}

fn main() {
    let mut c = common::criterion();
    sliding(&mut c);
    breaker(&mut c);
    layer_rate_limit(&mut c);
    layer_breaker(&mut c);
    layer_classic_breaker(&mut c);
    c.final_summary();
}
