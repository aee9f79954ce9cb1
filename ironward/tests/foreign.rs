//! Tokens settled on an instance other than the one that made them: every token the core
//! hands out for settling (a limiter's grant, a breaker's permit, a shedder's ticket, a
//! quota's reservation, a ward's connect permit and checkout slot) changes nothing on the
//! wrong instance, comes back to the caller, and is counted where the instance keeps counts.
//!
//! The case reproduced first is a hostile trial's: two limiters with a limit of 2, the grants
//! of one settled on the other, which let the second hold 4 live calls while counting 2 and
//! left the first counting 2 in flight with none live, refusing everything from then on.

use core::time::Duration;

use ironward::limit::{AIMD, Aimd, Algorithm};
use ironward::{
    ADAPTIVE, Adaptive, Bucket, Checkouts, Limit, Limiter, Limits, Period, RECONNECT, Reconnect,
    SHED, SRE, Settle, Shedder, Sliding, SreBreaker, Ward,
};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A limiter whose limit stays at 2 while nothing is dropped.
fn of_two() -> Limiter {
    let aimd = Aimd {
        initial: 2,
        min: 1,
        max: 2,
        ..AIMD
    };
    let policy = Adaptive {
        algorithm: Algorithm::Aimd(aimd),
        ..ADAPTIVE
    };
    Limiter::new(policy, ms(0))
}

#[test]
fn a_grant_settled_on_another_limiter_changes_neither_and_comes_back() {
    let (mut a, mut b) = (of_two(), of_two());
    let from_a = [a.acquire(ms(0)).unwrap(), a.acquire(ms(0)).unwrap()];
    let live_on_b = [b.acquire(ms(0)).unwrap(), b.acquire(ms(0)).unwrap()];
    let mut back = Vec::new();
    for grant in from_a {
        back.push(b.settle(grant, Settle::Success, ms(10)).expect("not b's"));
    }
    // B still counts its own two live calls, and so refuses a third.
    assert_eq!((b.flying(), b.foreign()), (2, 2));
    assert!(b.acquire(ms(10)).is_err(), "b holds 2 live calls of 2");
    // A's grants came back whole, and settle where they belong: A admits again.
    assert_eq!(a.flying(), 2);
    for grant in back {
        assert_eq!(a.settle(grant, Settle::Success, ms(10)), None);
    }
    assert_eq!((a.flying(), a.foreign()), (0, 0));
    assert!(a.acquire(ms(11)).is_ok());
    for grant in live_on_b {
        assert_eq!(b.settle(grant, Settle::Success, ms(12)), None);
    }
    assert_eq!(b.flying(), 0);
}

#[test]
fn a_clone_is_another_limiter() {
    let mut original = of_two();
    let held = original.acquire(ms(0)).unwrap();
    let mut copy = original.clone();
    assert_eq!(copy.flying(), 1, "a clone copies the calls in flight");
    let theirs = copy.acquire(ms(1)).unwrap();
    let theirs = original
        .settle(theirs, Settle::Ignored, ms(2))
        .expect("the clone's grant is not the original's");
    assert_eq!(original.flying(), 1);
    assert_eq!(copy.settle(theirs, Settle::Ignored, ms(2)), None);
    assert_eq!(original.settle(held, Settle::Ignored, ms(2)), None);
    assert_eq!((original.flying(), copy.flying()), (0, 1));
}

#[test]
fn a_permit_settled_on_another_breaker_records_nothing() {
    let (mut a, mut b) = (SreBreaker::new(SRE, ms(0)), SreBreaker::new(SRE, ms(0)));
    for i in 0..100 {
        let permit = a.allow(ms(i), 0.99).expect("a healthy breaker");
        let permit = b.fail(permit, ms(i)).expect("not b's");
        assert!(a.pass(permit, ms(i)).is_none());
    }
    assert_eq!((b.ratio(ms(100)), b.foreign()), (0.0, 100));
    let mut successes = 0;
    a.window().each(ms(100), |t| successes += t.success);
    assert_eq!((successes, a.foreign()), (100, 0));
}

#[test]
fn a_ticket_settled_on_another_shedder_leaves_both_counts_alone() {
    let (mut a, mut b) = (Shedder::new(SHED, ms(0)), Shedder::new(SHED, ms(0)));
    let ours = b.allow(ms(0), 0).expect("idle");
    let theirs = a.allow(ms(0), 0).expect("idle");
    let theirs = b.pass(theirs, ms(20)).expect("not b's");
    let theirs = b.fail(theirs).expect("not b's");
    assert_eq!((b.flying(), b.foreign()), (1, 2));
    assert_eq!(b.passes(ms(20)).count, 0);
    assert!(a.pass(theirs, ms(20)).is_none());
    assert!(b.fail(ours).is_none());
    assert_eq!((a.flying(), b.flying(), a.passes(ms(20)).count), (0, 0, 1));
}

#[test]
fn a_reservation_settled_on_another_quota_refunds_nothing() {
    let secs = Duration::from_secs;
    // A bucket: a refund from another bucket's estimate would fill this one.
    let (mut a, mut b) = (
        Bucket::new(1.0, 1_000.0, secs(0)),
        Bucket::new(1.0, 1_000.0, secs(0)),
    );
    let theirs = a.reserve(secs(0), 800.0, secs(60)).unwrap();
    let ours = b.reserve(secs(0), 800.0, secs(60)).unwrap();
    let theirs = b.settle(theirs, 0.0, secs(0)).expect("not b's");
    assert_eq!(b.tokens(secs(0)), 200.0);
    assert_eq!(a.settle(theirs, 0.0, secs(0)), None);
    assert_eq!(a.tokens(secs(0)), 1_000.0);
    assert_eq!(b.settle(ours, 800.0, secs(0)), None);

    // A log and a period, whose estimates share a stamp and a generation with the other's.
    let (mut a, mut b) = (Sliding::new(1_000, secs(60)), Sliding::new(1_000, secs(60)));
    let theirs = a.reserve(secs(0), 800, secs(60)).unwrap();
    let ours = b.reserve(secs(0), 800, secs(60)).unwrap();
    let theirs = b.settle(theirs, 0, secs(1)).expect("not b's");
    assert_eq!(b.left(secs(1)), 200);
    assert_eq!(a.settle(theirs, 0, secs(1)), None);
    assert_eq!(
        (a.left(secs(1)), b.settle(ours, 800, secs(1))),
        (1_000, None)
    );

    let (mut a, mut b) = (Period::new(1_000, secs(60)), Period::new(1_000, secs(60)));
    let theirs = a.reserve(secs(0), 800, secs(60)).unwrap();
    let ours = b.reserve(secs(0), 800, secs(60)).unwrap();
    let theirs = b.settle(theirs, 0, secs(1)).expect("not b's");
    assert_eq!(b.left(secs(1)), 200);
    assert_eq!(a.settle(theirs, 0, secs(1)), None);
    assert_eq!(
        (a.left(secs(1)), b.settle(ours, 800, secs(1))),
        (1_000, None)
    );
}

#[test]
fn reservations_settled_on_other_limits_settle_none_of_them() {
    let secs = Duration::from_secs;
    let (mut mine, mut other) = (Sliding::new(10, secs(60)), Sliding::new(10, secs(60)));
    let mut tokens = Period::new(1_000, secs(60));
    let reservations = Limits([
        Limit::Sliding(&mut mine, 1),
        Limit::Period(&mut tokens, 500),
    ])
    .reserve(secs(0), secs(60))
    .unwrap();
    let _ = other.take(secs(0));
    // The right period but the wrong log: neither is settled, both come back.
    let reservations = Limits([Limit::Sliding(&mut other, 0), Limit::Period(&mut tokens, 0)])
        .settle(reservations, secs(1))
        .expect("the log's reservation is not the other log's");
    assert_eq!((other.left(secs(1)), tokens.left(secs(1))), (9, 500));
    let settled = Limits([Limit::Sliding(&mut mine, 0), Limit::Period(&mut tokens, 0)])
        .settle(reservations, secs(1));
    assert!(settled.is_none());
    assert_eq!((mine.left(secs(1)), tokens.left(secs(1))), (10, 1_000));
}

#[test]
fn a_connect_or_a_checkout_settled_on_another_ward_changes_nothing() {
    let gated = Reconnect {
        checkouts: Checkouts::Gate(2),
        ..RECONNECT
    };
    let (mut a, mut b) = (Ward::new(gated, ms(0)), Ward::new(gated, ms(0)));
    // A failed connect of A's, told to B, would start B's backoff.
    let permit = a.connect(ms(0), 0.5).unwrap();
    let permit = b.failed(permit, ms(1), 0.5).expect("not b's");
    assert!(!b.is_failing() && b.connect(ms(2), 0.5).is_ok());
    assert!(a.connected(permit, ms(1)).is_none());
    // A checkout of A's, checked in on B, would free one of B's two places.
    let _held = [b.checkout(ms(2), 0).unwrap(), b.checkout(ms(2), 0).unwrap()];
    let slot = a.checkout(ms(2), 0).unwrap();
    let slot = b.checkin(slot, ms(3)).expect("not b's");
    let slot = b.abandon(slot).expect("not b's");
    assert_eq!((b.checkouts(), b.foreign()), (2, 3));
    assert!(b.checkout(ms(3), 0).is_err(), "b's gate is still full");
    assert!(a.abandon(slot).is_none());
    assert_eq!((a.checkouts(), a.foreign()), (0, 0));
}
