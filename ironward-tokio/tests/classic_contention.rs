//! `SharedClassicBreaker` under contention, on real threads: no success, failure or slow call
//! is lost or counted twice, each lands in the bucket of its time, and no change of state is
//! lost, each taken in the order it was made.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Barrier, Mutex};
use std::thread;
use std::time::Duration;

use ironward::classic::{OpenWait, Record, State, Transition};
use ironward::{CLASSIC, Classic, ClassicBreaker};
use ironward_tokio::{Clock, SharedClassicBreaker};

const THREADS: u64 = 4;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// The breaker's whole state as text, less who it is (a copy is another breaker).
fn inside(breaker: &ClassicBreaker) -> String {
    let text = format!("{breaker:?}");
    let start = text.find("owner: ").expect("an owner field");
    let end = start + text[start..].find(", ").expect("a field after it") + 2;
    format!("{}{}", &text[..start], &text[end..])
}

/// How call `call` of thread `thread` ends: failed, slow (a success settled 3 ms after it
/// was let through), or a success at once.
#[derive(Debug, Clone, Copy, PartialEq)]
enum End {
    Failed,
    Slow,
    Quick,
}

fn end(thread: u64, call: u64) -> End {
    match (thread * 7 + call) % 13 {
        0 => End::Failed,
        1 | 2 => End::Slow,
        _ => End::Quick,
    }
}

// Four threads in phases 7 ms apart over 10 ms buckets: each asks `CALLS` times at the
// phase's instant, then settles the quick successes and the failures there, then the slow
// successes 3 ms on (in that order, behind barriers, so that which calls are slow does not
// hang on the interleaving). The rates never open the breaker, so every failure closes the
// fast path under the others' successes and opens it again. The shared breaker ends with the
// record of one `ClassicBreaker` given the same calls one at a time, bucket by bucket.
#[test]
fn no_outcome_is_lost_or_counted_twice() {
    const PHASES: u64 = 12;
    const CALLS: u64 = 2_000;
    let policy = Classic {
        record: Record::Time {
            span: ms(100),
            buckets: 10,
        },
        failure_rate: f64::NAN,
        slow_rate: f64::NAN,
        slow_call: ms(1),
        minimum: 1,
        ..CLASSIC
    };
    let shared = SharedClassicBreaker::new(policy, ms(0));
    let (clock, hand) = Clock::manual(ms(0));
    let barrier = Barrier::new(THREADS as usize);
    thread::scope(|s| {
        for thread in 0..THREADS {
            let (shared, clock, hand, barrier) = (&shared, &clock, &hand, &barrier);
            s.spawn(move || {
                for _ in 0..PHASES {
                    let now = clock.now();
                    let permits: Vec<_> = (0..CALLS)
                        .map(|_| shared.check(now).expect("never opens"))
                        .collect();
                    barrier.wait();
                    let mut slow = Vec::new();
                    for (call, permit) in (0..).zip(permits) {
                        match end(thread, call) {
                            End::Failed => assert!(shared.fail(permit, now).is_none()),
                            End::Quick => assert!(shared.pass(permit, now).is_none()),
                            End::Slow => slow.push(permit),
                        }
                    }
                    barrier.wait();
                    for permit in slow {
                        assert!(shared.pass(permit, now + ms(3)).is_none());
                    }
                    if barrier.wait().is_leader() {
                        hand.advance(ms(7));
                    }
                    barrier.wait();
                }
            });
        }
    });
    let mut alone = ClassicBreaker::new(policy, ms(0));
    for phase in 0..PHASES {
        let now = ms(7 * phase);
        let mut permits = Vec::new();
        for thread in 0..THREADS {
            for call in 0..CALLS {
                permits.push((end(thread, call), alone.check(now).expect("never opens")));
            }
        }
        let mut slow = Vec::new();
        for (end, permit) in permits {
            match end {
                End::Failed => assert!(alone.fail(permit, now).is_none()),
                End::Quick => assert!(alone.pass(permit, now).is_none()),
                End::Slow => slow.push(permit),
            }
        }
        for permit in slow {
            assert!(alone.pass(permit, now + ms(3)).is_none());
        }
    }
    assert_eq!(inside(&shared.snapshot()), inside(&alone));
    assert_eq!(shared.take_transition(), None);
    assert_eq!(shared.foreign(), 0);
}

// Four threads asking and settling as fast as they can, each in runs of three failures and
// three successes, on a breaker that opens at the third failure in a row and lets its two
// probes through at once: it opens, half-opens and closes many times under them. Every
// thread takes what changes are pending after every eighth decision, so that several are
// made between two takes; together with what is left at the end, they are every change the
// breaker made, each leaving the state the one before it entered.
#[test]
fn every_change_of_state_is_taken_in_order() {
    let policy = Classic {
        record: Record::Consecutive { failures: 3 },
        open: OpenWait::Fixed(Duration::ZERO),
        probes: 2,
        ..CLASSIC
    };
    let shared = SharedClassicBreaker::new(policy, Duration::ZERO);
    let ticks = AtomicU64::new(0);
    let taken = Mutex::new(Vec::new());
    let take = || {
        let mut taken = taken.lock().expect("no test thread panics holding it");
        while let Some(change) = shared.take_transition() {
            taken.push(change);
        }
    };
    thread::scope(|s| {
        for thread in 0..THREADS {
            let (shared, ticks, take) = (&shared, &ticks, &take);
            s.spawn(move || {
                for call in 0..5_000u64 {
                    let now = Duration::from_micros(ticks.fetch_add(1, Ordering::Relaxed));
                    if let Ok(permit) = shared.check(now) {
                        if (call + thread) % 6 < 3 {
                            shared.fail(permit, now);
                        } else {
                            shared.pass(permit, now);
                        }
                    }
                    if call % 8 == 7 {
                        take();
                    }
                }
            });
        }
    });
    take();
    let taken = taken.into_inner().expect("no test thread panicked");
    assert_eq!(taken.len() as u64, shared.transitions());
    assert!(taken.len() > 30, "only {} changes", taken.len());
    let mut state = State::Closed;
    let mut closed = 0;
    for Transition { from, to } in taken {
        assert_eq!(from, state);
        state = to;
        closed += u32::from(to == State::Closed);
    }
    assert!(closed > 0, "it never closed again");
    assert_eq!(state, shared.state(Duration::from_secs(1)));
}

// Four threads asking an open breaker as fast as they can, at readings of one clock that moves
// a microsecond a call, across the end of its 20 ms wait, keeping every permit unsettled.
// Every refusal while open gives the shares that opened the breaker and at most the rest of
// the wait from the call's own reading (the breaker reads a call at that reading or later);
// the calls past the end move it half-open once and let its two probes through, and no
// other call; and the breaker's clock ends at the latest reading any call took.
#[test]
fn an_open_breaker_refuses_every_thread_until_its_wait_ends() {
    const CALLS: u64 = 8_000;
    let until = ms(20);
    let policy = Classic {
        record: Record::Consecutive { failures: 1 },
        open: OpenWait::Fixed(until),
        probes: 2,
        lease: Duration::from_secs(3_600),
        ..CLASSIC
    };
    let shared = SharedClassicBreaker::new(policy, Duration::ZERO);
    let permit = shared.check(Duration::ZERO).expect("closed");
    shared.fail(permit, Duration::ZERO);
    let ticks = AtomicU64::new(0);
    let (let_through, refused_open) = (AtomicU64::new(0), AtomicU64::new(0));
    thread::scope(|s| {
        for _ in 0..THREADS {
            let (shared, ticks) = (&shared, &ticks);
            let (let_through, refused_open) = (&let_through, &refused_open);
            s.spawn(move || {
                let mut kept = Vec::new();
                for _ in 0..CALLS {
                    let now = Duration::from_micros(ticks.fetch_add(1, Ordering::Relaxed));
                    match shared.check(now) {
                        Ok(permit) => {
                            // A call at or past the end moved it half-open before this one.
                            assert!(ticks.load(Ordering::Relaxed) > 20_000);
                            let_through.fetch_add(1, Ordering::Relaxed);
                            kept.push(permit);
                        }
                        Err(reason) if reason.state == State::Open => {
                            assert_eq!((reason.failure_rate, reason.slow_rate), (1.0, 0.0));
                            assert!(!reason.next.is_zero() && now + reason.next <= until);
                            refused_open.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(reason) => assert_eq!(reason.state, State::HalfOpen),
                    }
                }
                kept
            });
        }
    });
    assert_eq!(
        let_through.into_inner(),
        2,
        "the two probes, and no other call"
    );
    assert!(refused_open.into_inner() > 10_000);
    let taken: Vec<_> = std::iter::from_fn(|| shared.take_transition()).collect();
    assert_eq!(
        taken,
        [
            Transition {
                from: State::Closed,
                to: State::Open
            },
            Transition {
                from: State::Open,
                to: State::HalfOpen
            },
        ]
    );
    let last = Duration::from_micros(THREADS * CALLS - 1);
    assert_eq!(shared.snapshot().latest(), last);
}
