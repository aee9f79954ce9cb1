//! Properties of `SharedSreBreaker` on one thread, against its `&mut` twin: the core's
//! `SreBreaker`, given the same readings, draws and settles, clocks going backwards, retunes,
//! floors below 1 and infinite constants included.

use std::time::Duration;

use ironward::{SRE, Sre, SreBreaker, SrePermit, Tally};
use ironward_tokio::{SharedSreBreaker, SharedSrePermit};
use proptest::prelude::*;

/// One call on both breakers; times are steps from the latest reading.
#[derive(Debug, Clone)]
enum Op {
    Check {
        step: Step,
        roll: f64,
    },
    Pass {
        which: usize,
        step: Step,
    },
    Fail {
        which: usize,
        step: Step,
    },
    Drop {
        which: usize,
    },
    Ratio {
        step: Step,
    },
    Retune {
        sre: Sre,
        step: Step,
    },
    /// A run of asks a few microseconds apart (one in `back` read backwards), each call let
    /// through failing at once: enough of them and the breaker refuses for long stretches,
    /// which a shared breaker decides from its copy of the window.
    Storm {
        calls: usize,
        back: usize,
        rolls: Vec<f64>,
    },
}

/// One clock reading, relative to the latest one taken, in nanoseconds (the classic breaker's
/// properties take their readings the same way).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Step {
    Forward(u64),
    Back(u64),
    End,
}

/// Steps mostly within a bucket of the policies below, some across several, some back.
fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        10 => (0..3_000_000u64).prop_map(Step::Forward),
        3 => (0..60_000_000u64).prop_map(Step::Forward),
        4 => (0..5_000_000u64).prop_map(Step::Back),
        1 => Just(Step::Back(u64::MAX)),
        1 => Just(Step::End),
    ]
}

/// Policies whose buckets are a few milliseconds wide, so that a run crosses many: the
/// preset's constants, a floor of exactly 1 with no protection (healthy on the line, never
/// certain), floors below 1 (the fast path off), infinite and NaN constants (the throttle
/// off), and hostile sizes.
fn sre() -> impl Strategy<Value = Sre> {
    let constants = prop_oneof![
        4 => Just((SRE.k, SRE.floor, SRE.protection)),
        1 => Just((1.0, 1.0, 0.0)),
        1 => Just((1.5, 0.9, 5.0)),
        1 => Just((0.5, 0.0, 2.0)),
        1 => Just((f64::INFINITY, 1.1, 5.0)),
        1 => Just((1.5, f64::NAN, 5.0)),
        1 => Just((1.5, 1.1, f64::INFINITY)),
        1 => Just((2.0, 1.0, 1e300)),
        2 => (1.0..3.0f64, 0.0..2.0f64, 0.0..20.0f64),
    ];
    let grid = prop_oneof![
        4 => (1..10usize, 5u64..60),
        1 => Just((0, 0)),
        1 => Just((usize::MAX, 1)),
        1 => Just((3, u64::MAX / 1_000_000)),
    ];
    (constants, grid, 0..40u64).prop_map(|((k, floor, protection), (size, window), probe)| Sre {
        k,
        floor,
        protection,
        probe: Duration::from_millis(probe),
        size,
        window: Duration::from_millis(window),
    })
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (step(), roll())
            .prop_map(|(step, roll)| Op::Check { step, roll }),
        6 => (any::<usize>(), step()).prop_map(|(which, step)| Op::Pass { which, step }),
        3 => (any::<usize>(), step()).prop_map(|(which, step)| Op::Fail { which, step }),
        1 => any::<usize>().prop_map(|which| Op::Drop { which }),
        1 => step().prop_map(|step| Op::Ratio { step }),
        1 => (sre(), step()).prop_map(|(sre, step)| Op::Retune { sre, step }),
        1 => (0..200usize, 2..20usize, prop::collection::vec(roll(), 1..8))
            .prop_map(|(calls, back, rolls)| Op::Storm { calls, back, rolls }),
    ]
}

/// Draws anywhere in `[0, 1)`, and the hostile ones: 0, NaN and past 1.
fn roll() -> impl Strategy<Value = f64> {
    prop_oneof![4 => 0.0..1.0f64, 1 => Just(0.0), 1 => Just(f64::NAN), 1 => Just(2.0)]
}

/// The readings of one run: every step from the latest, a backwards step read from there,
/// and the end of the clock read as no step at all unless `.1`.
pub(crate) struct Readings(pub(crate) u64, pub(crate) bool);

impl Readings {
    pub(crate) fn next(&mut self, step: Step) -> Duration {
        let at = match step {
            Step::Forward(n) => {
                self.0 = self.0.saturating_add(n);
                self.0
            }
            Step::Back(n) => self.0.saturating_sub(n),
            Step::End if self.1 => return Duration::MAX,
            Step::End => self.0,
        };
        Duration::from_nanos(at)
    }
}

/// Every bucket of the window at `now`, oldest first.
fn buckets(breaker: &SreBreaker, now: Duration) -> Vec<Tally> {
    let mut seen = Vec::new();
    breaker.window().each(now, |tally| seen.push(*tally));
    seen
}

/// Runs `ops` on a shared breaker and on its `&mut` twin, asserting that they answer every ask
/// alike, reasons included, read the same ratio, and end with the same window, bucket by
/// bucket; `end` lets a step reach the end of the clock, which every later reading then is.
fn same_as_breaker(sre: Sre, start: u64, ops: Vec<Op>, end: bool) -> Result<(), TestCaseError> {
    let start = Duration::from_nanos(start);
    let shared = SharedSreBreaker::new(sre, start);
    let mut breaker = SreBreaker::new(sre, start);
    let mut clock = Readings(start.as_nanos() as u64, end);
    let mut open: Vec<(SharedSrePermit, SrePermit)> = Vec::new();
    let mut last = start;
    for (step, op) in ops.into_iter().enumerate() {
        match op {
            Op::Check { step: s, roll } => {
                let now = clock.next(s);
                last = now;
                let (a, b) = (shared.check(now, roll), breaker.check(now, roll));
                match (a, b) {
                    (Ok(a), Ok(b)) => open.push((a, b)),
                    (Err(a), Err(b)) => prop_assert_eq!(a, b, "step {}", step),
                    (a, b) => prop_assert!(
                        false,
                        "step {}: {:?} against {:?}",
                        step,
                        a.map(drop),
                        b.map(drop)
                    ),
                }
            }
            Op::Pass { which, step: s } | Op::Fail { which, step: s } if !open.is_empty() => {
                let now = clock.next(s);
                last = now;
                let (a, b) = open.swap_remove(which % open.len());
                if matches!(op, Op::Pass { .. }) {
                    shared.pass(a, now);
                    breaker.pass(b, now);
                } else {
                    shared.fail(a, now);
                    breaker.fail(b, now);
                }
            }
            Op::Drop { which } if !open.is_empty() => {
                drop(open.swap_remove(which % open.len()));
            }
            Op::Ratio { step: s } => {
                let now = clock.next(s);
                prop_assert_eq!(shared.ratio(now), breaker.ratio(now), "step {}", step);
            }
            Op::Retune { sre, step: s } => {
                let now = clock.next(s);
                last = now;
                let was = format!("{:?}", breaker.sre());
                breaker.retune(sre, now);
                // Debug, so that a NaN constant reads as itself.
                prop_assert_eq!(format!("{:?}", shared.retune(sre, now)), was);
                prop_assert_eq!(
                    format!("{:?}", shared.sre()),
                    format!("{:?}", breaker.sre())
                );
            }
            Op::Storm { calls, back, rolls } => {
                for call in 0..calls {
                    let s = if call % back == 0 {
                        Step::Back(20_000)
                    } else {
                        Step::Forward(7_000)
                    };
                    let now = clock.next(s);
                    last = now;
                    let roll = rolls[call % rolls.len()];
                    match (shared.check(now, roll), breaker.check(now, roll)) {
                        (Ok(a), Ok(b)) => {
                            shared.fail(a, now);
                            breaker.fail(b, now);
                        }
                        (Err(a), Err(b)) => {
                            prop_assert_eq!(a, b, "step {} call {}", step, call);
                        }
                        (a, b) => prop_assert!(
                            false,
                            "step {} call {}: {:?} against {:?}",
                            step,
                            call,
                            a.map(drop),
                            b.map(drop)
                        ),
                    }
                }
            }
            _ => {}
        }
    }
    let snapshot = shared.snapshot();
    prop_assert_eq!(buckets(&snapshot, last), buckets(&breaker, last));
    prop_assert_eq!(snapshot.ratio(last), breaker.ratio(last));
    prop_assert_eq!(snapshot.healthy_until(), breaker.healthy_until());
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    // Any run of asks, settles in any order, permits dropped unsettled, ratio reads and
    // retunes, at readings that go forward, back and to the end of the clock: the shared
    // breaker answers every ask as `SreBreaker::check` does, reasons included, reads the same
    // ratio, and ends with the same window, bucket by bucket.
    #[test]
    fn decides_exactly_as_breaker_on_one_thread(sre in sre(), start in 0..1_000_000_000u64, ops in prop::collection::vec(op(), 0..400)) {
        same_as_breaker(sre, start, ops, true)?;
    }

    // The same runs, with no reading at the end of the clock (where no bucket ever ends, so
    // the calls all take the lock): the storms leave the breaker refusing for long stretches,
    // refused from the shared breaker's copy of the window, and every refusal has the reason
    // `SreBreaker::check` gives it, the probe and the bucket ends included.
    #[test]
    fn decides_exactly_as_breaker_through_long_refusals(sre in sre(), start in 0..1_000_000_000u64, ops in prop::collection::vec(op(), 0..300)) {
        same_as_breaker(sre, start, ops, false)?;
    }
}

// The healthy case from a fresh breaker: a long run of asks and successes crossing many
// buckets, then failures until it refuses, then successes until it recovers. The shared
// breaker answers as the `&mut` one at every step.
#[test]
fn an_outage_and_a_recovery_decide_as_breaker() {
    let ms = Duration::from_millis;
    let shared = SharedSreBreaker::new(SRE, ms(0));
    let mut breaker = SreBreaker::new(SRE, ms(0));
    let mut refused = 0;
    for i in 0..30_000u64 {
        let now = ms(i);
        let roll = (i % 97) as f64 / 97.0;
        let ok = !(10_000..15_000).contains(&i);
        match (shared.check(now, roll), breaker.check(now, roll)) {
            (Ok(a), Ok(b)) if ok => {
                shared.pass(a, now);
                breaker.pass(b, now);
            }
            (Ok(a), Ok(b)) => {
                shared.fail(a, now);
                breaker.fail(b, now);
            }
            (Err(a), Err(b)) => {
                assert_eq!(a, b, "call {i}");
                refused += 1;
            }
            _ => panic!("call {i} decided differently"),
        }
    }
    assert!(refused > 1_000, "the outage refused {refused}");
    let end = ms(30_000);
    assert_eq!(shared.ratio(end), breaker.ratio(end));
    assert_eq!(buckets(&shared.snapshot(), end), buckets(&breaker, end));
}

// A call let through on the fast path moves the breaker's clock as `SreBreaker::check` does,
// even when its permit is dropped: a later reading that goes backwards is read as that
// call's time, which the probe measures from.
#[test]
fn a_fast_call_moves_the_clock_the_probe_reads() {
    let ms = Duration::from_millis;
    let sre = Sre {
        probe: ms(10),
        size: 1,
        ..SRE
    };
    let shared = SharedSreBreaker::new(sre, ms(0));
    let mut breaker = SreBreaker::new(sre, ms(0));
    drop(shared.allow(ms(100), 0.5).expect("healthy"));
    drop(breaker.allow(ms(100), 0.5).expect("healthy"));
    // Failures read back at 0 ms, which both breakers read as 100 ms.
    for _ in 0..100 {
        if let (Some(a), Some(b)) = (shared.allow(ms(0), 0.99), breaker.allow(ms(0), 0.99)) {
            shared.fail(a, ms(0));
            breaker.fail(b, ms(0));
        }
    }
    // Let through over the drop fraction, which starts the probe's clock at 100 ms ...
    assert!(shared.allow(ms(0), 0.99).is_some());
    assert!(breaker.allow(ms(0), 0.99).is_some());
    // ... so 5 ms later no probe is due: both refuse.
    assert_eq!(
        shared.check(ms(105), 0.0).err(),
        breaker.check(ms(105), 0.0).err()
    );
    assert!(breaker.allow(ms(105), 0.0).is_none());
    assert!(shared.allow(ms(105), 0.0).is_none());
}
