//! Unit tests of `SharedShedder` that need its private items, and its stress tests on real
//! threads over a manual clock (time is passed in; nothing sleeps).

use std::sync::Barrier;
use std::sync::atomic::AtomicU64;
use std::thread;

use ironward::{Criticality, SHED};

use super::*;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

const THREADS: usize = 8;

// go-zero adaptiveshedder_test's virtual-clock sequence, as the core's unit tests drive it,
// through the shared form: the same refusals and the same numbers.
#[test]
fn reproduces_the_virtual_clock_sequence() {
    let shedder = SharedShedder::new(SHED, ms(0));
    let mut tickets: Vec<_> = (0..100)
        .map(|_| shedder.allow(ms(0), 950).expect("average 0 is not full"))
        .collect();
    for ticket in tickets.drain(..50) {
        shedder.pass(ticket, ms(50));
    }
    assert_eq!(shedder.flying(), 50);
    assert_eq!(shedder.average(), 58.43823850240212);
    let reason = shedder.check(ms(60), 950).expect_err("hot and full");
    assert_eq!(reason.capacity, 5.0);
    assert!(shedder.allow(ms(60), 0).is_none(), "cooling");
    // Bucket 0 is complete at 150 ms, and its 50 passes reach the exact shedder first.
    let reason = shedder.check(ms(150), 950).expect_err("still full");
    assert_eq!(reason.capacity, 12.5);
    assert!(shedder.allow(ms(1061), 0).is_none());
    let ticket = shedder.allow(ms(1150), 0).expect("cooled off");
    assert_eq!((shedder.flying(), ticket.start()), (51, ms(1150)));
    shedder.fail(ticket);
}

#[test]
fn a_cool_call_is_let_in_and_recorded_without_reaching_the_exact_shedder() {
    let shedder = SharedShedder::new(SHED, ms(0));
    let ticket = shedder.allow(ms(10), 300).expect("cool");
    shedder.pass(ticket, ms(30));
    // Still in the first bucket: the pass waits in a stripe, the exact window is empty.
    assert_eq!(lock(&shedder.exact).passes(ms(30)), Total::default());
    let gathered: u64 = shedder.stripes.iter().map(|s| s.load(Relaxed)).sum();
    assert_eq!(gathered, 1 << SUM_BITS | 20_000_000);
    assert_eq!(
        shedder.passes(ms(30)),
        Total {
            sum: 20_000_000,
            count: 1
        }
    );
}

#[test]
fn the_first_pass_past_a_bucket_hands_the_bucket_over() {
    let shedder = SharedShedder::new(SHED, ms(0));
    for _ in 0..3 {
        let ticket = shedder.allow(ms(0), 0).expect("idle");
        shedder.pass(ticket, ms(10));
    }
    let ticket = shedder.allow(ms(100), 0).expect("idle");
    shedder.pass(ticket, ms(120));
    let exact = lock(&shedder.exact);
    assert_eq!(exact.passes(ms(120)).count, 4);
    assert_eq!(exact.bucket_end(), ms(200));
    assert_eq!(shedder.mirror.until.load(Relaxed), nanos(ms(200)));
}

#[test]
fn a_stripe_that_cannot_hold_a_pass_sends_it_to_the_exact_shedder() {
    // One bucket of ten hours, so that every pass below falls in the first.
    let long = Shed {
        size: 1,
        window: Duration::from_secs(36_000),
        ..SHED
    };
    let shedder = SharedShedder::new(long, ms(0));
    // A response time past what a stripe's sum holds (about 4.9 hours): a clock that jumped.
    let ticket = shedder.allow(ms(0), 0).expect("idle");
    shedder.pass(ticket, Duration::from_nanos(SUM_MAX + 1));
    assert_eq!(
        lock(&shedder.exact).passes(ms(0)).count,
        1,
        "recorded at once"
    );
    // And a full count.
    shedder.stripes.mine().store(COUNT_MAX << SUM_BITS, Relaxed);
    let ticket = shedder.allow(ms(0), 0).expect("idle");
    assert!(!shedder.gather(1));
    shedder.fail(ticket);
    let total = shedder.passes(ms(0));
    assert_eq!(total.count, COUNT_MAX + 1);
}

#[test]
fn hostile_inputs_do_not_panic() {
    let hostile = Shed {
        size: 0,
        window: Duration::ZERO,
        cpu: 0,
        latency: Duration::MAX,
        beta: f64::NAN,
        cool: Duration::MAX,
        floor: f64::NAN,
        shares: ironward::Shares {
            sheddable: f64::NAN,
            sheddable_concurrent: -1.0,
            critical: f64::INFINITY,
            critical_plus: 2.0,
        },
    };
    let shedder = SharedShedder::new(hostile, Duration::MAX);
    for cpu in [0, 500, 1000, u32::MAX] {
        for class in Criticality::ALL {
            if let Ok(ticket) = shedder.check_as(Duration::MAX, cpu, class) {
                shedder.pass(ticket, Duration::ZERO);
            }
        }
    }
    let _ = shedder.retune(SHED, Duration::ZERO);
    assert_eq!(
        shedder.average(),
        0.0,
        "a NaN beta is 1: the average stays at 0"
    );
    assert_eq!(shedder.flying(), 0);
}

// The core's floor can outlast its heat: a refusal while cooling holds the classes below it
// for the cooling time from then, after the heat itself has cooled and the mirror's gate
// says so. The mirror's floor keeps the fast path from admitting them meanwhile.
#[test]
fn a_floor_that_outlasts_the_heat_still_refuses_the_less_critical() {
    let shedder = SharedShedder::new(SHED, ms(0));
    let mut tickets: Vec<_> = (0..100)
        .map(|_| shedder.check(ms(0), 950).unwrap())
        .collect();
    for ticket in tickets.drain(..50) {
        shedder.pass(ticket, ms(50));
    }
    // Overloaded at 60 ms; still hot (cooling) and full at 500 ms under the threshold.
    assert!(shedder.check(ms(60), 950).is_err());
    let cooling = shedder.check(ms(500), 0).expect_err("cooling and full");
    assert!(cooling.cooling);
    // 1100 ms: the heat of 60 ms has cooled, the refusal of 500 ms has not.
    tickets.push(shedder.check(ms(1100), 0).expect("the heat has cooled"));
    assert_eq!(
        shedder.mirror.gate.load(Relaxed) & 1,
        0,
        "the gate says cool"
    );
    let floor = shedder
        .check_as(ms(1100), 0, Criticality::Sheddable)
        .expect_err("below the floor");
    assert_eq!(
        (floor.criticality, floor.floor),
        (Criticality::Sheddable, Criticality::Critical)
    );
    // Past the cooling time of the last refusal, the sheddable are let in without the lock:
    // the exact shedder's clock does not move.
    let before = lock(&shedder.exact).latest();
    tickets.push(
        shedder
            .check_as(ms(1501), 0, Criticality::Sheddable)
            .expect("cooled"),
    );
    assert_eq!(lock(&shedder.exact).latest(), before);
    for ticket in tickets {
        shedder.fail(ticket);
    }
    assert_eq!(shedder.flying(), 0);
}

// A retune that lengthens the cooling time lengthens the floor the mirror holds, as the
// core's floor reads the cooling time in force.
#[test]
fn a_longer_cooling_time_holds_the_floor_longer() {
    let shedder = SharedShedder::new(SHED, ms(0));
    let mut tickets: Vec<_> = (0..100)
        .map(|_| shedder.check(ms(0), 950).unwrap())
        .collect();
    for ticket in tickets.drain(..50) {
        shedder.pass(ticket, ms(50));
    }
    assert!(shedder.check(ms(60), 950).is_err());
    let long = Shed {
        cool: Duration::from_secs(3),
        ..SHED
    };
    let _ = shedder.retune(long, ms(70));
    for ticket in tickets.drain(..) {
        shedder.fail(ticket);
    }
    // Cool, empty, and 2 s after the refusal: within the new cooling time.
    assert!(
        shedder
            .check_as(ms(2060), 0, Criticality::Sheddable)
            .is_err()
    );
    let ticket = shedder
        .check_as(ms(3061), 0, Criticality::Sheddable)
        .expect("past the new cooling time");
    shedder.fail(ticket);
}

#[test]
fn a_ticket_of_another_shedder_never_takes_the_count_below_zero() {
    let one = SharedShedder::new(SHED, ms(0));
    let other = SharedShedder::new(SHED, ms(0));
    let ticket = one.allow(ms(0), 0).expect("idle");
    other.fail(ticket);
    assert_eq!((one.flying(), other.flying()), (1, 0));
}

#[test]
fn debug_shows_the_count_and_the_average() {
    let shedder = SharedShedder::new(SHED, ms(0));
    let ticket = shedder.allow(ms(0), 0).expect("idle");
    let shown = format!("{shedder:?}");
    assert!(shown.starts_with("SharedShedder { flying: 1, average: 0.0, exact: Mutex"));
    shedder.fail(ticket);
}

/// Every thread makes `rounds` calls through `shedder`, at readings of one manual clock that
/// thread 0 moves on by `step` nanoseconds a round, with the CPU at `cpu(thread, round)`; an
/// admitted call passes (even rounds) or fails (odd). Returns the passes made.
fn hammer(
    shedder: &SharedShedder,
    rounds: u64,
    step: u64,
    cpu: impl Fn(usize, u64) -> u32 + Sync,
) -> u64 {
    let clock = AtomicU64::new(0);
    let barrier = Barrier::new(THREADS);
    thread::scope(|s| {
        let workers: Vec<_> = (0..THREADS)
            .map(|thread| {
                let (clock, barrier, cpu) = (&clock, &barrier, &cpu);
                s.spawn(move || {
                    barrier.wait();
                    let mut passed = 0;
                    for round in 0..rounds {
                        if thread == 0 {
                            clock.fetch_add(step, Relaxed);
                        }
                        let now = Duration::from_nanos(clock.load(Relaxed));
                        if let Some(ticket) = shedder.allow(now, cpu(thread, round)) {
                            let end = Duration::from_nanos(clock.load(Relaxed));
                            if round % 2 == 0 {
                                shedder.pass(ticket, end);
                                passed += 1;
                            } else {
                                shedder.fail(ticket);
                            }
                        }
                    }
                    passed
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).sum()
    })
}

// Eight threads over a clock that crosses a bucket every few hundred rounds, all within one
// window: the count in flight returns to 0 and the window holds every pass made, gathered in
// stripes or recorded under the lock.
#[test]
fn eight_threads_lose_no_pass_and_end_with_nothing_in_flight() {
    let shedder = SharedShedder::new(SHED, ms(0));
    // 40 000 rounds of 100 µs: 4 s, inside the 5 s window.
    let passed = hammer(&shedder, 40_000, 100_000, |_, _| 300);
    assert_eq!(shedder.flying(), 0);
    let total = shedder.passes(ms(0));
    assert_eq!(total.count, passed);
    assert_eq!(
        passed,
        THREADS as u64 * 20_000,
        "a cool server admits every call"
    );
}

// Hot and cool readings mixed, so the locked path decides and refuses on some threads while
// the fast path admits on others: still nothing in flight at the end and no pass lost.
#[test]
fn mixed_heat_under_contention_loses_nothing() {
    let shedder = SharedShedder::new(SHED, ms(0));
    let passed = hammer(&shedder, 40_000, 100_000, |thread, round| {
        if (thread as u64 + round / 1000).is_multiple_of(3) {
            990
        } else {
            100
        }
    });
    assert_eq!(shedder.flying(), 0);
    assert_eq!(shedder.passes(ms(0)).count, passed);
    assert!(passed > 0);
}

// A hot, full server that has refused, then a cool CPU within the cooling time: the exact
// shedder on one thread refuses every such call (full, and still hot), so no thread may be
// let in on the fast path however many ask at once.
#[test]
fn a_cooling_server_refuses_on_every_thread() {
    let shedder = SharedShedder::new(SHED, ms(0));
    let held: Vec<_> = (0..40).filter_map(|_| shedder.allow(ms(0), 950)).collect();
    let mut held = held.into_iter();
    for ticket in held.by_ref().take(20) {
        shedder.fail(ticket);
    }
    assert!(shedder.check(ms(10), 950).is_err(), "hot and full");
    let admitted = AtomicU64::new(0);
    thread::scope(|s| {
        for thread in 0..THREADS as u64 {
            let (shedder, admitted) = (&shedder, &admitted);
            s.spawn(move || {
                for round in 0..10_000u64 {
                    // Under the cooling time (1 s) since the CPU was last hot at 10 ms.
                    let now = ms(10 + (thread * 10_000 + round) % 990);
                    if let Some(ticket) = shedder.allow(now, 100) {
                        admitted.fetch_add(1, Relaxed);
                        shedder.fail(ticket);
                    }
                }
            });
        }
    });
    assert_eq!(admitted.load(Relaxed), 0);
    assert_eq!(shedder.flying(), 20);
    // Cooled, the fast path opens again.
    let ticket = shedder.allow(ms(1010), 100).expect("cooled");
    assert_eq!(shedder.mirror.gate.load(Relaxed) & 1, 0);
    shedder.fail(ticket);
    drop(held);
}

// Retunes under contention (threshold and window width moving, so the windows restart):
// nothing panics, nothing stays in flight, and the policy ends as last set.
#[test]
fn retunes_under_contention_keep_the_count_in_flight() {
    let shedder = SharedShedder::new(SHED, ms(0));
    thread::scope(|s| {
        s.spawn(|| {
            for k in 0..2_000u64 {
                let shed = Shed {
                    cpu: 500 + (k % 5) as u32 * 100,
                    window: Duration::from_secs(1 + k % 3),
                    ..SHED
                };
                let _ = shedder.retune(shed, Duration::from_micros(k * 50));
            }
        });
        let _ = hammer(&shedder, 20_000, 5_000, |thread, _| 100 * thread as u32);
    });
    assert_eq!(shedder.flying(), 0);
    assert_eq!(shedder.shed().cpu, 500 + (1_999 % 5) * 100);
}
