//! Tokens settled on a shared form other than the one that made them: a `SharedSreBreaker`'s
//! or a `SharedClassicBreaker`'s permit and a `SharedShedder`'s ticket change nothing on
//! another instance, on the lock-free paths as on the locked ones, come back to the caller
//! and are counted; a `SharedLimiter`'s permit holds its own limiter, so it settles there
//! whatever limiter is at hand.

use std::time::Duration;

use ironward::classic::{Force, Record, State};
use ironward::limit::{AIMD, Aimd, Algorithm};
use ironward::{
    ADAPTIVE, Adaptive, CLASSIC, Classic, ClassicBreaker, Criticality, SHED, SRE, Settle,
};
use ironward_tokio::{
    Admission, Clock, SharedClassicBreaker, SharedLimiter, SharedShedder, SharedSreBreaker,
};

use crate::shared_classic::inside;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// The successes and failures in a shared breaker's window.
fn outcomes(breaker: &SharedSreBreaker) -> (u64, u64) {
    let mut seen = (0, 0);
    breaker.snapshot().window().each(ms(150), |t| {
        seen = (seen.0 + t.success, seen.1 + t.failure);
    });
    seen
}

#[test]
fn a_permit_settled_on_another_shared_breaker_records_nothing() {
    let (a, b) = (
        SharedSreBreaker::new(SRE, ms(0)),
        SharedSreBreaker::new(SRE, ms(0)),
    );
    // Healthy: the permits come from A's fast path, and B's `pass` would add to a stripe.
    for i in 0..50 {
        let permit = a.allow(ms(i), 0.5).expect("a healthy breaker");
        let permit = b.pass(permit, ms(i)).expect("not b's");
        assert!(a.pass(permit, ms(i)).is_none());
    }
    // A failure of A's told to B would start B refusing.
    for i in 50..150 {
        let permit = a.allow(ms(i), 0.99).expect("over the drop fraction");
        let permit = b.fail(permit, ms(i)).expect("not b's");
        assert!(a.fail(permit, ms(i)).is_none());
    }
    assert_eq!((b.ratio(ms(150)), b.foreign()), (0.0, 150));
    assert_eq!(outcomes(&b), (0, 0), "b's window holds nothing");
    assert_eq!((outcomes(&a), a.foreign()), ((50, 100), 0));
}

#[test]
fn a_classic_permit_settled_on_another_shared_classic_breaker_records_nothing() {
    // B opens at its first failure recorded, and counts a success on a stripe on its fast path.
    let strict = Classic {
        record: Record::Consecutive { failures: 1 },
        ..CLASSIC
    };
    let (a, b) = (
        SharedClassicBreaker::new(CLASSIC, ms(0)),
        SharedClassicBreaker::new(strict, ms(0)),
    );
    let settle_on_b = |permit| {
        let permit = b.pass(permit, ms(1)).expect("not b's");
        b.fail(permit, ms(1)).expect("not b's")
    };
    // Healthy: A's permits come from its fast path.
    for i in 0..50 {
        let permit = settle_on_b(a.allow(ms(i)).expect("closed"));
        assert!(a.pass(permit, ms(i)).is_none());
    }
    // Recording but never opening, a state put in by hand: A's permits are its exact
    // breaker's, settled under its lock.
    let watching = Classic {
        force: Force::MetricsOnly,
        ..CLASSIC
    };
    a.retune(watching, ms(50));
    for i in 50..150 {
        let permit = settle_on_b(a.allow(ms(i)).expect("forced to let calls through"));
        assert!(a.fail(permit, ms(i)).is_none());
    }
    assert_eq!((a.foreign(), b.foreign()), (0, 300));
    assert_eq!(
        inside(&b.snapshot()),
        inside(&ClassicBreaker::new(strict, ms(0))),
        "b recorded nothing, nor read a clock"
    );
    assert_eq!((b.state(ms(150)), b.transitions()), (State::Closed, 0));
    // A recorded every one of its own: back on its record, which holds 100 failures of the
    // last 100 calls, the next failure opens it (on an empty record it would not).
    a.retune(CLASSIC, ms(150));
    let permit = a.allow(ms(150)).expect("closed until the next outcome");
    assert!(a.fail(permit, ms(150)).is_none());
    assert_eq!(a.state(ms(150)), State::Open);
}

#[test]
fn a_ticket_settled_on_another_shared_shedder_leaves_both_counts_alone() {
    let (a, b) = (
        SharedShedder::new(SHED, ms(0)),
        SharedShedder::new(SHED, ms(0)),
    );
    let ours = b.allow(ms(0), 0).expect("a cool server");
    // Cool: A's tickets come from its fast path, and B's `pass` would go to a stripe.
    let theirs = a.allow(ms(0), 0).expect("a cool server");
    let theirs = b.pass(theirs, ms(20)).expect("not b's");
    let theirs = b.fail(theirs).expect("not b's");
    assert_eq!((b.flying(), b.passes(ms(20)).count, b.foreign()), (1, 0, 2));
    assert!(a.pass(theirs, ms(20)).is_none());
    assert!(b.fail(ours).is_none());
    assert_eq!((a.flying(), b.flying(), a.passes(ms(20)).count), (0, 0, 1));
}

#[test]
fn a_shared_limiters_permit_settles_on_its_own_limiter() {
    let one = Adaptive {
        algorithm: Algorithm::Aimd(Aimd {
            initial: 1,
            min: 1,
            ..AIMD
        }),
        ..ADAPTIVE
    };
    let (clock, _hand) = Clock::manual(Duration::ZERO);
    let (a, b) = (
        SharedLimiter::new(one, clock.clone()),
        SharedLimiter::new(one, clock),
    );
    let Admission::Admitted(theirs) = a.admit(Criticality::Critical) else {
        panic!("room in a")
    };
    let Admission::Admitted(ours) = b.admit(Criticality::Critical) else {
        panic!("room in b")
    };
    theirs.settle(Settle::Success);
    assert_eq!((a.flying(), b.flying()), (0, 1));
    ours.settle(Settle::Success);
    assert_eq!(b.flying(), 0);
}
