//! The limiter's unit tests: admission by class, the floor, probes, retuning.

use alloc::string::ToString;
use alloc::vec::Vec;

use super::*;
use crate::criticality::{SHARES, Shares};
use crate::limit::{ADAPTIVE, Algorithm, SAMPLING, VEGAS};

/// The default with Netflix's Vegas and sampling: these tests are about admission by class,
/// the floor and the periodic probe, which the default's first window (Little measures the
/// backend with one call in flight) would stand in front of.
const VEGAS_PROBED: Adaptive = Adaptive {
    algorithm: Algorithm::Vegas(VEGAS),
    sampling: SAMPLING,
    ..ADAPTIVE
};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A limiter at the default policy with `n` critical calls in flight.
fn holding(n: usize) -> (Limiter, Vec<Grant>) {
    let mut limiter = Limiter::new(VEGAS_PROBED, ms(0));
    let grants = (0..n)
        .map(|_| limiter.acquire(ms(0)).expect("room"))
        .collect();
    (limiter, grants)
}

#[test]
fn each_class_may_fill_its_share_of_the_limit() {
    let limit = Limiter::new(VEGAS_PROBED, ms(0)).limit();
    for class in Criticality::ALL {
        let (mut limiter, grants) = holding(0);
        let room = limiter.room(class);
        assert_eq!(room, (f64::from(limit) * SHARES.of(class)) as u32);
        let mine: Vec<_> = (0..room)
            .map(|i| {
                let grant = limiter.acquire_as(ms(1), class).expect("within room");
                assert_eq!((grant.flying(), grant.criticality()), (i + 1, class));
                grant
            })
            .collect();
        let reason = limiter.acquire_as(ms(1), class).unwrap_err();
        assert_eq!(
            reason,
            LimiterReason {
                flying: room,
                limit,
                room,
                criticality: class,
                floor: Criticality::Sheddable,
                probing: false,
                class_flying: None,
            }
        );
        drop((grants, mine));
    }
}

#[test]
fn a_refusal_for_room_keeps_the_less_critical_out_for_the_cooling_time() {
    let (mut limiter, grants) = holding(20);
    assert_eq!(limiter.limit(), 20);
    let refused = limiter.acquire(ms(5)).unwrap_err();
    assert_eq!(refused.floor, Criticality::Sheddable, "the floor it met");
    for grant in grants {
        limiter.settle(grant, Settle::Ignored, ms(6));
    }
    assert_eq!(limiter.floor(ms(6)), Criticality::Critical);
    for class in [Criticality::Sheddable, Criticality::SheddableConcurrent] {
        let reason = limiter.acquire_as(ms(7), class).unwrap_err();
        assert_eq!((reason.flying, reason.floor), (0, Criticality::Critical));
        assert_eq!(
            reason.to_string(),
            alloc::format!(
                "limiter refused a {class} call: classes below critical are refused after a refusal (0 in flight, limit 20)"
            )
        );
    }
    // The floor steps down a class at a time: the sheddable-concurrent refused at 7 ms
    // hold it a cooling time after the critical refusal has cooled.
    assert_eq!(limiter.floor(ms(1_004)), Criticality::Critical);
    assert_eq!(limiter.floor(ms(1_005)), Criticality::SheddableConcurrent);
    let concurrent = limiter
        .acquire_as(ms(1_005), Criticality::SheddableConcurrent)
        .expect("at the floor");
    assert_eq!(limiter.floor(ms(1_007)), Criticality::Sheddable);
    let back = limiter
        .acquire_as(ms(1_007), Criticality::Sheddable)
        .expect("cooled");
    limiter.settle(back, Settle::Ignored, ms(1_008));
    limiter.settle(concurrent, Settle::Ignored, ms(1_008));
    // The floor's own class and those above it are admitted while it stands.
    let (mut limiter, grants) = holding(20);
    let _ = limiter
        .acquire_as(ms(1), Criticality::CriticalPlus)
        .unwrap_err();
    for grant in grants {
        limiter.settle(grant, Settle::Ignored, ms(1));
    }
    assert!(
        limiter.acquire(ms(2)).is_err(),
        "critical is below critical_plus"
    );
    let plus = limiter
        .acquire_as(ms(2), Criticality::CriticalPlus)
        .expect("room");
    limiter.settle(plus, Settle::Ignored, ms(3));
}

#[test]
fn a_zero_cooling_time_turns_the_floor_off() {
    let policy = Adaptive {
        cool: Duration::ZERO,
        ..VEGAS_PROBED
    };
    let mut limiter = Limiter::new(policy, ms(0));
    let grants: Vec<_> = (0..20).map(|_| limiter.acquire(ms(0)).unwrap()).collect();
    assert!(
        limiter
            .acquire_as(ms(0), Criticality::CriticalPlus)
            .is_err()
    );
    for grant in grants {
        limiter.settle(grant, Settle::Ignored, ms(0));
    }
    let grant = limiter
        .acquire_as(ms(0), Criticality::Sheddable)
        .expect("no floor");
    limiter.settle(grant, Settle::Ignored, ms(0));
}

#[test]
fn settling_never_underflows_and_a_clock_that_steps_back_measures_no_negative_latency() {
    let mut other = Limiter::new(VEGAS_PROBED, ms(0));
    let stranger = other.acquire(ms(50)).unwrap();
    let mut limiter = Limiter::new(VEGAS_PROBED, ms(100));
    limiter.settle(stranger, Settle::Success, ms(10));
    assert_eq!(limiter.flying(), 0);
    let grant = limiter.acquire(ms(40)).unwrap();
    assert_eq!(grant.start(), ms(100), "read as the latest seen");
    limiter.settle(grant, Settle::Dropped, Duration::ZERO);
    assert_eq!(limiter.flying(), 0);
    let late = limiter.acquire(Duration::MAX).unwrap();
    limiter.settle(late, Settle::Success, Duration::MAX);
    assert_eq!(limiter.flying(), 0);
}

/// A call every 10 ms over `span` (in ms), each taking `rtt` ms, settled in time order.
fn traffic(limiter: &mut Limiter, span: core::ops::Range<u64>, rtt: u64) {
    let mut open = alloc::collections::VecDeque::new();
    for t in span.step_by(10) {
        while open.front().is_some_and(|&(done, _)| done <= t) {
            let (done, grant) = open.pop_front().unwrap();
            limiter.settle(grant, Settle::Success, ms(done));
        }
        open.push_back((t + rtt, limiter.acquire(ms(t)).expect("room")));
    }
    for (done, grant) in open {
        limiter.settle(grant, Settle::Success, ms(done));
    }
}

#[test]
fn a_probe_drains_to_half_the_limit_and_rebases_on_a_window_of_its_own_calls() {
    use crate::limit::{AIMD, Aimd, Algorithm, GRADIENT2, Gradient2, SAMPLING, Sampling};
    let sampling = Sampling {
        size: 4,
        min_window: ms(100),
        max_window: ms(100),
        ..SAMPLING
    };
    let policy = Adaptive {
        algorithm: Algorithm::Gradient2(Gradient2 {
            initial: 40,
            ..GRADIENT2
        }),
        sampling,
        probe: ms(1_000),
        ..VEGAS_PROBED
    };
    let mut limiter = Limiter::new(policy, ms(0));
    // Before the probe: 20 ms calls, windows of which feed the long average.
    traffic(&mut limiter, 0..900, 20);
    assert!(limiter.estimator().baseline() < Some(ms(21)));
    assert!(!limiter.probing());
    let old: Vec<_> = (0..25).map(|_| limiter.acquire(ms(990)).unwrap()).collect();
    // The probe starts at 1 s: half the limit of 40, so 25 in flight refuse the next.
    let reason = limiter.acquire(ms(1_000)).unwrap_err();
    assert!(limiter.probing() && reason.probing);
    assert_eq!(
        (
            reason.limit,
            reason.room,
            limiter.room(Criticality::Critical)
        ),
        (20, 20, 20)
    );
    assert!(
        reason
            .to_string()
            .ends_with("(limit 20, held there by a probe)"),
        "{reason}"
    );
    // The calls from before finish slowly, and are not the probe's.
    for grant in old {
        limiter.settle(grant, Settle::Success, ms(1_010));
    }
    // The backend has slowed: 60 ms with no queue. The probe's window rebases on it.
    traffic(&mut limiter, 1_010..1_300, 60);
    assert!(!limiter.probing(), "the probe's window closed");
    assert_eq!(limiter.estimator().baseline(), Some(ms(60)));
    assert_eq!(limiter.room(Criticality::Critical), limiter.limit());
    // Off: no probe ever starts, and the default probes every 10 s.
    let mut off = Limiter::new(
        Adaptive {
            probe: Duration::ZERO,
            ..policy
        },
        ms(0),
    );
    let grant = off.acquire(Duration::MAX).unwrap();
    assert!(!off.probing());
    off.settle(grant, Settle::Success, Duration::MAX);
    assert_eq!(VEGAS_PROBED.probe, Duration::from_secs(10));
    // Aimd keeps no baseline: a probe drains and changes nothing else.
    let aimd = Adaptive {
        algorithm: Algorithm::Aimd(Aimd { min: 1, ..AIMD }),
        ..policy
    };
    let mut limiter = Limiter::new(aimd, ms(0));
    let grant = limiter.acquire(ms(1_000)).unwrap();
    assert!(limiter.probing());
    limiter.settle(grant, Settle::Success, ms(1_001));
    assert_eq!(limiter.estimator().baseline(), None);
}

#[test]
fn a_probe_whose_window_drops_a_call_is_a_sample_not_a_baseline() {
    use crate::limit::{Algorithm, SAMPLING, Sampling, VEGAS, Vegas};
    let policy = Adaptive {
        algorithm: Algorithm::Vegas(Vegas {
            initial: 40,
            ..VEGAS
        }),
        sampling: Sampling {
            size: 2,
            min_window: ms(100),
            max_window: ms(100),
            ..SAMPLING
        },
        probe: ms(1_000),
        ..VEGAS_PROBED
    };
    let mut limiter = Limiter::new(policy, ms(0));
    traffic(&mut limiter, 0..990, 20);
    let (baseline, limit) = (limiter.estimator().baseline(), limiter.limit());
    assert_eq!(baseline, Some(ms(20)));
    // The probe's window: one call dropped, one slow.
    let a = limiter.acquire(ms(1_000)).unwrap();
    assert!(limiter.probing());
    let b = limiter.acquire(ms(1_001)).unwrap();
    limiter.settle(a, Settle::Dropped, ms(1_050));
    limiter.settle(b, Settle::Success, ms(1_150));
    assert!(!limiter.probing(), "the probe ended with its window");
    assert_eq!(
        limiter.estimator().baseline(),
        baseline,
        "no rebase on a drop"
    );
    assert!(limiter.limit() < limit, "Vegas cut the limit on the drop");
}

#[test]
fn admits_is_acquire_as_without_its_effects() {
    let policy = Adaptive {
        probe: ms(300),
        ..VEGAS_PROBED
    };
    let mut limiter = Limiter::new(policy, ms(0));
    let mut held = alloc::collections::VecDeque::new();
    for step in 0..3_000u64 {
        let now = ms(step / 3);
        let class = Criticality::ALL[(step * 7 % 4) as usize];
        let before = limiter.clone();
        let said = limiter.admits(now, class);
        assert_eq!(
            limiter.floor(now),
            before.floor(now),
            "admits records nothing"
        );
        match limiter.acquire_as(now, class) {
            Ok(grant) => {
                assert!(said, "admitted at step {step}");
                held.push_back(grant);
            }
            Err(_) => assert!(!said, "refused at step {step}"),
        }
        // Calls finish 25 ms-ish later, a third of them as drops.
        while held.len() > 12 || (step % 5 == 0 && !held.is_empty()) {
            let grant = held.pop_front().unwrap();
            let settle = [Settle::Success, Settle::Success, Settle::Dropped][step as usize % 3];
            limiter.settle(grant, settle, now);
        }
    }
}

#[test]
fn retune_keeps_the_calls_in_flight_and_the_floor() {
    let (mut limiter, grants) = holding(20);
    let _ = limiter.acquire(ms(1)).unwrap_err();
    let shares = Shares {
        sheddable: 0.0,
        ..SHARES
    };
    limiter.retune(
        Adaptive {
            shares,
            ..VEGAS_PROBED
        },
        ms(2),
    );
    assert_eq!(limiter.flying(), 20);
    assert_eq!(limiter.floor(ms(2)), Criticality::Critical);
    assert_eq!(limiter.room(Criticality::Sheddable), 0);
    assert_eq!(limiter.policy().shares, shares);
    for grant in grants {
        limiter.settle(grant, Settle::Ignored, ms(3));
    }
    assert_eq!(limiter.flying(), 0);
}

/// The default policy with `sheddable` and `critical` of the limit reserved, no floor.
fn partitioned(sheddable: f64, critical: f64) -> Adaptive {
    Adaptive {
        partitions: Some(Partitions {
            sheddable,
            critical,
            ..Partitions::NONE
        }),
        cool: Duration::ZERO,
        ..VEGAS_PROBED
    }
}

#[test]
fn under_partitions_a_count_at_u32_max_refuses_rather_than_wraps() {
    let mut limiter = Limiter::new(partitioned(0.5, 0.5), ms(0));
    // As if u32::MAX calls were in flight, none of them sheddable.
    limiter.flying = u32::MAX;
    limiter.class_flying = [0, 0, u32::MAX, 0];
    let reason = limiter
        .acquire_as(ms(0), Criticality::Sheddable)
        .unwrap_err();
    assert_eq!((reason.flying, reason.class_flying), (u32::MAX, Some(0)));
    assert!(!limiter.admits(ms(0), Criticality::Sheddable));
    // One fewer: the sheddable reservation lets one in, up to the count's end.
    limiter.flying = u32::MAX - 1;
    let grant = limiter
        .acquire_as(ms(0), Criticality::Sheddable)
        .expect("reserved");
    assert_eq!(grant.flying(), u32::MAX);
    limiter.settle(grant, Settle::Ignored, ms(0));
    assert_eq!(limiter.flying(), u32::MAX - 1);
}

#[test]
fn under_partitions_a_probe_halves_the_reservations_and_says_so() {
    let mut limiter = Limiter::new(partitioned(0.3, 0.7), ms(0));
    let grants: Vec<_> = (0..10)
        .map(|_| limiter.acquire_as(ms(0), Criticality::Critical).unwrap())
        .collect();
    // At 10 s the probe halves the limit to 10: full, and critical's 10 pass its 7.
    assert!(!limiter.admits(ms(10_000), Criticality::Critical));
    let reason = limiter.acquire(ms(10_000)).unwrap_err();
    assert!(reason.probing);
    assert_eq!(
        (reason.limit, reason.room, reason.class_flying),
        (10, 7, Some(10))
    );
    assert_eq!(
        reason.to_string(),
        "limiter refused a critical call: 10 in flight fill the limit of 10, held there by a probe, \
         and its class's 10 fill its reservation of 7"
    );
    // The sheddable have their 3 of the halved limit.
    assert_eq!(limiter.room(Criticality::Sheddable), 3);
    assert!(limiter.admits(ms(10_000), Criticality::Sheddable));
    drop(grants);
}

#[test]
fn under_partitions_admits_is_acquire_as_without_its_effects() {
    let mut limiter = Limiter::new(partitioned(0.3, 0.5), ms(0));
    let mut grants = Vec::new();
    for step in 0..60u32 {
        let class = Criticality::ALL[step as usize % 4];
        let admits = limiter.admits(ms(1), class);
        match limiter.acquire_as(ms(1), class) {
            Ok(grant) => {
                assert!(admits, "step {step}");
                grants.push(grant);
            }
            Err(_) => assert!(!admits, "step {step}"),
        }
    }
    // 20 under the limit, then 6 sheddable and 10 critical reserved past it: the counts of
    // the classes add up to the whole.
    let total: u32 = Criticality::ALL.iter().map(|&c| limiter.flying_as(c)).sum();
    assert_eq!(total, limiter.flying());
    assert_eq!(limiter.flying_as(Criticality::Sheddable), 6);
    assert_eq!(limiter.flying_as(Criticality::Critical), 10);
    drop(grants);
}

#[test]
fn a_probe_no_call_ends_is_given_up_after_four_windows() {
    use crate::limit::LITTLE;
    // Little probes first with one call in flight; that call never comes back.
    let little = Adaptive {
        algorithm: Algorithm::Little(LITTLE),
        ..VEGAS_PROBED
    };
    let mut limiter = Limiter::new(little, ms(0));
    let hung = limiter.acquire(ms(0)).expect("the probe's one call");
    assert!(limiter.acquire(ms(4_000)).unwrap_err().probing);
    assert!(limiter.admits(ms(4_001), Criticality::Critical));
    // Four windows of 1 s on, the probe is given up: the limit of 20 again, half of it the
    // sheddable's, until the next probe 10 s later.
    let grant = limiter.acquire(ms(4_001)).expect("the probe given up");
    assert!(!limiter.probing());
    assert_eq!(limiter.room(Criticality::Sheddable), 10);
    limiter.settle(grant, Settle::Success, ms(4_050));
    limiter.settle(hung, Settle::Ignored, ms(4_060));
}

#[test]
fn an_idle_limiter_lets_in_a_class_whose_share_rounds_to_none() {
    use crate::limit::{AIMD, Aimd};
    let one = Adaptive {
        algorithm: Algorithm::Aimd(Aimd {
            initial: 1,
            min: 1,
            ..AIMD
        }),
        probe: Duration::ZERO,
        ..VEGAS_PROBED
    };
    let mut limiter = Limiter::new(one, ms(0));
    // Half of a limit of 1 is none, but nothing is in flight: one sheddable call.
    assert_eq!(limiter.room(Criticality::Sheddable), 0);
    let grant = limiter
        .acquire_as(ms(0), Criticality::Sheddable)
        .expect("idle");
    assert!(limiter.acquire_as(ms(0), Criticality::Sheddable).is_err());
    limiter.settle(grant, Settle::Success, ms(5));
    // A share of 0 is a class turned off, idle or not.
    let off = Adaptive {
        shares: Shares {
            sheddable: 0.0,
            ..SHARES
        },
        ..one
    };
    let mut limiter = Limiter::new(off, ms(0));
    assert!(limiter.acquire_as(ms(0), Criticality::Sheddable).is_err());
}

#[test]
fn the_defaults_first_window_admits_one_call_at_a_time_then_its_limit() {
    let mut limiter = Limiter::new(ADAPTIVE, ms(0));
    let first = limiter.acquire(ms(0)).expect("room for one");
    assert!(limiter.probing(), "Little probes at once");
    assert_eq!(limiter.room(Criticality::Critical), 1);
    let second = limiter.acquire(ms(0)).unwrap_err();
    assert_eq!((second.limit, second.probing), (1, true));
    limiter.settle(first, Settle::Success, ms(5));
    // Calls of 5 ms one after the other, past the window's second: the probe ends, and the
    // baseline is 5 ms.
    let mut now = 5;
    while now <= 1000 {
        let grant = limiter.acquire(ms(now)).expect("one at a time");
        now += 5;
        limiter.settle(grant, Settle::Success, ms(now));
    }
    assert!(!limiter.probing());
    assert_eq!(limiter.estimator().baseline(), Some(ms(5)));
    assert_eq!(limiter.room(Criticality::Critical), 20);
}
