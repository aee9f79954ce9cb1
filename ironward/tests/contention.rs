//! `SharedGate` under contention, on real threads: it never holds more than its limit, never
//! loses a `leave`, and ends where it started.

use std::sync::Barrier;
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread;

use ironward::SharedGate;

const THREADS: u32 = 8;
const ROUNDS: u32 = 100_000;

/// Every thread enters and leaves `ROUNDS` times. Each admitted thread adds itself to a
/// counter of those inside before it looks, so the counter is at least the number the gate
/// has admitted and not yet seen leave: if it ever passed the limit, the gate would have
/// admitted past it.
fn hammer(gate: &SharedGate, limit: u32, retune: impl Fn(u32) + Sync) -> (u32, u32) {
    let inside = AtomicU32::new(0);
    let most = AtomicU32::new(0);
    let barrier = Barrier::new(THREADS as usize);
    let admitted: u32 = thread::scope(|s| {
        let workers: Vec<_> = (0..THREADS)
            .map(|thread| {
                let (inside, most, barrier, retune) = (&inside, &most, &barrier, &retune);
                s.spawn(move || {
                    barrier.wait();
                    let mut admitted = 0;
                    for round in 0..ROUNDS {
                        if thread == 0 {
                            retune(round);
                        }
                        if gate.enter() {
                            let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                            most.fetch_max(now, Ordering::Relaxed);
                            assert!(now <= limit, "{now} inside a gate of {limit}");
                            assert!(gate.held() <= limit, "held {} of {limit}", gate.held());
                            inside.fetch_sub(1, Ordering::SeqCst);
                            gate.leave();
                            admitted += 1;
                        }
                    }
                    admitted
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).sum()
    });
    (admitted, most.load(Ordering::Relaxed))
}

#[test]
fn eight_threads_never_hold_more_than_the_limit_and_end_empty() {
    for limit in [1, 3, 7] {
        let gate = SharedGate::new(limit);
        let (admitted, most) = hammer(&gate, limit, |_| {});
        assert_eq!(gate.held(), 0, "every leave was counted (limit {limit})");
        assert_eq!(gate.limit(), limit);
        assert!(
            admitted > 0 && most >= 1 && most <= limit,
            "{admitted} {most}"
        );
    }
}

// A limit that moves under the threads between 1 and 4 never lets in more than 4, the
// highest limit ever in force, and loses no holder.
#[test]
fn a_limit_retuned_under_contention_is_never_passed_and_loses_no_holder() {
    let gate = SharedGate::new(4);
    let (admitted, _) = hammer(&gate, 4, |round| {
        let _was = gate.retune(1 + round % 4);
    });
    assert_eq!(gate.held(), 0);
    assert!(admitted > 0);
}

// Hostile inputs on every thread at once: leaves with nobody inside, a limit of 0 and of
// `u32::MAX`. Nothing panics, the count never goes below zero (it would wrap to a huge
// `held`), and a limit of 0 admits nobody.
#[test]
fn leaves_without_enters_and_extreme_limits_never_panic_or_underflow() {
    let closed = SharedGate::new(0);
    let open = SharedGate::new(u32::MAX);
    thread::scope(|s| {
        for _ in 0..THREADS {
            s.spawn(|| {
                for _ in 0..10_000 {
                    closed.leave();
                    assert!(!closed.enter());
                    open.leave();
                    assert!(open.held() <= THREADS);
                    assert!(open.enter());
                    open.leave();
                }
            });
        }
    });
    assert_eq!((closed.held(), closed.limit()), (0, 0));
    assert_eq!((open.held(), open.limit()), (0, u32::MAX));
}
