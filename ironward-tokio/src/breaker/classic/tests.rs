//! Unit tests of `SharedClassicBreaker` that read its fast path's state.

use std::sync::atomic::Ordering;

use ironward::CLASSIC;
use ironward::classic::{Force, OpenWait, Record};

use super::fast::{CLOSED, COUNT, REFUSING};
use super::*;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Whether the fast path is open, and its horizon, as the lock holder sees them.
fn fast_path(breaker: &SharedClassicBreaker) -> (bool, u64) {
    let exact = breaker.exact();
    (exact.open, exact.horizon)
}

#[test]
fn a_fresh_breaker_opens_the_fast_path_until_its_record_says() {
    assert_eq!(
        fast_path(&SharedClassicBreaker::new(CLASSIC, ms(1_000))),
        (true, u64::MAX)
    );
    let time = Classic {
        record: Record::Time {
            span: ms(1_000),
            buckets: 4,
        },
        ..CLASSIC
    };
    let breaker = SharedClassicBreaker::new(time, ms(1_100));
    assert_eq!(fast_path(&breaker), (true, nanos(ms(1_250))));
    for force in [Force::Open, Force::Disabled, Force::MetricsOnly] {
        let forced = SharedClassicBreaker::new(Classic { force, ..CLASSIC }, ms(0));
        assert!(!fast_path(&forced).0, "{force:?}");
    }
}

#[test]
fn healthy_calls_before_the_horizon_take_no_lock() {
    let breaker = SharedClassicBreaker::new(CLASSIC, ms(0));
    let held = breaker.exact();
    // With the lock held here, a call that took it would never return.
    for i in 0..10 {
        let permit = breaker.check(ms(i)).expect("closed");
        assert!(breaker.pass(permit, ms(i + 1)).is_none());
    }
    drop(held);
    let counted: u64 = breaker
        .stripes
        .iter()
        .map(|stripe| stripe.word.load(Ordering::Relaxed) & COUNT)
        .sum();
    assert_eq!(counted, 10);
    // Anything under the lock hands them over first.
    assert_eq!(breaker.ratio(ms(20)), 0.0);
    assert!(breaker.stripes.iter().all(|stripe| {
        let word = stripe.word.load(Ordering::Relaxed);
        word & CLOSED == 0 && word & COUNT == 0
    }));
    let snapshot = breaker.snapshot();
    assert_eq!(snapshot.latest(), ms(10));
}

#[test]
fn a_slow_success_and_a_failure_take_the_lock() {
    let policy = Classic {
        slow_call: ms(5),
        ..CLASSIC
    };
    let breaker = SharedClassicBreaker::new(policy, ms(0));
    let slow = breaker.check(ms(0)).expect("closed");
    let failed = breaker.check(ms(0)).expect("closed");
    let tag = breaker.stripes.mine().word.load(Ordering::Relaxed) & !COUNT;
    breaker.pass(slow, ms(6));
    breaker.fail(failed, ms(6));
    // Each took a turn under the lock: two closes and openings, so the tag moved on twice,
    // and nothing was counted on a stripe.
    let word = breaker.stripes.mine().word.load(Ordering::Relaxed);
    assert_eq!(word & COUNT, 0);
    assert_ne!(word & !COUNT, tag);
}

#[test]
fn a_full_stripe_hands_its_successes_over_under_the_lock() {
    let breaker = SharedClassicBreaker::new(CLASSIC, ms(0));
    let stripe = breaker.stripes.mine();
    let word = stripe.word.load(Ordering::Relaxed);
    stripe.word.store(word | (COUNT - 1), Ordering::Relaxed);
    // The last count the word holds is still an add; the next goes to the lock, which
    // records all of them.
    let permit = breaker.check(ms(0)).expect("closed");
    breaker.pass(permit, ms(0));
    assert_eq!(stripe.word.load(Ordering::Relaxed) & COUNT, COUNT);
    let permit = breaker.check(ms(0)).expect("closed");
    breaker.pass(permit, ms(0));
    assert_eq!(stripe.word.load(Ordering::Relaxed) & COUNT, 0);
    assert_eq!(breaker.state(ms(0)), ironward::classic::State::Closed);
}

#[test]
fn a_permit_of_an_earlier_stage_counts_for_nothing() {
    let policy = Classic {
        record: Record::Consecutive { failures: 1 },
        open: OpenWait::Fixed(ms(10)),
        probes: 1,
        ..CLASSIC
    };
    let breaker = SharedClassicBreaker::new(policy, ms(0));
    let early = breaker.check(ms(0)).expect("closed");
    breaker.fail(breaker.check(ms(0)).expect("closed"), ms(0));
    breaker.pass(breaker.check(ms(10)).expect("the probe"), ms(10));
    // Closed again, in a later stage: the early permit's success is not counted.
    assert!(fast_path(&breaker).0);
    breaker.pass(early, ms(11));
    let counted: u64 = breaker
        .stripes
        .iter()
        .map(|stripe| stripe.word.load(Ordering::Relaxed) & COUNT)
        .sum();
    assert_eq!(counted, 0);
    assert_eq!(breaker.transitions(), 3);
}

#[test]
fn untaken_changes_of_state_keep_the_latest_pending() {
    let policy = Classic {
        record: Record::Consecutive { failures: 1 },
        open: OpenWait::Fixed(Duration::ZERO),
        probes: 1,
        ..CLASSIC
    };
    let breaker = SharedClassicBreaker::new(policy, ms(0));
    // Each round: closed to open, open to half-open, half-open to closed.
    let rounds = SharedClassicBreaker::PENDING as u64;
    for i in 0..rounds {
        breaker.fail(breaker.check(ms(i)).expect("closed"), ms(i));
        breaker.pass(breaker.check(ms(i)).expect("the probe"), ms(i));
    }
    assert_eq!(breaker.transitions(), 3 * rounds);
    let taken: Vec<_> = std::iter::from_fn(|| breaker.take_transition()).collect();
    assert_eq!(taken.len(), SharedClassicBreaker::PENDING);
    // The newest is kept: the last change closed the breaker.
    assert_eq!(taken.last().map(|t| t.to), Some(State::Closed));
    assert_eq!(breaker.opening.pending.load(Ordering::Relaxed), 0);
}

#[test]
fn debug_does_not_wait_for_the_lock() {
    let breaker = SharedClassicBreaker::new(CLASSIC, ms(0));
    let text = format!("{breaker:?}");
    assert!(text.contains("open: true"), "{text}");
    let held = breaker.exact();
    assert!(format!("{breaker:?}").contains("<locked>"));
    drop(held);
}

/// A breaker that opens at its first failure, for `wait`, with one probe.
fn opened(wait: Duration) -> SharedClassicBreaker {
    let policy = Classic {
        record: Record::Consecutive { failures: 1 },
        open: OpenWait::Fixed(wait),
        probes: 1,
        ..CLASSIC
    };
    let breaker = SharedClassicBreaker::new(policy, ms(0));
    breaker.fail(breaker.check(ms(0)).expect("closed"), ms(0));
    assert_eq!(breaker.take_transition().map(|t| t.to), Some(State::Open));
    breaker
}

#[test]
fn an_open_breaker_refuses_without_the_lock_until_its_wait_ends() {
    let breaker = opened(ms(100));
    assert!(breaker.stripes.iter().all(|stripe| {
        let word = stripe.word.load(Ordering::Relaxed);
        word & CLOSED == 0 && word & REFUSING != 0
    }));
    let held = breaker.exact();
    // With the lock held here, a call that took it would never return.
    for (now, next) in [(10, 90), (40, 60), (20, 60), (99, 1)] {
        let reason = breaker.check(ms(now)).expect_err("open");
        assert_eq!(
            (
                reason.state,
                reason.next,
                reason.failure_rate,
                reason.slow_rate
            ),
            (State::Open, ms(next), 1.0, 0.0),
            "at {now} ms: a reading before the latest reads as the latest"
        );
    }
    drop(held);
    // Anything under the lock hands the times over first.
    assert_eq!(breaker.snapshot().latest(), ms(99));
    // The end of the wait takes the lock, where the breaker moves half-open.
    let probe = breaker.check(ms(100)).expect("the probe");
    assert_eq!(
        breaker.take_transition().map(|t| t.to),
        Some(State::HalfOpen)
    );
    assert!(!fast_path(&breaker).0 && !breaker.exact().refusing);
    let reason = breaker.check(ms(101)).expect_err("the probe is out");
    assert_eq!(reason.state, State::HalfOpen);
    breaker.pass(probe, ms(102));
    assert_eq!(breaker.take_transition().map(|t| t.to), Some(State::Closed));
    assert!(fast_path(&breaker).0);
}

#[test]
fn a_forced_open_breaker_refuses_without_the_lock_to_the_end_of_the_clock() {
    let forced = Classic {
        force: Force::Open,
        ..CLASSIC
    };
    let breaker = SharedClassicBreaker::new(forced, ms(0));
    assert!(breaker.exact().refusing);
    let held = breaker.exact();
    for now in [ms(5), ms(0), Duration::from_nanos(u64::MAX - 1)] {
        let reason = breaker.check(now).expect_err("forced open");
        assert_eq!(
            (reason.state, reason.next),
            (State::ForcedOpen, Duration::MAX)
        );
    }
    // Forced, the clock's last nanosecond is refused as every other.
    let reason = breaker.check(Duration::MAX).expect_err("forced open");
    assert_eq!(reason.state, State::ForcedOpen);
    drop(held);
    // Lifting the force closes the refusing path (and, the clock at its end, opens none).
    breaker.retune(CLASSIC, Duration::MAX);
    assert_eq!(breaker.state(Duration::MAX), State::Closed);
    assert!(!breaker.exact().refusing && !fast_path(&breaker).0);
    // Forcing it again opens the refusing path only while the clock has a time before its
    // end: here none, so the lock refuses.
    breaker.retune(forced, Duration::MAX);
    assert!(!breaker.exact().refusing);
    assert_eq!(
        breaker.check(ms(0)).expect_err("forced").state,
        State::ForcedOpen
    );
}

#[test]
fn a_settle_while_refusing_takes_the_lock_and_counts_for_nothing() {
    let policy = Classic {
        record: Record::Consecutive { failures: 1 },
        open: OpenWait::Fixed(ms(100)),
        ..CLASSIC
    };
    let breaker = SharedClassicBreaker::new(policy, ms(0));
    let early = breaker.check(ms(0)).expect("closed");
    breaker.fail(breaker.check(ms(0)).expect("closed"), ms(0));
    let tag = breaker.stripes.mine().word.load(Ordering::Relaxed) & !COUNT;
    assert_ne!(tag & REFUSING, 0);
    assert!(breaker.pass(early, ms(10)).is_none());
    // A turn under the lock: the path closed and opened again, refusing, under a new tag.
    let word = breaker.stripes.mine().word.load(Ordering::Relaxed);
    assert_ne!(word & REFUSING, 0);
    assert_ne!(word & !COUNT, tag);
    assert_eq!(breaker.snapshot().latest(), ms(10));
    assert_eq!(breaker.check(ms(10)).expect_err("open").next, ms(90));
    assert_eq!(breaker.transitions(), 1);
}
