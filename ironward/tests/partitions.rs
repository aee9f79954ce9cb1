//! The limiter's partitions and bypass against the vectors of Netflix concurrency-limits'
//! `AbstractPartitionedLimiterTest`: the same limits, percentages and sequences of
//! acquisitions and releases, with the same outcomes. Netflix's partition "batch" is the
//! class `Sheddable` here and "live" `Critical`; its `FixedLimit` is an Aimd held between
//! equal bounds; its limiter has no floor and never probes, so neither does the policy here.

use core::time::Duration;

use ironward::limit::{AIMD, Aimd, Algorithm};
use ironward::{ADAPTIVE, Adaptive, Criticality, Grant, Limiter, Partitions, Settle};

const BATCH: Criticality = Criticality::Sheddable;
const LIVE: Criticality = Criticality::Critical;
const NOW: Duration = Duration::ZERO;

/// A limit held at `limit`: Netflix's `FixedLimit.of(limit)`.
fn fixed(limit: u32) -> Algorithm {
    Algorithm::Aimd(Aimd {
        initial: limit,
        min: limit,
        max: limit,
        ..AIMD
    })
}

/// A policy at a fixed `limit` with `batch` and `live` of it reserved, with no floor and no
/// probe, as Netflix's partitioned limiter decides.
fn netflix(limit: u32, batch: f64, live: f64) -> Adaptive {
    Adaptive {
        algorithm: fixed(limit),
        partitions: Some(Partitions {
            sheddable: batch,
            critical: live,
            ..Partitions::NONE
        }),
        cool: Duration::ZERO,
        probe: Duration::ZERO,
        ..ADAPTIVE
    }
}

/// `n` calls of `class` let in, each checked against the class's count after it.
fn fill(limiter: &mut Limiter, class: Criticality, n: u32) -> Vec<Grant> {
    let before = limiter.flying_as(class);
    (0..n)
        .map(|i| {
            let grant = limiter.acquire_as(NOW, class).expect("room");
            assert_eq!(limiter.flying_as(class), before + i + 1, "{class} #{i}");
            grant
        })
        .collect()
}

/// Netflix `AbstractPartitionedLimiterTest.limitAllocatedToBins`.
#[test]
fn limit_allocated_to_bins() {
    let limiter = Limiter::new(netflix(10, 0.3, 0.7), NOW);
    assert_eq!(limiter.room(BATCH), 3);
    assert_eq!(limiter.room(LIVE), 7);
}

/// Netflix `AbstractPartitionedLimiterTest.useExcessCapacityUntilTotalLimit`.
#[test]
fn use_excess_capacity_until_total_limit() {
    let mut limiter = Limiter::new(netflix(10, 0.3, 0.7), NOW);
    let _batch = fill(&mut limiter, BATCH, 10);
    assert!(limiter.acquire_as(NOW, BATCH).is_err());
}

/// Netflix `AbstractPartitionedLimiterTest.exceedTotalLimitForUnusedBin`.
#[test]
fn exceed_total_limit_for_unused_bin() {
    let mut limiter = Limiter::new(netflix(10, 0.3, 0.7), NOW);
    let _batch = fill(&mut limiter, BATCH, 10);
    assert!(limiter.acquire_as(NOW, BATCH).is_err());
    let _live = fill(&mut limiter, LIVE, 7);
    let reason = limiter.acquire_as(NOW, LIVE).unwrap_err();
    // What refused it: 17 in flight past the limit of 10, and live's 7 at its reservation.
    assert_eq!(
        (
            reason.flying,
            reason.limit,
            reason.room,
            reason.class_flying
        ),
        (17, 10, 7, Some(7))
    );
}

/// Netflix `AbstractPartitionedLimiterTest.rejectOnceAllLimitsReached`.
#[test]
fn reject_once_all_limits_reached() {
    let mut limiter = Limiter::new(netflix(10, 0.3, 0.7), NOW);
    let mut grants = Vec::new();
    for i in 0..3 {
        grants.push(limiter.acquire_as(NOW, BATCH).expect("room"));
        assert_eq!((limiter.flying_as(BATCH), limiter.flying()), (i + 1, i + 1));
    }
    for i in 0..7 {
        grants.push(limiter.acquire_as(NOW, LIVE).expect("room"));
        assert_eq!((limiter.flying_as(LIVE), limiter.flying()), (i + 1, i + 4));
    }
    let batch = limiter.acquire_as(NOW, BATCH).unwrap_err();
    assert_eq!((batch.room, batch.class_flying), (3, Some(3)));
    let live = limiter.acquire_as(NOW, LIVE).unwrap_err();
    assert_eq!((live.room, live.class_flying), (7, Some(7)));
}

/// Netflix `AbstractPartitionedLimiterTest.releaseLimit`.
#[test]
fn release_limit() {
    let mut limiter = Limiter::new(netflix(10, 0.3, 0.7), NOW);
    let first = limiter.acquire_as(NOW, BATCH).expect("room");
    let _rest = fill(&mut limiter, BATCH, 9);
    assert_eq!(limiter.flying(), 10);
    assert!(limiter.acquire_as(NOW, BATCH).is_err());
    assert_eq!(limiter.settle(first, Settle::Success, NOW), None);
    assert_eq!((limiter.flying_as(BATCH), limiter.flying()), (9, 9));
    let _again = limiter.acquire_as(NOW, BATCH).expect("room given back");
    assert_eq!((limiter.flying_as(BATCH), limiter.flying()), (10, 10));
}

/// Netflix `AbstractPartitionedLimiterTest.setLimitReservesBusy`: a new limit (here a retune
/// to a fixed 20, Netflix's `SettableLimit.setLimit(20)`) moves the reservations and keeps
/// the calls in flight.
#[test]
fn set_limit_reserves_busy() {
    let mut limiter = Limiter::new(netflix(10, 0.3, 0.7), NOW);
    assert_eq!(limiter.room(BATCH), 3);
    let _grant = limiter.acquire_as(NOW, BATCH).expect("room");
    assert_eq!((limiter.flying_as(BATCH), limiter.flying()), (1, 1));
    limiter.retune(netflix(20, 0.3, 0.7), NOW);
    assert_eq!(limiter.limit(), 20);
    assert_eq!(limiter.room(BATCH), 6);
    assert_eq!((limiter.flying_as(BATCH), limiter.flying()), (1, 1));
}

/// Netflix `AbstractPartitionedLimiterTest.testBypassPartitionedLimiter`: the calls its
/// predicate picks ("admin") are asked for as bypasses.
#[test]
fn bypass_partitioned_limiter() {
    let mut limiter = Limiter::new(netflix(10, 0.1, 0.9), NOW);
    let mut grants = vec![limiter.acquire_as(NOW, BATCH).expect("room")];
    assert_eq!(limiter.flying_as(BATCH), 1);
    grants.push(limiter.acquire_bypass(NOW));
    for i in 0..9 {
        grants.push(limiter.acquire_as(NOW, LIVE).expect("room"));
        assert_eq!(limiter.flying_as(LIVE), i + 1);
        grants.push(limiter.acquire_bypass(NOW));
    }
    assert!(limiter.acquire_as(NOW, BATCH).is_err());
    assert_eq!(limiter.flying_as(BATCH), 1);
    assert!(limiter.acquire_as(NOW, LIVE).is_err());
    assert_eq!(limiter.flying_as(LIVE), 9);
    assert_eq!(limiter.flying(), 10);
    let admin = limiter.acquire_bypass(NOW);
    assert!(admin.bypassed());
    assert_eq!(limiter.bypassed(), 11);
    // Settling the bypasses takes nothing from the counts.
    for grant in grants.into_iter().filter(Grant::bypassed) {
        assert_eq!(limiter.settle(grant, Settle::Success, NOW), None);
    }
    assert_eq!(limiter.settle(admin, Settle::Dropped, NOW), None);
    assert_eq!(limiter.flying(), 10);
}

/// Netflix `AbstractPartitionedLimiterTest.testBypassSimpleLimiter`: a bypass beside today's
/// ceilings, with one class asking.
#[test]
fn bypass_simple_limiter() {
    let policy = Adaptive {
        algorithm: fixed(10),
        cool: Duration::ZERO,
        probe: Duration::ZERO,
        ..ADAPTIVE
    };
    let mut limiter = Limiter::new(policy, NOW);
    let mut grants = Vec::new();
    for i in 0..5 {
        grants.push(limiter.acquire(NOW).expect("room"));
        assert_eq!(limiter.flying(), i + 1);
    }
    for _ in 0..15 {
        grants.push(limiter.acquire_bypass(NOW));
        assert_eq!(limiter.flying(), 5);
    }
    for i in 0..5 {
        grants.push(limiter.acquire(NOW).expect("room"));
        assert_eq!(limiter.flying(), 5 + i + 1);
    }
    for _ in 0..10 {
        assert!(limiter.acquire(NOW).is_err());
        grants.push(limiter.acquire_bypass(NOW));
    }
    assert_eq!((limiter.flying(), limiter.bypassed()), (10, 25));
}

#[test]
fn a_bypass_is_not_sampled_and_settles_only_on_its_own_limiter() {
    let aimd = Aimd {
        initial: 10,
        min: 1,
        ..AIMD
    };
    let policy = Adaptive {
        algorithm: Algorithm::Aimd(aimd),
        ..ADAPTIVE
    };
    let mut limiter = Limiter::new(policy, NOW);
    let mut other = Limiter::new(policy, NOW);
    // Enough dropped bypasses to close many windows, were they sampled.
    for t in 0..100 {
        let grant = limiter.acquire_bypass(Duration::from_secs(t));
        limiter.settle(grant, Settle::Dropped, Duration::from_secs(t + 1));
    }
    assert_eq!(limiter.limit(), 10, "no drop reached the algorithm");
    let stray = limiter.acquire_bypass(NOW);
    let stray = other
        .settle(stray, Settle::Success, NOW)
        .expect("not other's");
    assert_eq!(other.foreign(), 1);
    assert_eq!(limiter.settle(stray, Settle::Success, NOW), None);
    assert_eq!((limiter.flying(), limiter.bypassed()), (0, 101));
}

#[test]
fn a_partition_refusal_says_what_refused_it() {
    let mut limiter = Limiter::new(netflix(10, 0.3, 0.7), NOW);
    let _batch = fill(&mut limiter, BATCH, 10);
    let reason = limiter.acquire_as(NOW, BATCH).unwrap_err();
    assert_eq!(
        (
            reason.flying,
            reason.limit,
            reason.room,
            reason.class_flying
        ),
        (10, 10, 3, Some(10))
    );
    assert_eq!(
        reason.to_string(),
        "limiter refused a sheddable call: 10 in flight fill the limit of 10, and its class's 10 \
         fill its reservation of 3"
    );
    // Under ceilings the class's count is not part of the answer.
    let ceilings = Adaptive {
        partitions: None,
        ..netflix(10, 0.3, 0.7)
    };
    let mut limiter = Limiter::new(ceilings, NOW);
    let _held = fill(&mut limiter, BATCH, 5);
    let reason = limiter.acquire_as(NOW, BATCH).unwrap_err();
    assert_eq!((reason.room, reason.class_flying), (5, None));
}

#[test]
fn the_floor_still_holds_the_less_critical_out_under_partitions() {
    let policy = Adaptive {
        cool: Duration::from_secs(1),
        ..netflix(10, 0.3, 0.7)
    };
    let mut limiter = Limiter::new(policy, NOW);
    let _live = fill(&mut limiter, LIVE, 10);
    // Live has borrowed the whole limit; its next call meets its reservation of 7.
    assert!(limiter.acquire_as(NOW, LIVE).is_err());
    let reason = limiter.acquire_as(NOW, BATCH).unwrap_err();
    assert_eq!((reason.floor, reason.class_flying), (LIVE, Some(0)));
    assert!(reason.to_string().contains("classes below critical"));
    // A second later the floor has cooled, and batch has its reservation though the
    // limit is full.
    let batch = limiter.acquire_as(Duration::from_secs(1), BATCH);
    assert!(batch.is_ok());
}

#[test]
fn a_limit_of_one_gives_each_reserved_class_its_one_call() {
    let mut limiter = Limiter::new(netflix(1, 0.3, 0.7), NOW);
    assert_eq!((limiter.room(BATCH), limiter.room(LIVE)), (1, 1));
    let _batch = limiter.acquire_as(NOW, BATCH).expect("under the limit");
    let _live = limiter.acquire_as(NOW, LIVE).expect("live's reservation");
    assert_eq!(
        limiter.flying(),
        2,
        "past the limit by live's reservation, no more"
    );
    assert!(limiter.acquire_as(NOW, LIVE).is_err());
    assert!(limiter.acquire_as(NOW, BATCH).is_err());
    // A class with nothing reserved only borrows.
    assert!(limiter.acquire_as(NOW, Criticality::CriticalPlus).is_err());
}

#[test]
fn bad_fractions_reserve_nothing_or_are_scaled_down() {
    // NaN and negative reserve nothing: those classes borrow while the limit has room.
    let mut limiter = Limiter::new(netflix(10, f64::NAN, -1.0), NOW);
    assert_eq!((limiter.room(BATCH), limiter.room(LIVE)), (0, 0));
    let _held = fill(&mut limiter, BATCH, 10);
    assert!(limiter.acquire_as(NOW, LIVE).is_err());
    // Fractions over 1 in all keep their proportions: 0.6 and 1.8 (read as 1) are 3 : 5.
    let limiter = Limiter::new(netflix(16, 0.6, 1.8), NOW);
    assert_eq!((limiter.room(BATCH), limiter.room(LIVE)), (6, 10));
}

#[test]
fn a_retune_between_ceilings_and_partitions_keeps_each_class_counted() {
    let ceilings = Adaptive {
        partitions: None,
        ..netflix(10, 0.3, 0.7)
    };
    let mut limiter = Limiter::new(ceilings, NOW);
    let batch = fill(&mut limiter, BATCH, 5);
    let _live = fill(&mut limiter, LIVE, 5);
    limiter.retune(netflix(10, 0.3, 0.7), NOW);
    assert_eq!((limiter.flying_as(BATCH), limiter.flying_as(LIVE)), (5, 5));
    assert!(
        limiter.acquire_as(NOW, BATCH).is_err(),
        "5 of batch over its 3"
    );
    let _more_live = fill(&mut limiter, LIVE, 2);
    for grant in batch {
        limiter.settle(grant, Settle::Ignored, NOW);
    }
    assert_eq!((limiter.flying_as(BATCH), limiter.flying()), (0, 7));
    assert_eq!(limiter.flying_as(LIVE), 7);
}
