//! `SharedLimiter` through its public API, under tokio's paused clock: the limit follows
//! latency, the queue turns calls away gradually and lets them in by criticality, and no
//! cancelled call or waiter stays counted.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use ironward::limit::{AIMD, Aimd, Algorithm, SAMPLING, Sampling};
use ironward::{ADAPTIVE, Adaptive, Criticality, Settle};
use ironward_tokio::{
    Admission, Clock, Dice, LimiterPermit, QUEUE, Queue, Queued, SharedLimiter, Waiter,
};
use tokio::time::{advance, sleep};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Aimd from `initial`, between 1 and 100, a window latency over 100 ms a drop; every call
/// its own sample, in windows of 50 ms.
fn aimd(initial: u32) -> Adaptive {
    Adaptive {
        algorithm: Algorithm::Aimd(Aimd {
            initial,
            min: 1,
            max: 100,
            timeout: ms(100),
            ..AIMD
        }),
        sampling: Sampling {
            size: 1,
            min_window: ms(50),
            max_window: ms(50),
            ..SAMPLING
        },
        ..ADAPTIVE
    }
}

/// The permit of an admitted call; a panic for any other answer.
pub fn admitted(admission: Admission) -> LimiterPermit {
    match admission {
        Admission::Admitted(permit) => permit,
        other => panic!("expected a permit, got {other:?}"),
    }
}

/// The waiter of a queued call; a panic for any other answer.
pub fn queued(admission: Admission) -> Waiter {
    match admission {
        Admission::Queued(waiter) => waiter,
        other => panic!("expected a place in the queue, got {other:?}"),
    }
}

/// Dice whose every draw is what the returned cell holds (an `f64`'s bits), counting draws.
fn dial(first: f64) -> (Dice, Arc<AtomicU64>, Arc<AtomicUsize>) {
    let cell = Arc::new(AtomicU64::new(first.to_bits()));
    let draws = Arc::new(AtomicUsize::new(0));
    let (c, d) = (Arc::clone(&cell), Arc::clone(&draws));
    let dice = Dice::from_fn(move || {
        d.fetch_add(1, Ordering::Relaxed);
        f64::from_bits(c.load(Ordering::Relaxed))
    });
    (dice, cell, draws)
}

/// Runs rounds of as many calls as the limit admits, each taking `latency`, settled as
/// successes; returns the limit after each round.
async fn rounds(limiter: &SharedLimiter, latency: Duration, count: usize) -> Vec<u32> {
    let mut limits = Vec::new();
    for _ in 0..count {
        let mut permits = Vec::new();
        while let Admission::Admitted(permit) = limiter.admit(Criticality::Critical) {
            permits.push(permit);
        }
        sleep(latency).await;
        for permit in permits {
            permit.settle(Settle::Success);
        }
        limits.push(limiter.limit());
    }
    limits
}

// Netflix's AIMDLimit: a window slower than the timeout multiplies the limit by 0.9; a window
// with at least half the limit in flight and within the timeout adds one.
#[tokio::test(start_paused = true)]
async fn the_aimd_limit_falls_under_slow_calls_and_rises_under_fast_ones() {
    let limiter = SharedLimiter::new(aimd(20), Clock::monotonic());
    let slow = rounds(&limiter, ms(200), 5).await;
    // 20 → 18 → 16 → 14 → 12 → 10: each round's first settle closes a window, and the
    // window's latency is 200 ms.
    assert_eq!(slow, vec![18, 16, 14, 12, 10]);
    // The first fast round's first settle closes a window that still holds nine of the last
    // slow round's calls (their mean is 186 ms): one more backoff, then +1 a round.
    let fast = rounds(&limiter, ms(60), 5).await;
    assert_eq!(fast, vec![9, 10, 11, 12, 13]);
    assert_eq!(limiter.flying(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_refusal_without_a_queue_carries_the_cores_reason() {
    let limiter = SharedLimiter::new(aimd(4), Clock::monotonic());
    let held: Vec<_> = (0..2)
        .map(|_| admitted(limiter.admit(Criticality::Critical)))
        .collect();
    // A sheddable call's room is half the limit: 2, full.
    let Admission::Refused(refusal) = limiter.admit(Criticality::Sheddable) else {
        panic!("no room for the sheddable")
    };
    assert_eq!(refusal.queued, Queued::Off);
    let reason = refusal.reason;
    assert_eq!(
        (reason.flying, reason.limit, reason.room, reason.criticality),
        (2, 4, 2, Criticality::Sheddable)
    );
    assert_eq!(
        refusal.to_string(),
        "limiter refused a sheddable call: 2 in flight fill its room of 2 (limit 4)"
    );
    drop(held);
    assert_eq!(limiter.flying(), 0);
}

// failsafe-go's queueing: with `WithQueueing(1, 2)` and a limit of 10, no call is turned away
// while at most 10 wait, every call once 20 do, and between the chance rises by a tenth per
// waiting call; a call is turned away when the draw is at most that chance, and the draw is
// taken only between the thresholds.
#[tokio::test(start_paused = true)]
async fn the_queue_turns_calls_away_gradually_at_fixed_draws() {
    let (dice, draw, draws) = dial(0.0);
    let set = |value: f64| draw.store(value.to_bits(), Ordering::Relaxed);
    let queue = Queue {
        initial: 1.0,
        max: 2.0,
        wait: Duration::from_secs(60),
    };
    let limiter = SharedLimiter::with_queue(aimd(10), queue, Clock::monotonic(), dice);
    let held: Vec<_> = (0..10)
        .map(|_| admitted(limiter.admit(Criticality::Critical)))
        .collect();
    // 0 to 10 waiting: a chance of 0, queued without a draw, though a draw of 0 would turn
    // away any positive chance.
    let mut waiters: Vec<_> = (0..=10)
        .map(|_| queued(limiter.admit(Criticality::Critical)))
        .collect();
    assert_eq!(
        draws.load(Ordering::Relaxed),
        0,
        "no draw below the threshold"
    );

    // 11 waiting: a chance of 0.1. A draw of 0.1 turns the call away; one just over, not.
    set(0.1);
    let Admission::Refused(refusal) = limiter.admit(Criticality::Critical) else {
        panic!("a draw of 0.1 against a chance of 0.1")
    };
    assert_eq!(
        refusal.queued,
        Queued::Rejected {
            waiting: 11,
            rejection: 0.1
        }
    );
    assert_eq!((refusal.reason.flying, refusal.reason.limit), (10, 10));
    set(0.11);
    waiters.push(queued(limiter.admit(Criticality::Critical)));
    // 12 to 19 waiting: chances of 0.2 to 0.9, each turning away a draw equal to it and
    // queueing a draw over it.
    for waiting in 12..20u32 {
        let chance = f64::from(waiting - 10) / 10.0;
        set(chance);
        let Admission::Refused(refusal) = limiter.admit(Criticality::Critical) else {
            panic!("a draw of {chance} against a chance of {chance}")
        };
        assert_eq!(
            refusal.queued,
            Queued::Rejected {
                waiting: waiting as usize,
                rejection: chance
            }
        );
        set(chance + 0.05);
        waiters.push(queued(limiter.admit(Criticality::Critical)));
    }
    // 20 waiting: a chance of 1, whatever the draw, and without one.
    assert_eq!(limiter.queued(), 20);
    set(0.999);
    let before = draws.load(Ordering::Relaxed);
    let Admission::Refused(full) = limiter.admit(Criticality::Critical) else {
        panic!("the queue is full")
    };
    assert_eq!(
        full.queued,
        Queued::Rejected {
            waiting: 20,
            rejection: 1.0
        }
    );
    assert_eq!(draws.load(Ordering::Relaxed), before);
    // A critical-plus call waits behind none of them.
    waiters.push(queued(limiter.admit(Criticality::CriticalPlus)));
    drop(waiters);
    assert_eq!(limiter.queued(), 0);
    drop(held);
    assert_eq!(limiter.flying(), 0);
}

// The queue a call sees is the calls it would wait behind: a queue full of sheddable calls
// turns the next sheddable one away, and queues a critical one as if it were empty.
#[tokio::test(start_paused = true)]
async fn a_queue_full_of_sheddable_calls_never_turns_a_critical_one_away() {
    // Every draw is 0, which turns away any chance over 0.
    let (dice, _, _) = dial(0.0);
    let limiter = SharedLimiter::with_queue(aimd(2), QUEUE, Clock::monotonic(), dice);
    let mut held: Vec<_> = (0..2)
        .map(|_| admitted(limiter.admit(Criticality::Critical)))
        .collect();
    // QUEUE with a limit of 2: a chance of 0 up to 4 waiting, 0.5 at 5, 1 from 6.
    let sheddable: Vec<_> = (0..5)
        .map(|_| queued(limiter.admit(Criticality::Sheddable)))
        .collect();
    let Admission::Refused(refusal) = limiter.admit(Criticality::Sheddable) else {
        panic!("five ahead, a chance of 0.5 and a draw of 0")
    };
    assert_eq!(
        refusal.queued,
        Queued::Rejected {
            waiting: 5,
            rejection: 0.5
        }
    );
    // None of the five is ahead of a critical call: it sees an empty queue.
    let critical = queued(limiter.admit(Criticality::Critical));
    assert_eq!(limiter.queued(), 6);
    // And it is let in first.
    held.pop().unwrap().settle(Settle::Success);
    let permit = critical.await.expect("first in line");
    assert_eq!(permit.criticality(), Criticality::Critical);
    drop((permit, held, sheddable));
    assert_eq!((limiter.flying(), limiter.queued()), (0, 0));
}

// The queue lets calls in as calls leave flight, the most critical first, then in order of
// arrival within a class. The floor is off (a cooling time of 0), so that the order is the
// queue's alone: with it, the critical-plus calls refused on arrival would hold the critical
// ones out for a second.
#[tokio::test(start_paused = true)]
async fn the_queue_lets_in_by_criticality_then_arrival() {
    let roomy = Queue {
        initial: 10.0,
        max: 20.0,
        ..QUEUE
    };
    let no_floor = Adaptive {
        cool: Duration::ZERO,
        ..aimd(1)
    };
    let limiter = SharedLimiter::with_queue(no_floor, roomy, Clock::monotonic(), Dice::seeded(1));
    let running = admitted(limiter.admit(Criticality::CriticalPlus));
    let order = [
        Criticality::Critical,
        Criticality::CriticalPlus,
        Criticality::Critical,
        Criticality::CriticalPlus,
    ];
    let waiters: Vec<_> = order
        .iter()
        .map(|&class| queued(limiter.admit(class)))
        .collect();
    let let_in = Arc::new(std::sync::Mutex::new(Vec::new()));
    let tasks: Vec<_> = waiters
        .into_iter()
        .enumerate()
        .map(|(arrival, waiter)| {
            let let_in = Arc::clone(&let_in);
            tokio::spawn(async move {
                let permit = waiter.await.expect("let in before the wait ends");
                let_in.lock().unwrap().push((arrival, permit.criticality()));
                sleep(ms(10)).await;
                permit.settle(Settle::Success);
            })
        })
        .collect();
    tokio::task::yield_now().await;
    running.settle(Settle::Success);
    for task in tasks {
        task.await.unwrap();
    }
    assert_eq!(
        *let_in.lock().unwrap(),
        vec![
            (1, Criticality::CriticalPlus),
            (3, Criticality::CriticalPlus),
            (0, Criticality::Critical),
            (2, Criticality::Critical),
        ]
    );
    assert_eq!((limiter.flying(), limiter.queued()), (0, 0));
}

// With the floor on, a critical-plus call the queue turns away raises the floor: the
// less critical queued calls are held out for the cooling time though room frees, the room
// going to the critical-plus call that waits; the sheddable one gets in when the floor has
// cooled, a second on, with nothing else happening meanwhile (the waiter looks again once
// every cooling time). A call that waits raises nothing.
#[tokio::test(start_paused = true)]
async fn a_refusal_holds_the_queued_classes_below_it_for_the_cooling_time() {
    let (dice, _, _) = dial(0.4);
    // A chance of `waiting / 2` up to 2 waiting ahead: 0 for the first, 0.5 for the second.
    let steep = Queue {
        initial: 0.0,
        max: 1.0,
        wait: Duration::from_secs(5),
    };
    let limiter = SharedLimiter::with_queue(aimd(2), steep, Clock::monotonic(), dice);
    let running: Vec<_> = (0..2)
        .map(|_| admitted(limiter.admit(Criticality::Critical)))
        .collect();
    let sheddable = queued(limiter.admit(Criticality::Sheddable));
    let critical_plus = queued(limiter.admit(Criticality::CriticalPlus));
    assert_eq!(
        limiter.floor(),
        Criticality::Sheddable,
        "waiting raises nothing"
    );
    let Admission::Refused(refusal) = limiter.admit(Criticality::CriticalPlus) else {
        panic!("one ahead: a chance of 0.5, and a draw of 0.4")
    };
    assert_eq!(refusal.reason.criticality, Criticality::CriticalPlus);
    assert_eq!(limiter.floor(), Criticality::CriticalPlus);
    drop(running);
    let first = critical_plus.await.expect("the most critical first");
    first.settle(Settle::Success);
    assert_eq!((limiter.flying(), limiter.queued()), (0, 1));
    let start = tokio::time::Instant::now();
    let permit = sheddable.await.expect("let in once the floor cools");
    assert_eq!(start.elapsed(), Duration::from_secs(1));
    drop(permit);
    assert_eq!(limiter.flying(), 0);
}

// A cancelled waiter leaves the queue; a cancelled call (its permit dropped) leaves flight;
// a waiter cancelled after it was let in hands its room to the next; nothing stays counted.
#[tokio::test(start_paused = true)]
async fn cancelled_waiters_and_calls_leave_nothing_counted() {
    let limiter = SharedLimiter::with_queue(aimd(2), QUEUE, Clock::monotonic(), Dice::seeded(2));
    let first = admitted(limiter.admit(Criticality::Critical));
    let second = admitted(limiter.admit(Criticality::Critical));
    let gone = queued(limiter.admit(Criticality::Critical));
    let let_in_then_gone = queued(limiter.admit(Criticality::Critical));
    let last = queued(limiter.admit(Criticality::Critical));
    assert_eq!(limiter.queued(), 3);
    // A waiter that gives up (a timeout outside, a client that hung up) leaves at once.
    drop(gone);
    assert_eq!(limiter.queued(), 2);
    // The room the first call frees goes to the next in line, who is not polled yet...
    first.settle(Settle::Success);
    assert_eq!((limiter.flying(), limiter.queued()), (2, 1));
    // ...and gives up: its call is settled as ignored and the room goes on to the last.
    drop(let_in_then_gone);
    assert_eq!((limiter.flying(), limiter.queued()), (2, 0));
    let permit = last.await.expect("let in");
    // A call whose future is dropped mid-flight: its permit settles as ignored.
    let call = tokio::spawn(async move {
        let _permit = permit;
        std::future::pending::<()>().await;
    });
    tokio::task::yield_now().await;
    call.abort();
    let _ = call.await;
    drop(second);
    assert_eq!((limiter.flying(), limiter.queued()), (0, 0));
    // An `acquire` dropped while it waits leaves the queue too.
    let a = admitted(limiter.admit(Criticality::Critical));
    let b = admitted(limiter.admit(Criticality::Critical));
    let waiting = limiter.acquire(Criticality::Sheddable);
    let timed_out = tokio::time::timeout(ms(5), waiting).await;
    assert!(timed_out.is_err());
    assert_eq!(limiter.queued(), 0);
    drop((a, b));
    assert_eq!(limiter.flying(), 0);
}

// A waiter waits at most the queue's wait, then asks the core once more: refused, it carries
// the core's reason and how long it waited, and its class's refusal raises the floor.
#[tokio::test(start_paused = true)]
async fn a_waiter_past_its_wait_is_refused_by_the_core() {
    let queue = Queue {
        wait: ms(250),
        ..QUEUE
    };
    let limiter = SharedLimiter::with_queue(aimd(2), queue, Clock::monotonic(), Dice::seeded(3));
    let held: Vec<_> = (0..2)
        .map(|_| admitted(limiter.admit(Criticality::CriticalPlus)))
        .collect();
    let waiter = queued(limiter.admit(Criticality::Critical));
    let start = tokio::time::Instant::now();
    let refusal = waiter.await.expect_err("nobody left flight");
    assert_eq!(start.elapsed(), ms(250));
    assert_eq!(refusal.queued, Queued::Expired { waited: ms(250) });
    assert_eq!(
        (refusal.reason.flying, refusal.reason.criticality),
        (2, Criticality::Critical)
    );
    assert!(
        refusal
            .to_string()
            .ends_with("; it waited 250ms in the queue")
    );
    assert_eq!(limiter.floor(), Criticality::Critical);
    assert_eq!(limiter.queued(), 0);
    drop(held);
    // A wait that ends as room frees lets the call in instead.
    let held = admitted(limiter.admit(Criticality::Critical));
    let held2 = admitted(limiter.admit(Criticality::Critical));
    let waiter = queued(limiter.admit(Criticality::Critical));
    let release = tokio::spawn(async move {
        sleep(ms(100)).await;
        held.settle(Settle::Success);
    });
    let permit = waiter.await.expect("room at 100 ms");
    release.await.unwrap();
    drop((permit, held2));
    assert_eq!(limiter.flying(), 0);
}

// A retune keeps the calls in flight and lets in the queued calls the new policy has room
// for.
#[tokio::test(start_paused = true)]
async fn a_retune_moves_the_limit_live_and_lets_the_queue_in() {
    let limiter = SharedLimiter::with_queue(aimd(1), QUEUE, Clock::monotonic(), Dice::seeded(4));
    let running = admitted(limiter.admit(Criticality::Critical));
    let waiters: Vec<_> = (0..2)
        .map(|_| queued(limiter.admit(Criticality::Critical)))
        .collect();
    let at_least_three = Adaptive {
        algorithm: Algorithm::Aimd(Aimd {
            initial: 3,
            min: 3,
            max: 100,
            ..AIMD
        }),
        ..aimd(1)
    };
    let was = limiter.retune(at_least_three);
    assert_eq!(was, aimd(1));
    assert_eq!(limiter.limit(), 3);
    assert_eq!((limiter.flying(), limiter.queued()), (3, 0));
    let mut permits = Vec::new();
    for waiter in waiters {
        permits.push(waiter.await.expect("let in by the retune"));
    }
    drop((running, permits));
    assert_eq!(limiter.flying(), 0);
}

// Clones share one limit across tasks: many tasks taking and settling permits through clones
// never hold more than the limit, and leave nothing in flight.
#[tokio::test(start_paused = true)]
async fn clones_across_tasks_share_one_limit() {
    let limiter = SharedLimiter::with_queue(aimd(5), QUEUE, Clock::monotonic(), Dice::seeded(5));
    let inside = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let tasks: Vec<_> = (0..40u64)
        .map(|k| {
            let limiter = limiter.clone();
            let (inside, most) = (Arc::clone(&inside), Arc::clone(&most));
            tokio::spawn(async move {
                sleep(ms(k % 7)).await;
                let class = Criticality::ALL[(k % 4) as usize];
                if let Ok(permit) = limiter.acquire(class).await {
                    let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    sleep(ms(20)).await;
                    inside.fetch_sub(1, Ordering::SeqCst);
                    permit.settle(Settle::Success);
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    advance(ms(1)).await;
    assert!(most.load(Ordering::SeqCst) <= 5);
    assert!(most.load(Ordering::SeqCst) >= 1);
    assert_eq!((limiter.flying(), limiter.queued()), (0, 0));
}

// A live change of the queue: a call already waiting keeps its place and is let in when
// room appears, though the queue was taken away; calls arriving after are refused at once
// (no queue), then turned away at once by a queue that holds none, then queued again.
#[tokio::test(start_paused = true)]
async fn a_retuned_queue_decides_new_calls_and_keeps_the_waiting_ones() {
    let (dice, _cell, draws) = dial(0.5);
    let limiter = SharedLimiter::with_queue(aimd(1), QUEUE, Clock::monotonic(), dice);
    let running = admitted(limiter.admit(Criticality::Critical));
    let waiter = queued(limiter.admit(Criticality::Critical));
    assert_eq!(limiter.retune_queue(None), Some(QUEUE));
    assert_eq!(limiter.queue(), None);
    match limiter.admit(Criticality::Critical) {
        Admission::Refused(refusal) => assert_eq!(refusal.queued, Queued::Off),
        other => panic!("no queue: refused at once, got {other:?}"),
    }
    assert_eq!(limiter.queued(), 1, "the waiting call kept its place");

    let none = Queue {
        initial: 0.0,
        max: 0.0,
        ..QUEUE
    };
    assert_eq!(limiter.retune_queue(Some(none)), None);
    match limiter.admit(Criticality::Critical) {
        Admission::Refused(refusal) => assert_eq!(
            refusal.queued,
            Queued::Rejected {
                waiting: 1,
                rejection: 1.0
            }
        ),
        other => panic!("a queue that holds none turns away, got {other:?}"),
    }
    assert_eq!(
        draws.load(Ordering::Relaxed),
        0,
        "a certain rejection draws nothing"
    );

    running.settle(Settle::Success);
    let permit = waiter.await.expect("the waiting call is let in");
    assert_eq!((limiter.flying(), limiter.queued()), (1, 0));
    assert_eq!(limiter.retune_queue(Some(QUEUE)), Some(none));
    let again = queued(limiter.admit(Criticality::Critical));
    assert_eq!(limiter.queued(), 1);
    drop((permit, again));
}
