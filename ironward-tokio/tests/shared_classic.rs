//! Properties of `SharedClassicBreaker` on one thread, against its `&mut` twin: the core's
//! `ClassicBreaker`, given the same readings and settles, clocks going backwards and to
//! their end, slow calls, retunes and states put by hand included.

use std::ops::Range;
use std::time::Duration;

use ironward::classic::{Force, HalfOpen, OpenWait, Record};
use ironward::{CLASSIC, Classic, ClassicBreaker, ClassicPermit};
use ironward_tokio::{SharedClassicBreaker, SharedClassicPermit};
use proptest::prelude::*;

use crate::shared_breaker::{Readings, Step};

/// One call on both breakers; times are steps from the latest reading.
#[derive(Debug, Clone)]
enum Op {
    Check {
        step: Step,
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
    State {
        step: Step,
    },
    Retune {
        policy: Classic,
        step: Step,
    },
    /// A run of calls microseconds apart, each let through settled at once (failing one in
    /// `fail_every`, slow one in `slow_every`, one in `keep_every` kept unsettled for a later
    /// op, perhaps in a later stage): the healthy case, on the fast path.
    Run {
        calls: usize,
        fail_every: usize,
        slow_every: usize,
        keep_every: usize,
    },
}

/// Steps mostly within a bucket of the policies below, some across several and past the
/// slow threshold, some back, and to the end of the clock where `end`.
fn step(end: bool) -> impl Strategy<Value = Step> {
    let end = if end { 1 } else { 0 };
    prop_oneof![
        10 => (0..2_000_000u64).prop_map(Step::Forward),
        3 => (0..40_000_000u64).prop_map(Step::Forward),
        4 => (0..3_000_000u64).prop_map(Step::Back),
        1 => Just(Step::Back(u64::MAX)),
        end => Just(Step::End),
    ]
}

/// Rates in range, at the edges and out of them.
fn rate() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => Just(0.5),
        1 => Just(0.0),
        1 => Just(1.0),
        1 => Just(f64::NAN),
        1 => Just(2.0),
        1 => Just(-1.0),
        2 => 0.0..1.0f64,
    ]
}

/// Policies with small records, so that a run fills, evicts and opens them: time records of
/// a few millisecond-wide buckets (not where the clock may reach its end), count and
/// consecutive records; short open waits, growing ones, few probes, every state by hand.
fn policy(end: bool) -> impl Strategy<Value = Classic> {
    let time = if end { 0 } else { 3 };
    let record = prop_oneof![
        3 => (0..8u32).prop_map(|calls| Record::Count { calls }),
        time => (1..30u64, 0..6u32).prop_map(|(span, buckets)| Record::Time {
            span: Duration::from_millis(span),
            buckets
        }),
        1 => (0..4u32).prop_map(|failures| Record::Consecutive { failures }),
    ];
    let open = prop_oneof![
        (0..20u64).prop_map(|ms| OpenWait::Fixed(Duration::from_millis(ms))),
        (1..5u64, 1.0..3.0f64).prop_map(|(ms, factor)| OpenWait::Growing {
            first: Duration::from_millis(ms),
            factor,
            max: Duration::from_millis(40),
        }),
    ];
    // Half-open by a fixed number of probes, or by a few stages of growing shares.
    let half_open = prop_oneof![
        3 => Just(HalfOpen::Probes),
        1 => (1..60u32, 1..4u32, 1..30u64).prop_map(|(percent, stages, hold)| {
            HalfOpen::Progressive {
                first: f64::from(percent) / 100.0,
                factor: 2.0,
                stages,
                hold: Duration::from_millis(hold),
            }
        }),
    ];
    let force = prop_oneof![
        12 => Just(Force::None),
        1 => Just(Force::MetricsOnly),
        1 => Just(Force::Open),
        1 => Just(Force::Disabled),
    ];
    (
        record,
        (rate(), rate()),
        (prop_oneof![0..6u64, Just(1_000)], 0..8u32, open),
        (0..4u32, 1..30u64, any::<bool>(), force),
        half_open,
    )
        .prop_map(
            |(
                record,
                (failure_rate, slow_rate),
                (slow, minimum, open),
                (probes, lease, automatic, force),
                half_open,
            )| {
                Classic {
                    record,
                    failure_rate,
                    slow_rate,
                    slow_call: Duration::from_millis(slow),
                    minimum,
                    open,
                    probes,
                    half_open,
                    lease: Duration::from_millis(lease),
                    automatic,
                    force,
                }
            },
        )
}

fn op(end: bool) -> impl Strategy<Value = Op> {
    let weights = Weights {
        checks: 8,
        passes: 6,
        fails: 3,
    };
    ops(
        move || step(end).boxed(),
        policy(end).boxed(),
        weights,
        (0..150, 1..60, 1..40),
    )
}

/// How often `ops` draws a check, a pass and a fail.
struct Weights {
    checks: u32,
    passes: u32,
    fails: u32,
}

/// Every op, drawn with `weights` against one each of the others: its readings `step()`, its
/// retunes to `policy`, its runs of `calls` calls failing one in `fail_every` and keeping one
/// in `keep_every`.
fn ops(
    step: impl Fn() -> BoxedStrategy<Step>,
    policy: BoxedStrategy<Classic>,
    weights: Weights,
    (calls, fail_every, keep_every): (Range<usize>, Range<usize>, Range<usize>),
) -> impl Strategy<Value = Op> {
    prop_oneof![
        weights.checks => step().prop_map(|step| Op::Check { step }),
        weights.passes => (any::<usize>(), step()).prop_map(|(which, step)| Op::Pass { which, step }),
        weights.fails => (any::<usize>(), step()).prop_map(|(which, step)| Op::Fail { which, step }),
        1 => any::<usize>().prop_map(|which| Op::Drop { which }),
        1 => step().prop_map(|step| Op::Ratio { step }),
        1 => step().prop_map(|step| Op::State { step }),
        1 => (policy, step()).prop_map(|(policy, step)| Op::Retune { policy, step }),
        2 => (calls, fail_every, 1..80usize, keep_every).prop_map(
            |(calls, fail_every, slow_every, keep_every)| Op::Run {
                calls,
                fail_every,
                slow_every,
                keep_every,
            }
        ),
    ]
}

/// Policies that dwell in open: waits of tens to hundreds of milliseconds, fixed or growing,
/// against steps of a few, so that most checks of an open breaker fall within its wait; and
/// now and then forced open.
fn dwelling() -> impl Strategy<Value = Classic> {
    let ms = Duration::from_millis;
    let open = prop_oneof![
        (20..300u64).prop_map(move |wait| OpenWait::Fixed(ms(wait))),
        (20..100u64, 1.0..3.0f64).prop_map(move |(first, factor)| OpenWait::Growing {
            first: ms(first),
            factor,
            max: ms(400),
        }),
    ];
    (policy(false), open).prop_map(|(policy, open)| Classic { open, ..policy })
}

/// Mostly checks a few milliseconds apart, forward and back, with failures to open the
/// breaker again once it closes, and now and then a step past a whole wait.
fn dwelling_op() -> impl Strategy<Value = Op> {
    let step = || {
        prop_oneof![
            6 => (0..3_000_000u64).prop_map(Step::Forward),
            2 => (0..4_000_000u64).prop_map(Step::Back),
            1 => Just(Step::Back(u64::MAX)),
            1 => (0..400_000_000u64).prop_map(Step::Forward),
        ]
        .boxed()
    };
    let weights = Weights {
        checks: 12,
        passes: 2,
        fails: 4,
    };
    ops(step, dwelling().boxed(), weights, (0..40, 1..3, 1..10))
}

/// The breaker's whole state as text, less who it is (a copy is another breaker) and its
/// one slot of changes (the shared form keeps them in its queue).
pub(crate) fn inside(breaker: &ClassicBreaker) -> String {
    let text = format!("{breaker:?}");
    let cut = |text: &str, field: &str| -> String {
        let Some(start) = text.find(field) else {
            return text.to_owned();
        };
        let end = text[start..]
            .find(", ")
            .map_or(text.len(), |at| start + at + 2);
        format!("{}{}", &text[..start], &text[end..])
    };
    cut(&cut(&text, "owner: "), "transition: ")
}

/// Both breakers took the same change of state, if any.
fn same_change(
    shared: &SharedClassicBreaker,
    breaker: &mut ClassicBreaker,
) -> Result<(), TestCaseError> {
    prop_assert_eq!(shared.take_transition(), breaker.take_transition());
    prop_assert_eq!(shared.take_transition(), None, "one change a decision");
    Ok(())
}

/// Asks both breakers at `now`: the same answer, the same reason.
fn check_both(
    shared: &SharedClassicBreaker,
    breaker: &mut ClassicBreaker,
    now: Duration,
) -> Result<Option<(SharedClassicPermit, ClassicPermit)>, TestCaseError> {
    let asked = match (shared.check(now), breaker.check(now)) {
        (Ok(a), Ok(b)) => Some((a, b)),
        (Err(a), Err(b)) => {
            prop_assert_eq!(a, b);
            None
        }
        (a, b) => {
            prop_assert!(false, "{:?} against {:?}", a.map(drop), b.map(drop));
            None
        }
    };
    same_change(shared, breaker)?;
    Ok(asked)
}

/// Settles both permits at `now`, failed or not.
fn settle_both(
    shared: &SharedClassicBreaker,
    breaker: &mut ClassicBreaker,
    (a, b): (SharedClassicPermit, ClassicPermit),
    failed: bool,
    now: Duration,
) -> Result<(), TestCaseError> {
    if failed {
        prop_assert!(shared.fail(a, now).is_none());
        prop_assert!(breaker.fail(b, now).is_none());
    } else {
        prop_assert!(shared.pass(a, now).is_none());
        prop_assert!(breaker.pass(b, now).is_none());
    }
    same_change(shared, breaker)
}

/// Runs `ops` on a shared breaker and on its `&mut` twin, asserting that they answer every
/// ask alike, reasons included, make the same changes of state, read the same ratio and
/// state, and end with the same record, clock and stage.
fn same_as_breaker(policy: Classic, start: u64, ops: Vec<Op>) -> Result<(), TestCaseError> {
    let start = Duration::from_nanos(start);
    let shared = SharedClassicBreaker::new(policy, start);
    let mut breaker = ClassicBreaker::new(policy, start);
    let mut clock = Readings(start.as_nanos() as u64, true);
    let mut open: Vec<(SharedClassicPermit, ClassicPermit)> = Vec::new();
    for (step, op) in ops.into_iter().enumerate() {
        match op {
            Op::Check { step: s } => {
                let now = clock.next(s);
                open.extend(check_both(&shared, &mut breaker, now)?);
            }
            Op::Pass { which, step: s } | Op::Fail { which, step: s } if !open.is_empty() => {
                let now = clock.next(s);
                let pair = open.swap_remove(which % open.len());
                settle_both(
                    &shared,
                    &mut breaker,
                    pair,
                    matches!(op, Op::Fail { .. }),
                    now,
                )?;
            }
            Op::Drop { which } if !open.is_empty() => {
                drop(open.swap_remove(which % open.len()));
            }
            Op::Ratio { step: s } => {
                let now = clock.next(s);
                prop_assert_eq!(shared.ratio(now), breaker.ratio(now), "step {}", step);
            }
            Op::State { step: s } => {
                let now = clock.next(s);
                prop_assert_eq!(shared.state(now), breaker.state(now), "step {}", step);
            }
            Op::Retune { policy, step: s } => {
                let now = clock.next(s);
                let was = format!("{:?}", breaker.policy());
                breaker.retune(policy, now);
                // Debug, so that a NaN rate reads as itself.
                prop_assert_eq!(format!("{:?}", shared.retune(policy, now)), was);
                prop_assert_eq!(
                    format!("{:?}", shared.policy()),
                    format!("{:?}", breaker.policy())
                );
                same_change(&shared, &mut breaker)?;
            }
            Op::Run {
                calls,
                fail_every,
                slow_every,
                keep_every,
            } => {
                for call in 0..calls {
                    let now = clock.next(Step::Forward(3_000));
                    let Some(pair) = check_both(&shared, &mut breaker, now)? else {
                        continue;
                    };
                    if call % keep_every == keep_every - 1 {
                        open.push(pair);
                        continue;
                    }
                    let took = if call % slow_every == 0 {
                        7_000_000
                    } else {
                        1_000
                    };
                    let end = clock.next(Step::Forward(took));
                    settle_both(&shared, &mut breaker, pair, call % fail_every == 0, end)?;
                }
            }
            _ => {}
        }
    }
    let snapshot = shared.snapshot();
    prop_assert_eq!(inside(&snapshot), inside(&breaker));
    prop_assert_eq!(snapshot.healthy_until(), breaker.healthy_until());
    prop_assert_eq!(shared.transitions(), breaker.transitions());
    prop_assert_eq!(shared.foreign(), 0);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    // Any run of asks, settles in any order, permits dropped unsettled, slow calls, ratio and
    // state reads and retunes, at readings that go forward and back: the shared breaker
    // answers every ask as `ClassicBreaker::check` does, reasons included, makes the same
    // changes of state, and ends with the same record, clock and stage.
    #[test]
    fn decides_exactly_as_classic_breaker_on_one_thread(
        policy in policy(false),
        start in 0..1_000_000_000u64,
        ops in prop::collection::vec(op(false), 0..300),
    ) {
        same_as_breaker(policy, start, ops)?;
    }

    // The same with readings that reach the end of the clock, where every later reading is
    // (for count and consecutive records).
    #[test]
    fn decides_exactly_as_classic_breaker_to_the_end_of_the_clock(
        policy in policy(true),
        start in 0..1_000_000_000u64,
        ops in prop::collection::vec(op(true), 0..300),
    ) {
        same_as_breaker(policy, start, ops)?;
    }

    // The same on breakers that dwell in open (or forced open), most of their checks refused
    // on the refusing path: the same reasons, the rest of the wait counted from the same
    // reading of the clock, readings back included, and the same move to half-open at the
    // wait's end.
    #[test]
    fn decides_exactly_as_classic_breaker_while_open(
        policy in dwelling(),
        start in 0..1_000_000_000u64,
        ops in prop::collection::vec(dwelling_op(), 0..300),
    ) {
        same_as_breaker(policy, start, ops)?;
    }
}

// A healthy backend's calls over many time buckets, an outage that opens the breaker, probes
// that fail and succeed, and the calls after: the shared breaker answers as the `&mut` one
// at every step and makes the same changes of state.
#[test]
fn an_outage_and_a_recovery_decide_as_classic_breaker() {
    let ms = Duration::from_millis;
    let policy = Classic {
        record: Record::Time {
            span: ms(1_000),
            buckets: 10,
        },
        minimum: 20,
        open: OpenWait::Fixed(ms(500)),
        probes: 3,
        slow_call: ms(50),
        ..CLASSIC
    };
    let shared = SharedClassicBreaker::new(policy, ms(0));
    let mut breaker = ClassicBreaker::new(policy, ms(0));
    let (mut refused, mut changes) = (0, 0);
    for i in 0..30_000u64 {
        let now = Duration::from_micros(i * 500);
        let down = (5_000..12_000).contains(&i);
        match (shared.check(now), breaker.check(now)) {
            (Ok(a), Ok(b)) => {
                let took = if i % 97 == 0 { ms(60) } else { ms(1) };
                if down {
                    shared.fail(a, now + took);
                    breaker.fail(b, now + took);
                } else {
                    shared.pass(a, now + took);
                    breaker.pass(b, now + took);
                }
            }
            (Err(a), Err(b)) => {
                assert_eq!(a, b, "call {i}");
                refused += 1;
            }
            _ => panic!("call {i} decided differently"),
        }
        let change = breaker.take_transition();
        assert_eq!(shared.take_transition(), change, "call {i}");
        changes += u64::from(change.is_some());
    }
    assert!(refused > 1_000, "the outage refused {refused}");
    assert!(changes >= 3, "{changes} changes of state");
    assert_eq!(inside(&shared.snapshot()), inside(&breaker));
}
