//! `SharedBucket` under contention, on real threads: over a run it never admits more than
//! `burst + rate · elapsed`, whole costs or fractional, on one clock or a clock per thread,
//! and a retune under load never lets a mix of old and new terms over-admit.
//!
//! Each thread passes its own manual clock, so readings arrive out of order between threads,
//! as they do in a server where one thread reads the clock and another swaps first. The bound
//! is the one the type's docs prove for any order: the ticks admitted are at most the latest
//! reading admitted plus one burst.

use std::sync::Barrier;
use std::thread;
use std::time::Duration;

use ironward::SharedBucket;

const THREADS: u64 = 8;

/// Runs `work(thread)` on every thread at once, summing what each returns.
fn hammer(work: impl Fn(u64) -> f64 + Sync) -> f64 {
    let barrier = Barrier::new(THREADS as usize);
    thread::scope(|s| {
        let workers: Vec<_> = (0..THREADS)
            .map(|thread| {
                let (barrier, work) = (&barrier, &work);
                s.spawn(move || {
                    barrier.wait();
                    work(thread)
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).sum()
    })
}

/// `burst + rate · elapsed`, with room for the one tick the burst is rounded up by and the
/// float sum of the costs admitted.
fn bound(rate: f64, burst: f64, elapsed: Duration) -> f64 {
    (burst + rate * elapsed.as_secs_f64()) * (1.0 + 1e-12) + rate / 4e9
}

// Eight threads share one clock reading that only moves forward between rounds: exactly the
// burst plus what accrued is admitted, not one token more, and every token of it is used
// (the threads ask far more than the rate gives).
#[test]
fn eight_threads_on_one_clock_admit_exactly_the_burst_plus_the_refill() {
    let bucket = SharedBucket::new(1000.0, 50.0, Duration::ZERO);
    let clock = std::sync::atomic::AtomicU64::new(0);
    let admitted = hammer(|thread| {
        let mut admitted = 0.0;
        for round in 0..20_000_u64 {
            if thread == 0 && round % 10 == 0 {
                clock.fetch_add(100_000, std::sync::atomic::Ordering::Relaxed);
            }
            let now = Duration::from_nanos(clock.load(std::sync::atomic::Ordering::Relaxed));
            if bucket.take(now, 1.0) {
                admitted += 1.0;
            }
        }
        admitted
    });
    let elapsed = Duration::from_nanos(clock.into_inner());
    assert!(
        admitted <= bound(1000.0, 50.0, elapsed),
        "{admitted} in {elapsed:?}"
    );
    // The last reading's refill may still be unclaimed by the time the threads stop asking.
    assert!(
        admitted >= 50.0 + 1000.0 * elapsed.as_secs_f64() - 101.0,
        "{admitted}"
    );
}

// A manual clock per thread, each at its own pace, so the readings the bucket sees jump back
// and forth between threads; fractional costs. The tokens admitted stay within the bound for
// the latest reading any thread passed.
#[test]
fn a_clock_per_thread_and_fractional_costs_never_pass_the_bound() {
    for (rate, burst) in [(10_000.0, 20.0), (3.0, 1.0), (1e9, 1e9), (0.0, 7.5)] {
        let bucket = SharedBucket::new(rate, burst, Duration::ZERO);
        let admitted = hammer(|thread| {
            let mut admitted = 0.0;
            for round in 0..50_000_u64 {
                // Thread `k` runs its clock at `k + 1` ns a round: 50 µs at most for thread 0,
                // 400 µs for thread 7, and out of step with every other.
                let now = Duration::from_nanos(round * (thread + 1));
                let n = [0.3, 1.0, 0.05, 2.5][(round % 4) as usize];
                if bucket.take(now, n) {
                    admitted += n;
                }
            }
            admitted
        });
        let latest = Duration::from_nanos(49_999 * THREADS);
        assert!(
            admitted <= bound(rate, burst, latest),
            "{admitted} at {rate}/s, burst {burst}"
        );
        assert!(
            admitted >= burst.min(7.5) - 2.5,
            "the burst is there: {admitted}"
        );
    }
}

// A retune between two terms on one thread while seven take: the tokens admitted stay within
// the bound for the more generous of the two (the larger rate and the larger burst), and
// every retune leaves a bucket that reports one of the two.
#[test]
fn a_retune_under_contention_never_passes_the_larger_terms() {
    let terms = [(100.0, 10.0), (1000.0, 3.0)];
    let bucket = SharedBucket::new(100.0, 10.0, Duration::ZERO);
    let admitted = hammer(|thread| {
        let mut admitted = 0.0;
        for round in 0..30_000_u64 {
            let now = Duration::from_micros(round);
            if thread == 0 {
                let (rate, burst) = terms[(round % 2) as usize];
                bucket.retune(rate, burst, now);
                let seen = (bucket.rate(), bucket.burst());
                assert!(terms.contains(&seen), "{seen:?}");
            } else if bucket.take(now, 1.0) {
                admitted += 1.0;
            }
            let held = bucket.tokens(now);
            assert!((0.0..=10.0).contains(&held), "{held}");
        }
        admitted
    });
    let elapsed = Duration::from_micros(30_000);
    assert!(admitted <= bound(1000.0, 10.0, elapsed), "{admitted}");
    assert!(admitted > 0.0);
}

// Hostile costs and readings on every thread at once: NaN, negative and infinite costs, the
// end of the clock, readings before the bucket was made. Nothing panics, nothing hostile is
// admitted, and the bucket never holds more than its burst.
#[test]
fn hostile_costs_and_readings_under_contention_never_panic_or_admit() {
    let bucket = SharedBucket::new(5.0, 4.0, Duration::from_secs(10));
    let admitted = hammer(|thread| {
        let mut admitted = 0.0;
        for round in 0..20_000_u64 {
            let now = match round % 3 {
                0 => Duration::MAX,
                1 => Duration::ZERO,
                _ => Duration::from_secs(10) + Duration::from_nanos(round * thread),
            };
            for n in [f64::NAN, -1.0, f64::INFINITY, f64::NEG_INFINITY] {
                assert!(!bucket.take(now, n));
                assert_eq!(bucket.next(now, n), Duration::MAX);
            }
            if bucket.take(now, 0.5) {
                admitted += 0.5;
            }
            assert!(bucket.tokens(now) <= 4.0);
        }
        admitted
    });
    // Time stops 2^59 ns after the bucket was made.
    let span = Duration::from_nanos((1 << 59) - 1);
    assert!(admitted <= bound(5.0, 4.0, span));
    assert!(admitted >= 4.0);
}
