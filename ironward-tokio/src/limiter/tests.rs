//! Unit tests of `SharedLimiter` that need its private items.

use std::time::Duration;

use ironward::limit::{AIMD, Aimd, Algorithm};
use ironward::{ADAPTIVE, Adaptive, Criticality};

use super::*;

fn of(limit: u32) -> Adaptive {
    let aimd = Aimd {
        initial: limit,
        min: 1,
        ..AIMD
    };
    Adaptive {
        algorithm: Algorithm::Aimd(aimd),
        ..ADAPTIVE
    }
}

#[test]
fn debug_never_waits_for_the_lock_or_reads_the_clock() {
    let clock = Clock::from_fn(|| Duration::ZERO);
    let limiter = SharedLimiter::new(of(3), clock);
    let shown = format!("{limiter:?}");
    assert!(
        shown.contains("limit: 3") && shown.contains("queue: None"),
        "{shown}"
    );
    let _held = lock(&limiter.inner.state);
    assert_eq!(
        format!("{limiter:?}"),
        "SharedLimiter { state: <locked>, clock: Clock::from_fn, dice: Dice::random }"
    );
}

// A queued call is asked of the core only when the core would let it in: a wait is not a
// refusal, and must not raise the floor for the classes below it, neither when the call
// arrives nor when the queue is looked at again.
#[test]
fn a_waiting_call_is_never_counted_as_refused() {
    let (clock, _hand) = Clock::manual(Duration::ZERO);
    let limiter = SharedLimiter::with_queue(of(2), QUEUE, clock, Dice::from_fn(|| 0.9));
    let Admission::Admitted(a) = limiter.admit(Criticality::CriticalPlus) else {
        panic!("room")
    };
    let Admission::Admitted(b) = limiter.admit(Criticality::CriticalPlus) else {
        panic!("room")
    };
    // A critical call finds no room and waits: the core was not asked.
    let Admission::Queued(waiter) = limiter.admit(Criticality::Critical) else {
        panic!("queued")
    };
    assert_eq!(limiter.floor(), Criticality::Sheddable);
    // A retune looks at the queue: still no room, and asking the core anyway would have
    // been a critical refusal, raising the floor.
    let _ = limiter.retune(of(2));
    assert_eq!(limiter.queued(), 1);
    assert_eq!(limiter.floor(), Criticality::Sheddable);
    // Room: the waiter is let in, though nobody polls it yet.
    a.settle(Settle::Ignored);
    assert_eq!(lock(&limiter.inner.state).granted.len(), 1);
    assert_eq!((limiter.flying(), limiter.queued()), (2, 0));
    // Dropped unpolled, it settles the call it was let in for.
    drop(waiter);
    b.settle(Settle::Ignored);
    assert_eq!(limiter.flying(), 0);
    assert!(lock(&limiter.inner.state).granted.is_empty());
}
