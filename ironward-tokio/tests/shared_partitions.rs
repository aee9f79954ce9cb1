//! `SharedLimiter` over the core's partitions and bypass: the queue lets a class in on its
//! reservation while a more critical class waits for its own, and a bypass neither waits
//! nor counts.

use std::time::Duration;

use ironward::limit::{AIMD, Aimd, Algorithm};
use ironward::{ADAPTIVE, Adaptive, Criticality, Partitions, Settle};
use ironward_tokio::{Clock, Dice, QUEUE, Queue, SharedLimiter};

use crate::shared_limiter::{admitted, queued};

/// A limit fixed at 2, half reserved to the sheddable and half to the critical, no floor,
/// no probe, and a queue that holds a few calls without turning any away.
fn halves() -> SharedLimiter {
    let policy = Adaptive {
        algorithm: Algorithm::Aimd(Aimd {
            initial: 2,
            min: 2,
            max: 2,
            ..AIMD
        }),
        partitions: Some(Partitions {
            sheddable: 0.5,
            critical: 0.5,
            ..Partitions::NONE
        }),
        cool: Duration::ZERO,
        probe: Duration::ZERO,
        ..ADAPTIVE
    };
    let roomy = Queue {
        initial: 10.0,
        max: 20.0,
        ..QUEUE
    };
    let (clock, _hand) = Clock::manual(Duration::ZERO);
    SharedLimiter::with_queue(policy, roomy, clock, Dice::seeded(1))
}

// Two critical calls fill the limit; a sheddable one gets in on its reservation past it. A
// third critical call and a second sheddable one wait, each at its reservation. When the
// sheddable call leaves, the limit is still full and the critical class still at its
// reservation, so the critical call at the head of the queue waits on; the sheddable one
// behind it gets the reservation its class was given back.
#[tokio::test(start_paused = true)]
async fn the_queue_lets_a_class_in_on_its_reservation_past_a_waiting_more_critical_one() {
    let limiter = halves();
    let critical = [
        admitted(limiter.admit(Criticality::Critical)),
        admitted(limiter.admit(Criticality::Critical)),
    ];
    let sheddable = admitted(limiter.admit(Criticality::Sheddable));
    assert_eq!(limiter.flying(), 3);
    let head = queued(limiter.admit(Criticality::Critical));
    let behind = queued(limiter.admit(Criticality::Sheddable));
    assert_eq!(limiter.queued(), 2);
    sheddable.settle(Settle::Success);
    assert_eq!((limiter.flying(), limiter.queued()), (3, 1));
    let second = behind.await.expect("let in on the sheddable reservation");
    assert_eq!(second.criticality(), Criticality::Sheddable);
    // One critical call leaving is not enough: the limit is still full (the other and the
    // second sheddable) and the critical class still holds its reservation of 1. The second
    // leaving brings the calls in flight under the limit.
    let [first, other] = critical;
    first.settle(Settle::Success);
    assert_eq!((limiter.flying(), limiter.queued()), (2, 1));
    other.settle(Settle::Success);
    let third = head.await.expect("let in under the limit");
    assert_eq!(third.criticality(), Criticality::Critical);
    assert_eq!((limiter.flying(), limiter.queued()), (2, 0));
}

#[tokio::test(start_paused = true)]
async fn a_bypass_neither_waits_in_the_queue_nor_counts() {
    let limiter = halves();
    let _full = [
        admitted(limiter.admit(Criticality::Critical)),
        admitted(limiter.admit(Criticality::Critical)),
    ];
    let waiting = queued(limiter.admit(Criticality::Critical));
    let health = limiter.bypass();
    assert_eq!(health.criticality(), Criticality::Critical);
    assert_eq!((limiter.flying(), limiter.queued()), (2, 1));
    // Settling it frees no room: the queued call still waits.
    health.settle(Settle::Success);
    assert_eq!((limiter.flying(), limiter.queued()), (2, 1));
    // Dropped unsettled, it leaves nothing counted either.
    drop(limiter.bypass());
    assert_eq!((limiter.flying(), limiter.queued()), (2, 1));
    drop(waiting);
    assert_eq!(limiter.queued(), 0);
}
