//! The cost of one decision, ironward beside the crates users would otherwise pick.
//!
//! One group per piece. Inside a group every function runs the same workload on the same clock
//! source; where the clock is passed in, time is advanced in criterion's batch setup, outside
//! the measured routine, for ironward (a `u64` add) and for governor (its `FakeRelativeClock`)
//! alike. Groups whose name ends in `real_clock` read `std::time::Instant` inside the routine
//! for every crate in them, but for their `_coarse_clock` rows, which read ironward-tokio's
//! `Clock::coarse`. Allowed and refused paths are separate parameters. Every result goes
//! through `black_box`. `scripts/bench` turns the estimates into `BENCHMARKS.md`.

mod common;

use common::{Stepping, failsafe_breaker, group, quota, sre_breaker};

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::{BatchSize, Bencher, BenchmarkGroup, Criterion};
use ironward::http_retry::parse_http_date;
use ironward::{
    BACKOFF, Backoff, Bucket, Budget, Deadline, Gate, Jitter, Period, SHED, SRE, Shed, Shedder,
    Sliding, Sre, SreBreaker,
};
use ironward_tokio::Clock;

/// Runs `f` once per element with a time `step` nanoseconds later than the last, the step
/// being taken in the batch setup so that it is not measured.
fn stepped<O>(b: &mut Bencher<'_>, step: u64, mut f: impl FnMut(Duration) -> O) {
    let mut t = 0u64;
    b.iter_batched(
        || {
            t += step;
            Duration::from_nanos(t)
        },
        |now| f(black_box(now)),
        BatchSize::SmallInput,
    );
}

/// `Bucket::take` against governor's direct `check`, both in `iter` on a [`Stepping`] clock
/// read inside the routine. Allowed: a million tokens a second, burst 10, a step of 1 µs, so
/// every call finds one. Refused: one token a second, burst 1, a step of 1 ns, drained before
/// measuring; `refused_check` is the same through `Bucket::check`, which builds the reason.
/// Both check after the measurement that the last call went the intended way.
fn bucket(c: &mut Criterion) {
    let mut g = group(c, "bucket_fake_clock");
    for (case, rate, burst, step) in [("allowed", 1_000_000, 10, 1_000), ("refused", 1, 1, 1)] {
        g.bench_function(format!("ironward/{case}"), |b| {
            let mut bucket = Bucket::new(f64::from(rate), f64::from(burst), Duration::ZERO);
            if case == "refused" {
                assert!(bucket.take(Duration::ZERO, 1.0));
            }
            let clock = Stepping::new(step);
            b.iter(|| bucket.take(Duration::from_nanos(clock.tick()), 1.0));
            let next = Duration::from_nanos(clock.tick());
            assert_eq!(bucket.take(next, 1.0), case == "allowed");
        });
        // The refused workload through `check`. The reason goes through `black_box`, so it is
        // built in full, and the row returns a `bool` as the `take` row does (its wait is
        // worked out only when asked, which nobody does here).
        if case == "refused" {
            g.bench_function("ironward/refused_check", |b| {
                let mut bucket = Bucket::new(1.0, 1.0, Duration::ZERO);
                assert!(bucket.take(Duration::ZERO, 1.0));
                let clock = Stepping::new(step);
                b.iter(|| {
                    black_box(bucket.check(Duration::from_nanos(clock.tick()), 1.0)).is_err()
                });
                let next = Duration::from_nanos(clock.tick());
                assert!(bucket.check(next, 1.0).is_err());
            });
        }
        g.bench_function(format!("governor/{case}"), |b| {
            let clock = Stepping::new(step);
            let limiter = governor::RateLimiter::direct_with_clock(quota(rate, burst), clock);
            if case == "refused" {
                assert!(limiter.check().is_ok());
            }
            b.iter(|| limiter.check().is_ok());
            assert_eq!(limiter.check().is_ok(), case == "allowed");
        });
    }
    g.finish();

    // The real clock, read inside the routine by both: `Instant::now` for each, governor's
    // `MonotonicClock` being exactly that.
    let mut g = group(c, "bucket_real_clock");
    for (case, rate, burst) in [("allowed", 1_000_000_000, 10), ("refused", 1, 1)] {
        g.bench_function(format!("ironward/{case}"), |b| {
            let start = Instant::now();
            let mut bucket = Bucket::new(f64::from(rate), f64::from(burst), start.elapsed());
            if case == "refused" {
                assert!(bucket.take(start.elapsed(), 1.0));
            }
            b.iter(|| bucket.take(black_box(start.elapsed()), 1.0));
        });
        g.bench_function(format!("governor/{case}"), |b| {
            let limiter = governor::RateLimiter::direct_with_clock(
                quota(rate, burst),
                governor::clock::MonotonicClock,
            );
            if case == "refused" {
                assert!(limiter.check().is_ok());
            }
            b.iter(|| limiter.check().is_ok());
        });
    }
    g.finish();
}

/// `Sliding::take`, `Period::take`, `Gate::enter`, `Deadline` alone.
fn windows(c: &mut Criterion) {
    let mut g = group(c, "sliding");
    // A million a second over 1 s with a step of 1 µs is always allowed; a quota of 1 used up
    // at the start refuses for the whole (short) fake run.
    for (case, quota, step) in [("allowed", 1_000_000, 1_000), ("refused", 1, 1)] {
        g.bench_function(format!("ironward/{case}"), |b| {
            let mut sliding = Sliding::new(quota, Duration::from_secs(1));
            if case == "refused" {
                assert!(sliding.take(Duration::ZERO));
            }
            stepped(b, step, |now| sliding.take(now));
        });
    }
    g.finish();

    let mut g = group(c, "period");
    for (case, quota, step) in [("allowed", 1_000_000, 1_000), ("refused", 1, 1)] {
        g.bench_function(format!("ironward/{case}"), |b| {
            let mut period = Period::new(quota, Duration::from_secs(1));
            if case == "refused" {
                let _ = period.take(Duration::ZERO);
            }
            stepped(b, step, |now| period.take(now));
        });
    }
    g.finish();

    let mut g = group(c, "gate");
    g.bench_function("ironward/allowed", |b| {
        let mut gate = Gate::new(8);
        b.iter(|| {
            let entered = gate.enter();
            gate.leave();
            black_box(entered)
        });
    });
    g.bench_function("ironward/refused", |b| {
        let mut gate = Gate::new(1);
        assert!(gate.enter());
        b.iter(|| black_box(&mut gate).enter());
    });
    g.finish();

    let mut g = group(c, "deadline");
    let deadline = Deadline::start(Duration::from_secs(1), Duration::ZERO);
    for (case, at) in [("within", 500_000_000u64), ("expired", 2_000_000_000)] {
        g.bench_function(format!("ironward/{case}"), |b| {
            b.iter(|| black_box(&deadline).remaining(black_box(Duration::from_nanos(at))));
        });
    }
    g.finish();
}

/// `Backoff::delay` for the third retry against backon's iterator giving its third delay (the
/// first two are drawn in the setup): 100 ms, factor 2, cap 1 s on both sides.
fn backoff(c: &mut Criterion) {
    use backon::BackoffBuilder;
    let builder = backon::ExponentialBuilder::default()
        .with_min_delay(Duration::from_millis(100))
        .with_factor(2.0)
        .with_max_delay(Duration::from_secs(1))
        .with_max_times(10);
    let mut g = group(c, "backoff");
    let rigid = Backoff {
        jitter: Jitter::Rigid,
        ..BACKOFF
    };
    g.bench_function("ironward/rigid", |b| {
        b.iter(|| black_box(&rigid).delay(black_box(3), black_box(0.5), None));
    });
    g.bench_function("backon/rigid", |b| {
        b.iter_batched(
            || {
                let mut it = builder.build();
                it.next();
                it.next();
                it
            },
            |mut it| it.next(),
            BatchSize::SmallInput,
        );
    });
    // backon draws its jitter from its own generator inside `next`; ironward takes the draw
    // from the caller, so its row includes a xorshift step to pay for one too.
    let full = Backoff {
        jitter: Jitter::Full,
        ..BACKOFF
    };
    g.bench_function("ironward/jittered", |b| {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        b.iter(|| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let random = (x >> 11) as f64 / (1u64 << 53) as f64;
            black_box(&full).delay(black_box(3), random, None)
        });
    });
    let jittered = builder.with_jitter();
    g.bench_function("backon/jittered", |b| {
        b.iter_batched(
            || {
                let mut it = jittered.build();
                it.next();
                it.next();
                it
            },
            |mut it| it.next(),
            BatchSize::SmallInput,
        );
    });
    g.bench_function("ironward/preset", |b| {
        b.iter(|| black_box(&BACKOFF).delay(black_box(3), black_box(0.5), None));
    });
    g.finish();
}

/// `parse_http_date` against `httpdate::parse_http_date` on the same strings.
fn http_date(c: &mut Criterion) {
    let mut g = group(c, "http_date");
    for (case, input) in [
        ("valid", "Sun, 06 Nov 1994 08:49:37 GMT"),
        ("invalid", "Sun, 06 Nov 1994 08:49:37 XYZ"),
    ] {
        g.bench_function(format!("ironward/{case}"), |b| {
            b.iter(|| parse_http_date(black_box(input)));
        });
        g.bench_function(format!("httpdate/{case}"), |b| {
            b.iter(|| httpdate::parse_http_date(black_box(input)).ok());
        });
    }
    g.finish();
}

/// A breaker that refuses: a run of failures at the start, read within the same second.
fn refusing(sre: Sre) -> SreBreaker {
    let mut breaker = SreBreaker::new(sre, Duration::ZERO);
    for i in 0..100 {
        if let Some(permit) = breaker.allow(Duration::from_micros(i), 0.99) {
            breaker.fail(permit, Duration::from_micros(i));
        }
    }
    assert!(breaker.allow(Duration::from_micros(100), 0.0).is_none());
    breaker
}

/// A healthy breaker allows and settles a success (`healthy`), or only allows
/// (`healthy_allow`); a refusing one is asked with a draw of 0, which its throttle refuses,
/// through `allow` (`refusing`) or `check` (`refusing_check`, which builds the reason).
/// Time steps 1 ns a call, so no probe falls in the run.
fn breaker(c: &mut Criterion) {
    let mut g = group(c, "breaker");
    for size in [10, 40, 100, 1000] {
        let sre = Sre { size, ..SRE };
        g.bench_function(format!("ironward/healthy/{size}"), |b| {
            let mut breaker = SreBreaker::new(sre, Duration::ZERO);
            stepped(b, 1, |now| match breaker.allow(now, 0.5) {
                Some(permit) => {
                    breaker.pass(permit, now);
                    true
                }
                None => false,
            });
        });
        // `allow` alone on a window full of successes; the permit is dropped unsettled, which
        // leaves the record as it was.
        g.bench_function(format!("ironward/healthy_allow/{size}"), |b| {
            let mut breaker = SreBreaker::new(sre, Duration::ZERO);
            for i in 0..1_000u64 {
                let at = Duration::from_millis(i * 10);
                if let Some(permit) = breaker.allow(at, 0.5) {
                    breaker.pass(permit, at);
                }
            }
            let mut t = 10_000_000_000u64;
            b.iter_batched(
                || {
                    t += 1;
                    Duration::from_nanos(t)
                },
                |now| breaker.allow(black_box(now), 0.5).is_some(),
                BatchSize::SmallInput,
            );
        });
        g.bench_function(format!("ironward/refusing/{size}"), |b| {
            let mut breaker = refusing(sre);
            let mut t = 200_000;
            b.iter_batched(
                || {
                    t += 1;
                    Duration::from_nanos(t)
                },
                |now| breaker.allow(black_box(now), 0.0).is_some(),
                BatchSize::SmallInput,
            );
        });
        // The same refusals through `check`. The reason goes through `black_box`, so it is
        // built in full, and the row returns a `bool` as the `allow` row does: criterion keeps
        // every output of a batch, and would measure storing 64 bytes instead of one. (A
        // permit, never given here, would be dropped unsettled.)
        g.bench_function(format!("ironward/refusing_check/{size}"), |b| {
            let mut breaker = refusing(sre);
            let mut t = 200_000;
            b.iter_batched(
                || {
                    t += 1;
                    Duration::from_nanos(t)
                },
                |now| black_box(breaker.check(black_box(now), 0.0).map(drop)).is_ok(),
                BatchSize::SmallInput,
            );
        });
    }
    g.finish();

    // failsafe reads its own clock; ironward reads `Instant` here so that both pay for time.
    // The `_coarse_clock` twins read ironward-tokio's `Clock::coarse` (one load of a time a
    // thread of its own ticks every millisecond) instead, as a layer built
    // `with_clock(Clock::coarse(..))` does: failsafe reads no clock while closed, and on
    // `Instant` the reading is most of ironward's row.
    use failsafe::CircuitBreaker;
    let mut g = group(c, "breaker_real_clock");
    let coarse = Clock::coarse(Duration::from_millis(1));
    let start = Instant::now();
    sre_on_clock(&mut g, "", || start.elapsed());
    sre_on_clock(&mut g, "_coarse_clock", || coarse.now());
    g.bench_function("failsafe/healthy", |b| {
        let breaker = failsafe_breaker(false);
        b.iter(|| breaker.call(|| Ok::<_, ()>(black_box(1u8))).is_ok());
    });
    g.bench_function("failsafe/refusing", |b| {
        let breaker = failsafe_breaker(true);
        b.iter(|| breaker.call(|| Ok::<_, ()>(black_box(1u8))).is_ok());
    });
    g.finish();
}

/// `SreBreaker`'s rows of `breaker_real_clock` on the clock `now`, named with `suffix`. A
/// generic function rather than a loop over `&dyn Fn` clocks: the call through a pointer
/// would be timed with ironward's rows and not failsafe's.
fn sre_on_clock(g: &mut BenchmarkGroup<'_, WallTime>, suffix: &str, now: impl Fn() -> Duration) {
    g.bench_function(format!("ironward/healthy{suffix}"), |b| {
        let mut breaker = sre_breaker(true, &now);
        b.iter(|| {
            let now = now();
            match breaker.allow(now, 0.5) {
                Some(permit) => {
                    breaker.pass(permit, now);
                    true
                }
                None => false,
            }
        });
        assert!(breaker.allow(now(), 0.5).is_some());
    });
    g.bench_function(format!("ironward/refusing{suffix}"), |b| {
        let mut breaker = sre_breaker(false, &now);
        assert!(breaker.allow(now(), 0.0).is_none());
        b.iter(|| breaker.allow(now(), 0.0).is_some());
        assert!(breaker.allow(now(), 0.0).is_none());
    });
}

/// A shedder of `size` buckets, every one holding a pass, with far more in flight than they
/// show the server carries, so that a hot CPU refuses; with the reading, in nanoseconds, to
/// step on from.
fn overloaded(size: usize) -> (Shedder, u64) {
    let shed = Shed { size, ..SHED };
    let mut shedder = Shedder::new(shed, Duration::ZERO);
    let width = shed.window.as_nanos() as u64 / size as u64;
    for k in 0..size as u64 {
        let ticket = shedder.allow(Duration::from_nanos(k * width), 100);
        let done = Duration::from_nanos(k * width + 1_000);
        shedder.pass(ticket.expect("a cool CPU"), done);
    }
    let last = Duration::from_nanos((size as u64 - 1) * width + 2_000);
    let tickets: Vec<_> = (0..300).filter_map(|_| shedder.allow(last, 100)).collect();
    for ticket in tickets.into_iter().take(100) {
        shedder.pass(ticket, last);
    }
    assert!(shedder.allow(last, 1000).is_none());
    (shedder, last.as_nanos() as u64)
}

/// `Shedder::allow` with a cool CPU (allowed, settled at once), and with a hot CPU and far
/// more in flight than the window shows the server carries (refused) at 10 to 1000 buckets,
/// through `allow` (`refused`) or `check` (`refused_check`, which builds the reason).
///
/// Before a refused row is measured every bucket of its window holds a pass, which is the
/// worst case for a shedder that scans its buckets per call; the clock then steps 1 ns a
/// call, so over a run the newest buckets complete and the oldest leave as in service.
fn shedder(c: &mut Criterion) {
    let mut g = group(c, "shedder");
    g.bench_function("ironward/allowed", |b| {
        let mut shedder = Shedder::new(SHED, Duration::ZERO);
        stepped(b, 1, |now| match shedder.allow(now, 100) {
            Some(ticket) => {
                shedder.pass(ticket, now);
                true
            }
            None => false,
        });
    });
    for size in [10, 50, 100, 1000] {
        g.bench_function(format!("ironward/refused/{size}"), |b| {
            let (mut shedder, mut t) = overloaded(size);
            b.iter_batched(
                || {
                    t += 1;
                    Duration::from_nanos(t)
                },
                |now| shedder.allow(black_box(now), 1000).is_some(),
                BatchSize::SmallInput,
            );
        });
        // The same refusals through `check`, the reason built in full as the breaker's is.
        g.bench_function(format!("ironward/refused_check/{size}"), |b| {
            let (mut shedder, mut t) = overloaded(size);
            b.iter_batched(
                || {
                    t += 1;
                    Duration::from_nanos(t)
                },
                |now| black_box(shedder.check(black_box(now), 1000).map(drop)).is_ok(),
                BatchSize::SmallInput,
            );
        });
    }
    g.finish();
}

/// `Budget` against tower's `TpsBudget`: a success deposited then a retry withdrawn (allowed,
/// one retry per success on both), and a withdrawal from an empty budget (refused). tower reads
/// `Instant` inside; ironward's budget has no clock.
fn budget(c: &mut Criterion) {
    use tower::retry::budget::{Budget as _, TpsBudget};
    let mut g = group(c, "budget");
    g.bench_function("ironward/allowed", |b| {
        let mut budget = Budget::new(10, 1.0);
        b.iter(|| {
            budget.pass();
            let allowed = budget.can_retry();
            if allowed {
                budget.fail();
            }
            black_box(allowed)
        });
    });
    g.bench_function("tower/allowed", |b| {
        let budget = TpsBudget::new(Duration::from_secs(10), 0, 1.0);
        b.iter(|| {
            budget.deposit();
            budget.withdraw()
        });
    });
    g.bench_function("ironward/refused", |b| {
        let mut budget = Budget::new(10, 0.1);
        for _ in 0..10 {
            budget.fail();
        }
        assert!(!budget.can_retry());
        b.iter(|| black_box(&budget).can_retry());
    });
    g.bench_function("tower/refused", |b| {
        let budget = TpsBudget::new(Duration::from_secs(10), 0, 0.1);
        assert!(!budget.withdraw());
        b.iter(|| budget.withdraw());
    });
    g.finish();
}

/// `Limiter::acquire` with its `settle`, as one element: a call let in, finished 1 ms later,
/// sampled. Windows close on their count (no minimum time), so that every `size` calls one
/// reaches the algorithm: the average at 10 calls a window, and the 90th percentile at 10,
/// 100 and 1000, which must cost the same per call however large the window. `refused` is a
/// full limiter turning a critical call away.
fn limiter(c: &mut Criterion) {
    use ironward::limit::{Algorithm, GRADIENT2, Latency, SAMPLING, Sampling};
    use ironward::{ADAPTIVE, Adaptive, Limiter, Settle};
    let policy = |size, latency| Adaptive {
        algorithm: Algorithm::Gradient2(GRADIENT2),
        sampling: Sampling {
            size,
            min_window: Duration::ZERO,
            max_window: Duration::ZERO,
            latency,
            ..SAMPLING
        },
        ..ADAPTIVE
    };
    let mut g = group(c, "limiter");
    let cases = [
        ("average/10", 10, Latency::Average),
        ("p90/10", 10, Latency::Percentile(0.9)),
        ("p90/100", 100, Latency::Percentile(0.9)),
        ("p90/1000", 1000, Latency::Percentile(0.9)),
    ];
    for (name, size, latency) in cases {
        g.bench_function(format!("ironward/allowed/{name}"), |b| {
            let mut limiter = Limiter::new(policy(size, latency), Duration::ZERO);
            let mut windows = 0u64;
            stepped(b, 1_000, |now| match limiter.acquire(now) {
                Ok(grant) => {
                    // The latency varies over a window, so the percentile has work to do.
                    let rtt = Duration::from_micros(1_000 + now.as_nanos() as u64 % 997);
                    limiter.settle(grant, Settle::Success, now + rtt);
                    windows += u64::from(limiter.limit());
                    true
                }
                Err(_) => false,
            });
            black_box(windows);
        });
    }
    g.bench_function("ironward/refused", |b| {
        let mut limiter = Limiter::new(ADAPTIVE, Duration::ZERO);
        let held: Vec<_> = std::iter::from_fn(|| limiter.acquire(Duration::ZERO).ok()).collect();
        stepped(b, 1, |now| black_box(limiter.acquire(now)).is_ok());
        drop(held);
    });
    g.finish();
}

fn main() {
    let mut c = common::criterion();
    limiter(&mut c);
    bucket(&mut c);
    windows(&mut c);
    backoff(&mut c);
    http_date(&mut c);
    breaker(&mut c);
    shedder(&mut c);
    budget(&mut c);
    c.final_summary();
}
