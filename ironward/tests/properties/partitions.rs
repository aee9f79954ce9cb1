//! Properties of the limiter's partitions, against a naive model: a count per class and a
//! total, Netflix's rule read off them (`AbstractPartitionedLimiter.acquire`).

use core::time::Duration;

use ironward::limit::{AIMD, Aimd, Algorithm};
use ironward::{ADAPTIVE, Adaptive, Criticality, Grant, Limiter, Partitions, Settle};
use proptest::prelude::*;

/// A fraction as a policy may hold one: ordinary, or NaN, negative, infinite, past 1.
fn fraction() -> impl Strategy<Value = f64> {
    prop_oneof![
        6 => 0.0..=1.0_f64,
        1 => Just(f64::NAN),
        1 => Just(-0.5),
        1 => Just(f64::INFINITY),
        1 => 1.0..4.0_f64,
    ]
}

/// What a step does: ask as a class, ask for a bypass, or settle the grant at an index.
#[derive(Debug, Clone)]
enum Op {
    Acquire(usize),
    Bypass,
    Settle(usize),
}

proptest! {
    // Any run of acquisitions, bypasses and settles at a fixed limit: the limiter admits
    // exactly when the model does (under the limit, or under the class's reservation), the
    // classes' counts add up to the total, a bypass is counted nowhere, and the calls in
    // flight never pass the limit by more than the reservations.
    #[test]
    fn admits_as_netflix_partitions_and_counts_every_class(
        limit in prop_oneof![4 => 1..8_u32, 1 => Just(1_u32)],
        fractions in [fraction(), fraction(), fraction(), fraction()],
        ops in prop::collection::vec(
            prop_oneof![
                4 => (0..4_usize).prop_map(Op::Acquire),
                1 => Just(Op::Bypass),
                3 => (0..64_usize).prop_map(Op::Settle),
            ],
            0..200,
        ),
    ) {
        let [sheddable, sheddable_concurrent, critical, critical_plus] = fractions;
        let partitions = Partitions { sheddable, sheddable_concurrent, critical, critical_plus };
        let policy = Adaptive {
            algorithm: Algorithm::Aimd(Aimd { initial: limit, min: limit, max: limit, ..AIMD }),
            partitions: Some(partitions),
            cool: Duration::ZERO,
            probe: Duration::ZERO,
            ..ADAPTIVE
        };
        let now = Duration::ZERO;
        let mut limiter = Limiter::new(policy, now);
        let reserved = Criticality::ALL.map(|class| partitions.reserved(limit, class));
        let read: f64 = Criticality::ALL.iter().map(|&class| partitions.of(class)).sum();
        prop_assert!(read <= 1.0 + 1e-12, "fractions read sum to {}", read);
        let mut model = [0_u32; 4];
        let mut grants: Vec<Grant> = Vec::new();
        for op in ops {
            match op {
                Op::Acquire(rank) => {
                    let class = Criticality::ALL[rank];
                    let total: u32 = model.iter().sum();
                    let fits = total < limit || model[rank] < reserved[rank];
                    prop_assert_eq!(limiter.admits(now, class), fits);
                    match limiter.acquire_as(now, class) {
                        Ok(grant) => {
                            prop_assert!(fits);
                            model[rank] += 1;
                            grants.push(grant);
                        }
                        Err(reason) => {
                            prop_assert!(!fits);
                            prop_assert_eq!(
                                (reason.flying, reason.limit, reason.room, reason.class_flying),
                                (total, limit, reserved[rank], Some(model[rank]))
                            );
                        }
                    }
                }
                Op::Bypass => grants.push(limiter.acquire_bypass(now)),
                Op::Settle(i) if !grants.is_empty() => {
                    let grant = grants.swap_remove(i % grants.len());
                    if !grant.bypassed() {
                        model[grant.criticality().rank()] -= 1;
                    }
                    prop_assert_eq!(limiter.settle(grant, Settle::Success, now), None);
                }
                Op::Settle(_) => {}
            }
            for class in Criticality::ALL {
                prop_assert_eq!(limiter.flying_as(class), model[class.rank()]);
            }
            prop_assert_eq!(limiter.flying(), model.iter().sum::<u32>());
            prop_assert!(limiter.flying() <= limit + reserved.iter().sum::<u32>());
        }
    }
}
