//! Properties of `SharedShedder` on one thread, against its `&mut` twin: the core's
//! `Shedder`, given the same readings, CPU and settles, clocks going backwards and retunes
//! included.

use std::time::Duration;

use ironward::{Criticality, Shares, Shed, ShedReason, Shedder, Ticket};
use ironward_tokio::{SharedShedder, ShedTicket};
use proptest::prelude::*;

/// One call on both shedders; times are steps from the latest reading.
#[derive(Debug, Clone)]
enum Op {
    Check {
        step: Step,
        cpu: u32,
        class: Criticality,
    },
    Pass {
        which: usize,
        step: Step,
    },
    Fail {
        which: usize,
    },
    Retune {
        shed: Shed,
        step: Step,
    },
    Passes {
        step: Step,
    },
}

/// One clock reading, relative to the latest one taken, in nanoseconds.
#[derive(Debug, Clone, Copy)]
enum Step {
    Forward(u64),
    Back(u64),
    End,
}

/// Steps mostly within a bucket of the policies below, some across several, some back.
fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        8 => (0..3_000_000u64).prop_map(Step::Forward),
        2 => (0..40_000_000u64).prop_map(Step::Forward),
        3 => (0..5_000_000u64).prop_map(Step::Back),
        1 => Just(Step::Back(u64::MAX)),
        1 => Just(Step::End),
    ]
}

/// Readings under go-zero's 900 ‰, around it, and past 1000.
fn cpu() -> impl Strategy<Value = u32> {
    prop_oneof![4 => 0..900u32, 4 => 850..=1000u32, 1 => Just(u32::MAX)]
}

/// Small windows (so that buckets end within a run), the preset's, and hostile constants.
/// The classes a call asks as: the default most often.
fn class() -> impl Strategy<Value = Criticality> {
    prop_oneof![
        3 => Just(Criticality::Critical),
        1 => Just(Criticality::Sheddable),
        1 => Just(Criticality::SheddableConcurrent),
        1 => Just(Criticality::CriticalPlus),
    ]
}

/// The preset's shares, and hostile ones.
fn shares() -> impl Strategy<Value = Shares> {
    let share = || prop_oneof![0.0..=1.0f64, Just(f64::NAN), Just(-1.0), Just(2.0)];
    prop_oneof![
        3 => Just(ironward::SHARES),
        1 => (share(), share(), share(), share()).prop_map(|(a, b, c, d)| Shares {
            sheddable: a,
            sheddable_concurrent: b,
            critical: c,
            critical_plus: d,
        }),
    ]
}

fn policy() -> impl Strategy<Value = Shed> {
    (
        prop_oneof![1 => Just(0usize), 6 => 1..8usize, 1 => Just(50usize), 1 => Just(usize::MAX)],
        prop_oneof![
            6 => (1..40u64).prop_map(Duration::from_millis),
            1 => Just(Duration::ZERO),
            1 => Just(Duration::MAX),
            1 => Just(Duration::from_secs(5)),
        ],
        prop_oneof![Just(0u32), 850..=1000u32, Just(u32::MAX)],
        prop_oneof![
            Just(Duration::ZERO),
            Just(Duration::MAX),
            (0..20u64).prop_map(Duration::from_millis)
        ],
        prop_oneof![
            Just(f64::NAN),
            Just(-1.0),
            0.0..1.0f64,
            Just(0.9),
            Just(2.0)
        ],
        prop_oneof![
            Just(Duration::ZERO),
            Just(Duration::MAX),
            (0..30u64).prop_map(Duration::from_millis)
        ],
        prop_oneof![Just(f64::NAN), 0.0..1.0f64, Just(0.1), Just(f64::INFINITY)],
        shares(),
    )
        .prop_map(
            |(size, window, cpu, latency, beta, cool, floor, shares)| Shed {
                size,
                window,
                cpu,
                latency,
                beta,
                cool,
                floor,
                shares,
            },
        )
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(
        prop_oneof![
            8 => (step(), cpu(), class()).prop_map(|(step, cpu, class)| Op::Check { step, cpu, class }),
            5 => (any::<usize>(), step()).prop_map(|(which, step)| Op::Pass { which, step }),
            2 => any::<usize>().prop_map(|which| Op::Fail { which }),
            1 => (policy(), step()).prop_map(|(shed, step)| Op::Retune { shed, step }),
            1 => step().prop_map(|step| Op::Passes { step }),
        ],
        0..400,
    )
}

/// The caller's clock: `latest` is the latest reading it took, which each step moves from.
fn read(latest: &mut u64, step: Step) -> Duration {
    match step {
        Step::Forward(by) => {
            *latest = latest.saturating_add(by);
            Duration::from_nanos(*latest)
        }
        Step::Back(by) => Duration::from_nanos(latest.saturating_sub(by)),
        Step::End => Duration::MAX,
    }
}

/// A refusal's numbers, the floats as bits so that a NaN compares equal to itself.
fn numbers(reason: &ShedReason) -> (u32, u64, u64, u64, bool, bool, Criticality, Criticality) {
    (
        reason.cpu,
        reason.flying,
        reason.average.to_bits(),
        reason.capacity.to_bits(),
        reason.overloaded,
        reason.cooling,
        reason.criticality,
        reason.floor,
    )
}

/// A policy as text, so that two with NaN constants compare equal.
fn shown(shed: &Shed) -> String {
    format!("{shed:?}")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    // Any run of decisions of every class, passes, fails, retunes and window reads under any
    // policy, with a clock that steps back and jumps to its end: the shared shedder answers every call as
    // `Shedder` does (each start, and each refusal's numbers to the bit), retune returns the
    // policy it replaced, and after every call the two hold the same count in flight and the
    // same average; the window totals agree whenever they are read, and at the end.
    #[test]
    fn decides_exactly_as_shedder_on_one_thread(
        shed in policy(),
        start in 0..1_000_000_000u64,
        ops in ops(),
    ) {
        let mut latest = start;
        let shared = SharedShedder::new(shed, Duration::from_nanos(start));
        let mut exact = Shedder::new(shed, Duration::from_nanos(start));
        let mut open: Vec<(ShedTicket, Ticket)> = Vec::new();
        for (step, op) in ops.into_iter().enumerate() {
            match op {
                Op::Check { step: at, cpu, class } => {
                    let now = read(&mut latest, at);
                    match (shared.check_as(now, cpu, class), exact.check_as(now, cpu, class)) {
                        (Ok(a), Ok(b)) => {
                            prop_assert_eq!(a.start(), b.start(), "step {}", step);
                            open.push((a, b));
                        }
                        (Err(a), Err(b)) => {
                            prop_assert_eq!(numbers(&a), numbers(&b), "step {}", step);
                        }
                        (a, b) => prop_assert!(false, "step {}: {:?} against {:?}", step, a, b),
                    }
                }
                Op::Pass { which, step: at } if !open.is_empty() => {
                    let now = read(&mut latest, at);
                    let (a, b) = open.swap_remove(which % open.len());
                    shared.pass(a, now);
                    exact.pass(b, now);
                }
                Op::Fail { which } if !open.is_empty() => {
                    let (a, b) = open.swap_remove(which % open.len());
                    shared.fail(a);
                    exact.fail(b);
                }
                Op::Pass { .. } | Op::Fail { .. } => {}
                Op::Retune { shed, step: at } => {
                    let now = read(&mut latest, at);
                    let was = *exact.shed();
                    exact.retune(shed, now);
                    prop_assert_eq!(shown(&shared.retune(shed, now)), shown(&was));
                    prop_assert_eq!(shown(&shared.shed()), shown(&shed));
                }
                Op::Passes { step: at } => {
                    let now = read(&mut latest, at);
                    prop_assert_eq!(shared.passes(now), exact.passes(now), "step {}", step);
                }
            }
            prop_assert_eq!(shared.flying(), exact.flying(), "step {}", step);
            prop_assert_eq!(
                shared.average().to_bits(),
                exact.average().to_bits(),
                "step {}", step
            );
        }
        let now = Duration::from_nanos(latest);
        prop_assert_eq!(shared.passes(now), exact.passes(now));
    }
}
