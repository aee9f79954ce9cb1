//! `SharedPeriod` under contention, on real threads: each period admits at most its quota,
//! on one clock or a clock per thread, aligned or not, and a retune under load never lets a
//! mix of old and new terms over-admit.
//!
//! Each thread passes its own manual clock, so readings arrive out of order between threads,
//! as they do in a server where one thread reads the clock and another swaps first. The bound
//! is the one the type's docs prove for any order: each period admits at most the quota, and
//! the periods that admit anything start at least a period apart, so over a run the events
//! admitted are at most the quota for each period-long stretch up to the latest reading.

use std::sync::Barrier;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread;
use std::time::Duration;

use ironward::{SharedPeriod, Usage};

const THREADS: u64 = 8;

/// Runs `work(thread, barrier)` on every thread at once, summing what each returns.
fn hammer(work: impl Fn(u64, &Barrier) -> [u64; 2] + Sync) -> [u64; 2] {
    let barrier = Barrier::new(THREADS as usize);
    thread::scope(|s| {
        let workers: Vec<_> = (0..THREADS)
            .map(|thread| {
                let (barrier, work) = (&barrier, &work);
                s.spawn(move || {
                    barrier.wait();
                    work(thread, barrier)
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().unwrap())
            .fold([0; 2], |a, b| [a[0] + b[0], a[1] + b[1]])
    })
}

/// Both ways of placing periods.
fn both(quota: u32, period: Duration) -> [SharedPeriod; 2] {
    [
        SharedPeriod::new(quota, period),
        SharedPeriod::aligned(quota, period),
    ]
}

// Eight threads on one clock that moves a whole period between rounds, every thread asking
// far more than the quota: each round's period admits exactly the quota, with exactly one
// `Hit`, never one event more.
#[test]
fn each_period_admits_exactly_the_quota_and_hits_once() {
    const ROUNDS: u64 = 200;
    for limit in both(7, Duration::from_micros(1)) {
        let admitted: Vec<AtomicU64> = (0..ROUNDS).map(|_| AtomicU64::new(0)).collect();
        let hits: Vec<AtomicU64> = (0..ROUNDS).map(|_| AtomicU64::new(0)).collect();
        hammer(|_, barrier| {
            for round in 0..ROUNDS {
                let now = Duration::from_micros(round);
                for _ in 0..20 {
                    match limit.take(now) {
                        Usage::Under => admitted[round as usize].fetch_add(1, Ordering::Relaxed),
                        Usage::Hit => {
                            hits[round as usize].fetch_add(1, Ordering::Relaxed);
                            admitted[round as usize].fetch_add(1, Ordering::Relaxed)
                        }
                        Usage::Over => 0,
                    };
                }
                barrier.wait();
            }
            [0; 2]
        });
        for round in 0..ROUNDS as usize {
            assert_eq!(admitted[round].load(Ordering::Relaxed), 7, "round {round}");
            assert_eq!(hits[round].load(Ordering::Relaxed), 1, "round {round}");
        }
    }
}

// A manual clock per thread, each at its own pace, so the readings the counter sees jump back
// and forth between threads. The events admitted stay within the quota for each period-long
// stretch up to the latest reading any thread passed, and an admitted take's headroom is
// never past the quota.
#[test]
fn a_clock_per_thread_never_passes_the_quota_per_period() {
    for (quota, period) in [(5, 1_000), (1, 10_000), (0, 100), (1000, 50_000)] {
        for limit in both(quota, Duration::from_nanos(period)) {
            let [admitted, _] = hammer(|thread, _| {
                let mut admitted = 0;
                for round in 0..50_000_u64 {
                    // Thread `k` runs its clock at `k + 1` ns a round: 50 µs at most for
                    // thread 0, 400 µs for thread 7, and out of step with every other.
                    let now = Duration::from_nanos(round * (thread + 1));
                    if let Ok(room) = limit.check_left(now) {
                        assert!(room.left < quota, "{room:?}");
                        assert!(room.reset <= Duration::from_nanos(period), "{room:?}");
                        admitted += 1;
                    }
                }
                [admitted, 0]
            });
            let latest = 49_999 * THREADS;
            let stretches = latest / period + 1;
            assert!(
                admitted <= u64::from(quota) * stretches,
                "{admitted} over {stretches} periods of {quota}"
            );
            assert!(admitted >= u64::from(quota).min(1), "{admitted}");
        }
    }
}

// A retune between two terms on one thread while seven take: the events admitted stay within
// the bound for the more generous of the two (the larger quota over the shorter period), and
// every read shows one of the two terms, never a mix. Periods opened at the first event only:
// an aligned counter retuned to a coarser grid moves the open period's start back over periods
// already counted, as `Period::retune` does, so its bound is per period, not per stretch.
#[test]
fn a_retune_under_contention_never_passes_the_larger_terms() {
    let terms = [
        (5, Duration::from_micros(3)),
        (20, Duration::from_micros(1)),
    ];
    {
        let limit = SharedPeriod::new(5, Duration::from_micros(3));
        let [admitted, _] = hammer(|thread, _| {
            let mut admitted = 0;
            for round in 0..30_000_u64 {
                let now = Duration::from_nanos(round * 10);
                if thread == 0 {
                    let (quota, period) = terms[(round % 2) as usize];
                    limit.retune(quota, period, now);
                    let seen = (limit.quota(), limit.period());
                    assert!(terms.contains(&seen), "{seen:?}");
                } else if limit.take(now) != Usage::Over {
                    admitted += 1;
                }
                assert!(limit.left(now) <= 20);
                assert!(limit.next(now) <= Duration::from_micros(3));
            }
            [admitted, 0]
        });
        let stretches = 29_999 * 10 / 1_000 + 1;
        assert!(admitted <= 20 * stretches, "{admitted}");
        assert!(admitted > 0);
    }
}

// Hostile readings on every thread at once: the end of the clock, zero, and readings far
// apart, with quotas of 0 and `u32::MAX`. Nothing panics, a quota of 0 admits nothing, and
// `left` never passes the quota.
#[test]
fn hostile_readings_under_contention_never_panic() {
    for quota in [0, 3, u32::MAX] {
        for limit in both(quota, Duration::from_secs(1)) {
            let [admitted, _] = hammer(|thread, _| {
                let mut admitted = 0;
                for round in 0..20_000_u64 {
                    let now = match round % 3 {
                        0 => Duration::MAX,
                        1 => Duration::ZERO,
                        _ => Duration::from_nanos(round.wrapping_mul(thread) << 40),
                    };
                    if limit.take(now) != Usage::Over {
                        admitted += 1;
                    }
                    assert!(limit.left(now) <= quota);
                    assert!(limit.next(now) <= Duration::from_secs(1));
                }
                [admitted, 0]
            });
            if quota == 0 {
                assert_eq!(admitted, 0);
            } else {
                assert!(admitted >= u64::from(quota.min(3)));
            }
        }
    }
}
