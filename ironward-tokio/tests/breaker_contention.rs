//! `SharedSreBreaker` under contention, on real threads sharing one manual clock: no success,
//! failure or refusal is lost, each lands in the bucket of its time, and a breaker the
//! `&mut` `SreBreaker` would have refusing lets nothing through on the fast path.

use std::sync::Barrier;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread;
use std::time::Duration;

use ironward::{SRE, Sre, Tally};
use ironward_tokio::{Clock, SharedSreBreaker};

const THREADS: usize = 4;

/// What one phase's calls came to, summed over the threads.
#[derive(Debug, Default)]
struct Counts {
    success: AtomicU64,
    failure: AtomicU64,
    drop: AtomicU64,
}

impl Counts {
    fn tally(&self) -> Tally {
        let (success, failure, drop) = (
            self.success.load(Ordering::Relaxed),
            self.failure.load(Ordering::Relaxed),
            self.drop.load(Ordering::Relaxed),
        );
        Tally {
            total: success + failure + drop,
            success,
            failure,
            drop,
        }
    }
}

/// How the calls of a phase end.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    /// Every call succeeds.
    Healthy,
    /// One call in `n` fails, on every thread: the fast path closes and opens under the
    /// others' successes.
    Failing(u64),
    /// Every call fails, at a draw of 0.99, over the drop fraction: enough of these and the
    /// breaker refuses the draws under it.
    Outage,
    /// Every call is asked at a draw of 0: a refusing breaker lets nothing through.
    Refusing,
}

/// Each phase runs at one instant, in a bucket of its own: every thread makes `calls` calls
/// at that time, settling each at once; the clock moves to the next bucket between phases,
/// behind a barrier. Returns what each phase's calls came to, as the threads counted them.
fn phases(breaker: &SharedSreBreaker, width: Duration, plan: &[Phase], calls: u64) -> Vec<Tally> {
    let (clock, hand) = Clock::manual(Duration::ZERO);
    let counts: Vec<Counts> = plan.iter().map(|_| Counts::default()).collect();
    let barrier = Barrier::new(THREADS);
    thread::scope(|s| {
        for thread in 0..THREADS as u64 {
            let (clock, hand, counts, barrier) = (&clock, &hand, &counts, &barrier);
            s.spawn(move || {
                for (phase, &kind) in plan.iter().enumerate() {
                    barrier.wait();
                    let now = clock.now();
                    let counts = &counts[phase];
                    for call in 0..calls {
                        let roll = if kind == Phase::Refusing { 0.0 } else { 0.99 };
                        let fails = match kind {
                            Phase::Healthy | Phase::Refusing => false,
                            Phase::Failing(n) => (call + thread) % n == 0,
                            Phase::Outage => true,
                        };
                        match breaker.allow(now, roll) {
                            Some(permit) if fails => {
                                breaker.fail(permit, now);
                                counts.failure.fetch_add(1, Ordering::Relaxed);
                            }
                            Some(permit) => {
                                breaker.pass(permit, now);
                                counts.success.fetch_add(1, Ordering::Relaxed);
                            }
                            None => {
                                counts.drop.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                    }
                    if barrier.wait().is_leader() {
                        hand.advance(width);
                    }
                }
            });
        }
    });
    counts.iter().map(Counts::tally).collect()
}

/// The window's buckets at `now`, oldest first.
fn buckets(breaker: &SharedSreBreaker, now: Duration) -> Vec<Tally> {
    let mut seen = Vec::new();
    breaker
        .snapshot()
        .window()
        .each(now, |tally| seen.push(*tally));
    seen
}

// Healthy phases, phases with failures among the successes, an outage and the refusals after
// it: every call the threads made is in the window, in its phase's bucket, and the phases
// after the outage let nothing through on the fast path, as the `&mut` breaker would not.
#[test]
fn four_threads_lose_no_outcome_and_fill_each_bucket_with_its_own() {
    use Phase::*;
    // Five buckets of failures are what it takes for the 470 000 successes before them,
    // weighed by a `k` decayed to 1.45, to stop covering the calls.
    let plan = [
        Healthy,
        Healthy,
        Failing(50),
        Healthy,
        Failing(7),
        Healthy,
        Outage,
        Outage,
        Outage,
        Outage,
        Outage,
        Refusing,
        Refusing,
    ];
    // Buckets of 10 ms, more of them than phases, so that nothing leaves the window; a probe
    // far past the run, so that a refusing breaker lets no call through by it.
    let width = Duration::from_millis(10);
    let sre = Sre {
        size: 40,
        window: width * 40,
        probe: Duration::from_secs(3600),
        ..SRE
    };
    let breaker = SharedSreBreaker::new(sre, Duration::ZERO);
    let calls = 20_000;
    let counted = phases(&breaker, width, &plan, calls);
    let end = width * (plan.len() as u32 - 1);
    let window = buckets(&breaker, end);
    let (empty, ours) = window.split_at(window.len() - plan.len());
    assert!(empty.iter().all(|t| *t == Tally::default()), "{empty:?}");
    for (phase, (seen, counted)) in ours.iter().zip(&counted).enumerate() {
        assert_eq!(seen, counted, "phase {phase} ({:?})", plan[phase]);
        assert_eq!(seen.total, calls * THREADS as u64, "phase {phase}");
    }
    assert_eq!(counted[0].success, calls * THREADS as u64);
    for outage in &counted[6..11] {
        assert_eq!(outage.failure, calls * THREADS as u64, "{outage:?}");
    }
    for refusing in &counted[11..] {
        assert_eq!(refusing.drop, calls * THREADS as u64, "{refusing:?}");
    }
    assert!(breaker.ratio(end) > 0.1, "ratio {}", breaker.ratio(end));
}

// The clock moves on under the threads, one thread stepping it across bucket boundaries
// while the others call: the fast path closes and opens at every bucket, with adds racing
// the closes. No outcome is lost, and none lands outside the window's span of the run.
#[test]
fn a_clock_moving_under_the_threads_loses_no_outcome() {
    let sre = Sre {
        size: 64,
        window: Duration::from_secs(64),
        ..SRE
    };
    let breaker = SharedSreBreaker::new(sre, Duration::ZERO);
    let (clock, hand) = Clock::manual(Duration::ZERO);
    let made = AtomicU64::new(0);
    let failed = AtomicU64::new(0);
    let barrier = Barrier::new(THREADS);
    thread::scope(|s| {
        for thread in 0..THREADS as u64 {
            let (breaker, clock, hand, made, failed, barrier) =
                (&breaker, &clock, &hand, &made, &failed, &barrier);
            s.spawn(move || {
                barrier.wait();
                for call in 0..50_000u64 {
                    if thread == 0 && call % 1_000 == 0 {
                        // 50 steps of a third of a bucket: about 16 buckets in all.
                        hand.advance(Duration::from_millis(333));
                    }
                    let now = clock.now();
                    if let Some(permit) = breaker.allow(now, 0.99) {
                        if call % 101 == thread {
                            breaker.fail(permit, clock.now());
                            failed.fetch_add(1, Ordering::Relaxed);
                        } else {
                            breaker.pass(permit, clock.now());
                        }
                        made.fetch_add(1, Ordering::Relaxed);
                    }
                }
            });
        }
    });
    let window = buckets(&breaker, clock.now());
    let sum = |f: fn(&Tally) -> u64| window.iter().map(f).sum::<u64>();
    let made = made.load(Ordering::Relaxed);
    assert_eq!(made, 50_000 * THREADS as u64, "a healthy breaker refused");
    assert_eq!(sum(|t| t.success + t.failure), made);
    assert_eq!(sum(|t| t.failure), failed.load(Ordering::Relaxed));
    assert_eq!(sum(|t| t.drop), 0);
    // Every bucket holding anything is one the clock passed through.
    let used = window.iter().filter(|t| t.total > 0).count();
    assert!((2..=18).contains(&used), "{used} buckets used");
}

// Hostile inputs on every thread at once: the end of the clock, readings going backwards, a
// floor below 1 (no fast path) and retunes between the threads' calls. Nothing panics and no
// outcome is lost.
#[test]
fn hostile_readings_and_retunes_under_contention_lose_nothing() {
    let breaker = SharedSreBreaker::new(SRE, Duration::ZERO);
    let made = AtomicU64::new(0);
    thread::scope(|s| {
        for thread in 0..THREADS as u64 {
            let (breaker, made) = (&breaker, &made);
            s.spawn(move || {
                for call in 0..20_000u64 {
                    if thread == 0 && call % 2_000 == 0 {
                        let floor = if call % 4_000 == 0 { 0.5 } else { 1.1 };
                        let _was =
                            breaker.retune(Sre { floor, ..SRE }, Duration::from_millis(call));
                    }
                    let now = match call % 5 {
                        0 => Duration::MAX,
                        1 => Duration::ZERO,
                        _ => Duration::from_millis(call / 10),
                    };
                    if let Some(permit) = breaker.allow(now, 0.99) {
                        breaker.pass(permit, now);
                        made.fetch_add(1, Ordering::Relaxed);
                    }
                }
            });
        }
    });
    let mut successes = 0;
    breaker
        .snapshot()
        .window()
        .each(Duration::MAX, |t| successes += t.success);
    assert_eq!(successes, made.load(Ordering::Relaxed));
    assert_eq!(made.load(Ordering::Relaxed), 20_000 * THREADS as u64);
}

// A breaker refusing most calls, every thread asking at once on one manual clock that a
// thread moves across bucket ends and past the probe: the refusals decided from the copy of
// the window and those decided under the lock all reach the exact breaker's window, and so
// does every call let through, each as the threads counted it.
#[test]
fn refusals_on_every_thread_all_reach_the_window() {
    let width = Duration::from_millis(10);
    let sre = Sre {
        size: 64,
        window: width * 64,
        probe: Duration::from_millis(25),
        ..SRE
    };
    let breaker = SharedSreBreaker::new(sre, Duration::ZERO);
    // An outage: failures over the drop fraction until the breaker refuses under it.
    for _ in 0..1_000 {
        if let Some(permit) = breaker.allow(Duration::ZERO, 0.99) {
            breaker.fail(permit, Duration::ZERO);
        }
    }
    let sum = |breaker: &SharedSreBreaker, now| {
        buckets(breaker, now)
            .iter()
            .fold(Tally::default(), |sum, t| Tally {
                total: sum.total + t.total,
                success: sum.success + t.success,
                failure: sum.failure + t.failure,
                drop: sum.drop + t.drop,
            })
    };
    assert!(breaker.check(Duration::ZERO, 0.5).is_err(), "refusing");
    let before = sum(&breaker, Duration::ZERO);
    let (clock, hand) = Clock::manual(Duration::ZERO);
    let counts = Counts::default();
    let barrier = Barrier::new(THREADS);
    let calls = 50_000u64;
    thread::scope(|s| {
        for thread in 0..THREADS as u64 {
            let (breaker, clock, hand, counts, barrier) =
                (&breaker, &clock, &hand, &counts, &barrier);
            s.spawn(move || {
                barrier.wait();
                for call in 0..calls {
                    if thread == 0 && call % 2_000 == 0 {
                        // 25 steps of 3 ms: 75 ms in all, across 7 bucket ends and 3 probes.
                        hand.advance(Duration::from_millis(3));
                    }
                    let roll = ((call * 7_919 + thread * 104_729) % 1_000) as f64 / 1_000.0;
                    match breaker.allow(clock.now(), roll) {
                        Some(permit) => {
                            breaker.fail(permit, clock.now());
                            counts.failure.fetch_add(1, Ordering::Relaxed);
                        }
                        None => {
                            counts.drop.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
            });
        }
    });
    let made = counts.tally();
    let after = sum(&breaker, clock.now());
    assert_eq!(made.total, calls * THREADS as u64);
    assert_eq!(after.total - before.total, made.total, "{after:?} {made:?}");
    assert_eq!(after.drop - before.drop, made.drop, "{after:?} {made:?}");
    assert_eq!(after.failure - before.failure, made.failure);
    assert_eq!(after.success, 0);
    // Drawn uniformly, the calls under a drop fraction above 0.9 are refused.
    assert!(made.drop > made.total * 9 / 10, "{made:?}");
}
