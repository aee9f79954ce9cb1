//! The cost of one decision when two threads share one handle: ironward's shared forms (the
//! core's `SharedGate`, `SharedBudget`, `SharedBucket` and `SharedPeriod`, one atomic word each,
//! and ironward-tokio's `SharedSreBreaker` and `SharedShedder`, a lock only off their common case),
//! each beside the `Mutex` around the core value it replaces (`mutex/...`) and peers shared by
//! `&` (governor's atomics, failsafe's lock, tokio's semaphore, tower's `TpsBudget`). Each
//! shared form also has a row with as many threads as the machine has cores (`*_<n>_threads`
//! names the count), so that a run on a larger machine shows how it scales.
//!
//! Each measurement (criterion's `iter_custom`) splits its `iters` decisions evenly over the
//! threads of the row, started together at a `Barrier`; its time is the wall time from the
//! first thread's start to the last one's end, read inside the threads so that spawning them
//! is not counted. With two threads that is the cost per decision of the pair together: two
//! threads that never got in each other's way would halve the one-thread row (`*_1_thread`,
//! the same handle and the same code on a single spawned thread), and what is left above half
//! is what sharing costs (the lock or the cache line bouncing between the cores). Every
//! measurement counts the decisions that were allowed and checks them against the case.
//!
//! Each thread is pinned to a core of its own where the machine allows it (worker `i` to core
//! `i mod n` of the process's `n` cores; unpinned otherwise, see `threads/harness.rs`), so that
//! the two threads of a row are on two cores and a one-thread row stays on one. The machine has
//! two logical CPUs, shared with whatever else runs on it, so a two-thread row is still only as
//! good as the two threads' chance of running at the same time; `scripts/bench` runs these
//! groups more often than the others and flags a row whose runs disagree. Read them beside
//! `unshared_2_threads`, which measures that chance for a clock read.
//! Everything reads the real clock inside the routine (`Instant`, which governor's
//! `MonotonicClock` is too), except failsafe, which reads none while closed, the gates,
//! which are not about time, and the `_coarse_clock` rows, which read ironward-tokio's
//! `Clock::coarse`. `scripts/bench` turns the estimates into `BENCHMARKS.md`.

mod common;
#[path = "threads/harness.rs"]
mod harness;

use common::{answer, answered, group, send, sre_breaker};
use harness::{failsafe, lock, shared};

use std::hint::black_box;
use std::num::NonZeroU32;
use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion};
use ironward::{Bucket, Budget, SharedBucket, SharedBudget};
use ironward_tower::GateLayer;
use tower::limit::ConcurrencyLimitLayer;
use tower::{Layer, service_fn};

/// One token bucket shared by the threads: ironward's `SharedBucket` (its theoretical
/// arrival time in one `AtomicU64`, a take one compare-and-swap, a refusal one load), the
/// `Mutex<Bucket>` it replaces (the clock read before the lock is taken, as ironward-tower's
/// `QuotaService` did), and governor's direct `RateLimiter` on its `MonotonicClock`,
/// shared by `&` (a compare-and-swap loop on one `AtomicU64`). Allowed: a billion a second
/// with a burst of a billion. The burst is that large because both GCRA forms read the clock
/// once, before their compare-and-swap loop: with a burst of 10 (a 10 ns tolerance at this
/// rate), a reading left stale by the other thread's update refused about 2 % of the calls of
/// a measurement under two threads. Refused: one an hour, burst 1, drained in the setup, so
/// nothing comes back within a run. `*_<n>_threads` is one thread per core
/// (`available_parallelism`); on a two-core machine it is the two-thread row again.
fn bucket(c: &mut Criterion) {
    let mut g = group(c, "shared_bucket_2_threads");
    let nz = |n: u32| NonZeroU32::new(n).expect("a positive count");
    let billion = governor::Quota::per_second(nz(1_000_000_000)).allow_burst(nz(1_000_000_000));
    let hourly = governor::Quota::per_hour(nz(1));
    let cores = thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let all = format!("_{cores}_threads");
    for (case, rate, burst, quota, allowed) in [
        ("allowed", 1e9, 1e9, billion, true),
        ("refused", 1.0 / 3600.0, 1.0, hourly, false),
    ] {
        for (threads, suffix) in [(2, ""), (1, "_1_thread"), (cores, all.as_str())] {
            let start = Instant::now();
            let atomic = SharedBucket::new(rate, burst, start.elapsed());
            if !allowed {
                assert!(atomic.take(start.elapsed(), 1.0));
                assert!(!atomic.take(start.elapsed(), 1.0));
            }
            let bucket = &atomic;
            shared(
                &mut g,
                &format!("ironward/{case}{suffix}"),
                threads,
                allowed,
                |n| vec![bucket; n],
                |bucket| bucket.take(start.elapsed(), 1.0),
            );

            let mutex = Mutex::new(Bucket::new(rate, burst, start.elapsed()));
            if !allowed {
                assert!(lock(&mutex).take(start.elapsed(), 1.0));
                assert!(!lock(&mutex).take(start.elapsed(), 1.0));
            }
            let bucket = &mutex;
            shared(
                &mut g,
                &format!("mutex/{case}{suffix}"),
                threads,
                allowed,
                |n| vec![bucket; n],
                |bucket| {
                    let now = start.elapsed();
                    lock(bucket).take(now, 1.0)
                },
            );

            let limiter =
                governor::RateLimiter::direct_with_clock(quota, governor::clock::MonotonicClock);
            if !allowed {
                assert!(limiter.check().is_ok());
                assert!(limiter.check().is_err());
            }
            let limiter = &limiter;
            shared(
                &mut g,
                &format!("governor/{case}{suffix}"),
                threads,
                allowed,
                |n| vec![limiter; n],
                |limiter| limiter.check().is_ok(),
            );
        }
    }
    g.finish();
}

/// One fixed-window quota shared by the threads: ironward's `SharedPeriod` (the count of the
/// open period in one `AtomicU64`, a take one compare-and-swap, a refusal loads of it, its
/// start and its terms that write nothing), against the `Mutex<Period>` a layer would otherwise share (the clock
/// read before the lock is taken). Periods of an hour, opening at the first event. Allowed: a
/// quota of `u32::MAX`, a fresh counter each measurement, so that every take is admitted.
/// Refused: a quota of 1, spent in the setup, so nothing is admitted within a run. No peer
/// keeps go-zero's fixed window in memory; the rows are the two forms of the one decision.
/// `*_<n>_threads` is one thread per core (`available_parallelism`); on a two-core machine
/// it is the two-thread row again.
fn period(c: &mut Criterion) {
    use ironward::{Period, SharedPeriod, Usage};
    use std::sync::Arc;

    let mut g = group(c, "shared_period_2_threads");
    let hour = Duration::from_secs(3600);
    let cores = thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let all = format!("_{cores}_threads");
    for (case, quota, allowed) in [("allowed", u32::MAX, true), ("refused", 1, false)] {
        for (threads, suffix) in [(2, ""), (1, "_1_thread"), (cores, all.as_str())] {
            let start = Instant::now();
            shared(
                &mut g,
                &format!("ironward/{case}{suffix}"),
                threads,
                allowed,
                |n| {
                    let limit = SharedPeriod::new(quota, hour);
                    if !allowed {
                        assert_eq!(limit.take(start.elapsed()), Usage::Hit);
                    }
                    let shared = Arc::new(limit);
                    vec![shared; n]
                },
                |limit| limit.take(start.elapsed()) != Usage::Over,
            );
            shared(
                &mut g,
                &format!("mutex/{case}{suffix}"),
                threads,
                allowed,
                |n| {
                    let mut limit = Period::new(quota, hour);
                    if !allowed {
                        assert_eq!(limit.take(start.elapsed()), Usage::Hit);
                    }
                    let shared = Arc::new(Mutex::new(limit));
                    vec![shared; n]
                },
                |limit| {
                    let now = start.elapsed();
                    lock(limit).take(now) != Usage::Over
                },
            );
        }
    }
    g.finish();
}

/// One concurrency limit of 8 (or the core count, if higher) shared by the threads, each
/// sending one request at a time through its own clone of the service (as each connection of a
/// server holds its own clone): ironward-tower's `GateService` (one `Arc<SharedGate>`, entered
/// by a compare-and-swap in `call`, left by another when the response future completes)
/// against tower's `ConcurrencyLimit` (one tokio semaphore, a permit taken in `poll_ready` and
/// given back when the response future is dropped). No thread count here fills it, so every
/// request is allowed. `allowed_<n>_threads` is one thread per core (`available_parallelism`);
/// on a two-core machine it is the `allowed` row again.
fn gate(c: &mut Criterion) {
    let mut g = group(c, "shared_gate_2_threads");
    let cores = thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let limit = u32::try_from(cores).unwrap_or(u32::MAX).max(8);
    let all = format!("allowed_{cores}_threads");
    for (threads, case) in [
        (2, "allowed"),
        (1, "allowed_1_thread"),
        (cores, all.as_str()),
    ] {
        let layer = GateLayer::new(limit);
        let service = layer.layer(service_fn(answer));
        shared(
            &mut g,
            &format!("ironward/{case}"),
            threads,
            true,
            |n| vec![service.clone(); n],
            |service| answered(&send(service)),
        );
        assert_eq!(layer.held(), 0);

        let service = ConcurrencyLimitLayer::new(limit as usize).layer(service_fn(answer));
        shared(
            &mut g,
            &format!("tower/{case}"),
            threads,
            true,
            |n| vec![service.clone(); n],
            |service| answered(&send(service)),
        );
    }
    g.finish();
}

/// One retry budget shared by the threads, each with its own `Arc` to it as each client of
/// the retry edges holds one: ironward's `SharedBudget` (one `AtomicU64`, shared by `&`),
/// against the `Mutex<Budget>` it replaces in the edges (locked for each response reported,
/// as they locked it), and tower's `TpsBudget` (shared by `&`: a lock on its generation and
/// atomic slots, reading `Instant` inside). Allowed is two responses of a client's calls: a
/// success reported, then a failure reported and a retry asked for, as the retry engine
/// reports them in gRPC A6's order (`fail`, then `can_retry`; one lock for each response on
/// the mutex, since a success and a failure arrive apart; `deposit` and `withdraw` on
/// tower's); the count never nears half, so every retry is allowed.
/// Healthy: a success reported to a full budget and nothing else, a healthy backend's every
/// response (ironward's writes nothing then). Refused: a retry asked of a spent budget, with no
/// success reported. Each measurement starts from a fresh budget, so
/// that no tower measurement outlives its 10 s window.
fn budget(c: &mut Criterion) {
    use std::sync::Arc;
    use tower::retry::budget::{Budget as _, TpsBudget};

    /// `n` handles to one `value`, one for each thread.
    fn handles<T>(value: T, n: usize) -> Vec<Arc<T>> {
        let shared = Arc::new(value);
        vec![shared; n]
    }
    let mut g = group(c, "shared_budget_2_threads");
    let cores = thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let all = format!("allowed_{cores}_threads");
    for (threads, case) in [(2, "healthy"), (1, "healthy_1_thread")] {
        shared(
            &mut g,
            &format!("ironward/{case}"),
            threads,
            true,
            |n| handles(SharedBudget::new(10, 0.1), n),
            |budget| {
                budget.pass();
                true
            },
        );
        shared(
            &mut g,
            &format!("mutex/{case}"),
            threads,
            true,
            |n| handles(Mutex::new(Budget::new(10, 0.1)), n),
            |budget| {
                lock(budget).pass();
                true
            },
        );
        shared(
            &mut g,
            &format!("tower/{case}"),
            threads,
            true,
            |n| handles(TpsBudget::new(Duration::from_secs(10), 0, 0.1), n),
            |budget| {
                budget.deposit();
                true
            },
        );
    }
    for (threads, allowed, case) in [
        (2, true, "allowed"),
        (1, true, "allowed_1_thread"),
        (cores, true, all.as_str()),
        (2, false, "refused"),
        (1, false, "refused_1_thread"),
    ] {
        let (max_tokens, ratio) = if allowed { (10, 1.0) } else { (10, 0.1) };
        let spent = move |budget: &mut Budget| {
            if !allowed {
                for _ in 0..max_tokens {
                    budget.fail();
                }
            }
        };
        shared(
            &mut g,
            &format!("ironward/{case}"),
            threads,
            allowed,
            |n| {
                let mut budget = Budget::new(max_tokens, ratio);
                spent(&mut budget);
                handles(SharedBudget::from(budget), n)
            },
            |budget| {
                if allowed {
                    budget.pass();
                    budget.fail();
                }
                budget.can_retry()
            },
        );
        shared(
            &mut g,
            &format!("mutex/{case}"),
            threads,
            allowed,
            |n| {
                let mut budget = Budget::new(max_tokens, ratio);
                spent(&mut budget);
                handles(Mutex::new(budget), n)
            },
            |budget| {
                if allowed {
                    lock(budget).pass();
                    let mut budget = lock(budget);
                    budget.fail();
                    return budget.can_retry();
                }
                lock(budget).can_retry()
            },
        );
        shared(
            &mut g,
            &format!("tower/{case}"),
            threads,
            allowed,
            |n| {
                let budget = TpsBudget::new(Duration::from_secs(10), 0, ratio as f32);
                assert!(allowed || !budget.withdraw());
                handles(budget, n)
            },
            |budget| {
                if allowed {
                    budget.deposit();
                }
                budget.withdraw()
            },
        );
    }
    g.finish();
}

/// One breaker shared by the threads, against failsafe's `StateMachine` shared by `&` (a
/// consecutive-failures policy: `call` takes its lock to check the state and, when closed,
/// again to record the outcome; it reads no clock while closed).
///
/// Healthy: a call allowed and recorded as a success, the clock read when it starts and when
/// it ends, as ironward-tower's `BreakerService` drives it (a fixed draw, which a healthy
/// breaker does not look at). `ironward` is ironward-tokio's `SharedSreBreaker` (one load of the
/// horizon and a note of the time to allow, an add to the thread's stripe to pass); `mutex` is
/// the `Mutex<SreBreaker>` it replaced, `allow` and `pass` each under the lock. Refusing: a call
/// refused, the clock read once. ironward's window holds 100 failures, and each draw of 0
/// falls under its drop fraction (the probe an hour, so none is let through); failsafe's
/// breaker is open after 5 failures, for an hour. `<case>_<n>_threads` is one thread per core
/// (`available_parallelism`); on a two-core machine it is the 2-thread row again. The
/// `_coarse_clock` rows read ironward-tokio's `Clock::coarse` (one load of a time a thread of
/// its own ticks every millisecond) for each reading instead of `Instant`, as a layer built
/// `with_clock(Clock::coarse(..))` does: failsafe reads no clock while closed, and on
/// `Instant` the two readings are most of ironward's one-thread row.
fn breaker(c: &mut Criterion) {
    use ironward_tokio::{Clock, SharedSreBreaker};

    let mut g = group(c, "shared_breaker_2_threads");
    let cores = thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let coarse = Clock::coarse(Duration::from_millis(1));
    for healthy in [true, false] {
        let name = if healthy { "healthy" } else { "refusing" };
        let all = format!("{name}_{cores}_threads");
        let one = format!("{name}_1_thread");
        let roll = if healthy { 0.5 } else { 0.0 };
        for (threads, case) in [(2, name), (1, one.as_str())] {
            let breaker = SharedSreBreaker::from(sre_breaker(healthy, || coarse.now()));
            let case = format!("{case}_coarse_clock");
            shared_sre(&mut g, &case, threads, &breaker, roll, || coarse.now());
        }
        for (threads, case) in [(2, name), (1, one.as_str()), (cores, all.as_str())] {
            let start = Instant::now();
            let breaker = SharedSreBreaker::from(sre_breaker(healthy, || start.elapsed()));
            shared_sre(&mut g, case, threads, &breaker, roll, || start.elapsed());

            let start = Instant::now();
            let mutex = Mutex::new(sre_breaker(healthy, || start.elapsed()));
            let breaker = &mutex;
            shared(
                &mut g,
                &format!("mutex/{case}"),
                threads,
                healthy,
                |n| vec![breaker; n],
                |breaker| {
                    let now = start.elapsed();
                    let permit = lock(breaker).allow(now, roll);
                    permit.is_some_and(|permit| {
                        let now = start.elapsed();
                        lock(breaker).pass(permit, now);
                        true
                    })
                },
            );

            failsafe(&mut g, case, threads, healthy);
        }
    }
    g.finish();
}

/// Benches `breaker` shared by `threads` threads as `ironward/<case>`: each call asked with
/// `roll` and, let through, passed, each reading `now`; then checks that the breaker is in
/// the state the draw says (healthy at 0.5, refusing at 0).
fn shared_sre(
    g: &mut BenchmarkGroup<'_, WallTime>,
    case: &str,
    threads: usize,
    breaker: &ironward_tokio::SharedSreBreaker,
    roll: f64,
    now: impl Fn() -> Duration + Sync,
) {
    let healthy = roll > 0.0;
    shared(
        g,
        &format!("ironward/{case}"),
        threads,
        healthy,
        |n| vec![breaker; n],
        |breaker| {
            let permit = breaker.allow(now(), roll);
            permit.is_some_and(|permit| {
                breaker.pass(permit, now());
                true
            })
        },
    );
    assert_eq!(breaker.ratio(now()) == 0.0, healthy);
}

/// One cool server's shedder shared by the threads, every call let in and passing at once,
/// the clock read at its start and at its end (the two readings a response time needs):
/// ironward-tokio's `SharedShedder` (atomic words for the count in flight, its average and
/// the clock, a stripe per thread for the bucket's passes, the lock taken once a bucket),
/// against the `Mutex<Shedder>` it replaces in ironward-tower's `ShedLayer`, locked to decide
/// and again to record, as the layer locked it. No peer keeps go-zero's window; the rows are
/// the two forms of the one decision. `healthy_<n>_threads` is one thread per core
/// (`available_parallelism`); on a two-core machine it is the `healthy` row again.
fn shedder(c: &mut Criterion) {
    use ironward::{SHED, Shedder};
    use ironward_tokio::SharedShedder;
    use std::sync::Arc;

    let mut g = group(c, "shared_shedder_2_threads");
    let cores = thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let all = format!("healthy_{cores}_threads");
    for (threads, case) in [
        (2, "healthy"),
        (1, "healthy_1_thread"),
        (cores, all.as_str()),
    ] {
        let start = Instant::now();
        let shedder = Arc::new(SharedShedder::new(SHED, start.elapsed()));
        shared(
            &mut g,
            &format!("ironward/{case}"),
            threads,
            true,
            |n| vec![Arc::clone(&shedder); n],
            |shedder| {
                let ticket = shedder.allow(start.elapsed(), 100);
                ticket.is_some_and(|ticket| {
                    shedder.pass(ticket, start.elapsed());
                    true
                })
            },
        );
        assert_eq!(shedder.flying(), 0);

        let start = Instant::now();
        let mutex = Arc::new(Mutex::new(Shedder::new(SHED, start.elapsed())));
        shared(
            &mut g,
            &format!("mutex/{case}"),
            threads,
            true,
            |n| vec![Arc::clone(&mutex); n],
            |shedder| {
                let now = start.elapsed();
                let ticket = lock(shedder).allow(now, 100);
                ticket.is_some_and(|ticket| {
                    let now = start.elapsed();
                    lock(shedder).pass(ticket, now);
                    true
                })
            },
        );
        assert_eq!(lock(&mutex).flying(), 0);
    }
    g.finish();
}

/// The machine's own scaling, for reading the rows above: each thread reads `Instant` and
/// shares nothing (`bare`), the cost that dominates the bucket and breaker rows. On a machine
/// whose two CPUs both ran the threads at full speed, the two-thread row would be half the
/// one-thread row; on this shared virtual machine it is not, and the rows above are bounded
/// by it.
fn unshared(c: &mut Criterion) {
    let mut g = group(c, "unshared_2_threads");
    for (threads, case) in [(2, "clock"), (1, "clock_1_thread")] {
        let start = Instant::now();
        shared(
            &mut g,
            &format!("bare/{case}"),
            threads,
            true,
            |n| vec![(); n],
            |()| black_box(start.elapsed()) < Duration::MAX,
        );
    }
    g.finish();
}

fn main() {
    let mut c = common::criterion();
    bucket(&mut c);
    period(&mut c);
    gate(&mut c);
    budget(&mut c);
    breaker(&mut c);
    shedder(&mut c);
    unshared(&mut c);
    c.final_summary();
}
