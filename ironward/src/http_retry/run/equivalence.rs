//! `Run` on the retry engine decides exactly as the `Run` before it ([`Before`]): on random
//! settings (valid or not, up to `Duration::MAX`), calls and sequences of attempts, responses,
//! faults, timeouts and refusals, with clocks that step back, draws that are NaN or infinite
//! and raw `Retry-After` bytes of every kind, both answer alike at every step, keep the same
//! record, last wait and time left, and leave their retry budgets (none, owned or shared) in
//! the same state. Sequences go on after a stop, so what a stopped run answers is held too.

use alloc::vec::Vec;
use core::time::Duration;

use proptest::prelude::*;

use super::before::Before;
use super::{Call, Fault, Reading, Run, Settings, Step, Timeout};
use crate::Budget;
use crate::budget::Teller;

/// Durations at the scale of the defaults, and at the edges.
fn duration() -> impl Strategy<Value = Duration> {
    prop_oneof![
        4 => (0u64..200_000).prop_map(Duration::from_millis),
        1 => Just(Duration::ZERO),
        1 => Just(Duration::MAX),
        1 => (any::<u64>(), 0u32..1_000_000_000).prop_map(|(s, n)| Duration::new(s, n)),
    ]
}

/// Settings mostly valid, sometimes not, sometimes at the extremes.
fn settings() -> impl Strategy<Value = Settings> {
    let retries = prop_oneof![0u32..=6, 999u32..=1001, Just(u32::MAX)];
    let any = (retries, duration(), duration(), duration(), duration()).prop_map(
        |(max_retries, a, b, c, d)| Settings {
            max_retries,
            base_delay: a,
            max_delay: b,
            total_budget: c,
            request_reserve: d,
        },
    );
    let sorted = |s: Settings| Settings {
        max_retries: s.max_retries.min(1000),
        base_delay: s.base_delay.min(s.max_delay),
        max_delay: s.base_delay.max(s.max_delay),
        total_budget: s.total_budget.max(s.request_reserve),
        request_reserve: s.total_budget.min(s.request_reserve),
    };
    let any = any.prop_flat_map(move |s| prop_oneof![Just(s), Just(sorted(s))]);
    prop_oneof![1 => Just(Settings::default()), 3 => any]
}

fn roll() -> impl Strategy<Value = f64> {
    prop_oneof![
        6 => 0.0f64..1.0,
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
        1 => Just(-1.0),
        1 => Just(1.0),
    ]
}

/// A reading: the clock anywhere (so it may step back), the wall clock mostly in range.
fn reading() -> impl Strategy<Value = Reading> {
    let unix = prop_oneof![
        4 => Just(Duration::from_secs(1_700_000_000)),
        1 => (0u64..300_000_000_000).prop_map(Duration::from_secs),
        1 => Just(Duration::MAX),
    ];
    (duration(), unix, roll()).prop_map(|(now, unix, roll)| Reading { now, unix, roll })
}

/// Raw `Retry-After` values: delays, dates, garbage and bytes that are not UTF-8.
fn field() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        (0u64..100).prop_map(|n| alloc::format!("{n}").into_bytes()),
        any::<u64>().prop_map(|n| alloc::format!("{n}").into_bytes()),
        Just(b"Tue, 14 Nov 2023 22:13:25 GMT".to_vec()),
        Just(b"Sun, 06 Nov 1994 08:49:37 GMT".to_vec()),
        Just(b"soon".to_vec()),
        Just(b"\xff5".to_vec()),
        proptest::collection::vec(any::<u8>(), 0..6),
    ]
}

#[derive(Debug, Clone)]
enum Op {
    Attempt(Duration, Option<Duration>),
    Response(u16, Vec<Vec<u8>>, Reading),
    Error(Fault, Reading),
    TimedOut(bool, Duration, Reading),
    Refused,
}

fn op() -> impl Strategy<Value = Op> {
    let status = prop_oneof![
        Just(503u16),
        Just(429),
        Just(200),
        Just(404),
        Just(500),
        Just(99),
        any::<u16>()
    ];
    let fault = prop_oneof![Just(Fault::Sent), Just(Fault::Unsent), Just(Fault::Final)];
    prop_oneof![
        4 => (duration(), proptest::option::of(duration())).prop_map(|(n, p)| Op::Attempt(n, p)),
        4 => (status, proptest::collection::vec(field(), 0..4), reading())
            .prop_map(|(s, f, r)| Op::Response(s, f, r)),
        2 => (fault, reading()).prop_map(|(f, r)| Op::Error(f, r)),
        1 => (any::<bool>(), duration(), reading()).prop_map(|(b, d, r)| Op::TimedOut(b, d, r)),
        1 => Just(Op::Refused),
    ]
}

/// The two runs' budgets, of one kind: none, one each by `&mut`, or one each shared.
enum Budgets {
    None,
    Own(Budget, Budget),
    #[cfg(target_has_atomic = "64")]
    Shared(crate::SharedBudget, crate::SharedBudget),
}

impl Budgets {
    fn tellers(&mut self) -> (Teller<'_>, Teller<'_>) {
        match self {
            Self::None => (Teller::own(None), Teller::own(None)),
            Self::Own(a, b) => (Teller::own(Some(a)), Teller::own(Some(b))),
            #[cfg(target_has_atomic = "64")]
            Self::Shared(a, b) => (Teller::shared(Some(a)), Teller::shared(Some(b))),
        }
    }

    fn alike(&self) -> bool {
        match self {
            Self::None => true,
            Self::Own(a, b) => a == b,
            #[cfg(target_has_atomic = "64")]
            Self::Shared(a, b) => a.snapshot() == b.snapshot(),
        }
    }
}

/// One step on both runs: each answer as text, so that every kind of answer compares.
fn step(run: &mut Run, before: &mut Before, op: &Op, budgets: &mut Budgets) -> (Step, Step) {
    let (now, old) = budgets.tellers();
    match op {
        Op::Attempt(..) | Op::Refused => unreachable!("answered apart"),
        Op::Response(status, fields, reading) => {
            let fields = || fields.iter().map(Vec::as_slice);
            (
                run.respond(*status, fields(), *reading, now),
                before.respond(*status, fields(), *reading, old),
            )
        }
        Op::Error(fault, reading) => (
            run.fault(*fault, *reading, now),
            before.fault(*fault, *reading, old),
        ),
        Op::TimedOut(budget, limit, reading) => {
            let timeout = if *budget {
                Timeout::Budget(*limit)
            } else {
                Timeout::Attempt(*limit)
            };
            (
                run.expired(timeout, *reading, now),
                before.expired(timeout, *reading, old),
            )
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4_000))]

    #[test]
    fn run_decides_exactly_as_before(
        settings in settings(),
        (method, body_replayable, replay_safe) in (
            prop_oneof![Just("GET"), Just("POST"), Just("PATCH"), Just("get"), Just(""), Just("G T")],
            prop_oneof![4 => Just(true), 1 => Just(false)],
            any::<bool>(),
        ),
        start in duration(),
        kind in 0u8..3,
        (tokens, ratio) in (1u32..12, 0.05f64..1.5),
        ops in proptest::collection::vec(op(), 1..24),
        probe in duration(),
    ) {
        let call = Call { method, body_replayable, replay_safe };
        let mut run = Run::new(settings, &call, start);
        let mut before = Before::new(settings, &call, start);
        let mut budgets = match kind {
            0 => Budgets::None,
            #[cfg(target_has_atomic = "64")]
            1 => Budgets::Shared(
                crate::SharedBudget::new(tokens, ratio),
                crate::SharedBudget::new(tokens, ratio),
            ),
            _ => Budgets::Own(Budget::new(tokens, ratio), Budget::new(tokens, ratio)),
        };
        for (i, op) in ops.iter().enumerate() {
            match op {
                Op::Attempt(now, per_attempt) => prop_assert_eq!(
                    run.attempt(*now, *per_attempt),
                    before.attempt(*now, *per_attempt),
                    "step {}: {:?}", i, op
                ),
                Op::Refused => prop_assert_eq!(run.refused(), before.refused()),
                _ => {
                    let (now, old) = step(&mut run, &mut before, op, &mut budgets);
                    prop_assert_eq!(now, old, "step {}: {:?}", i, op);
                }
            }
            prop_assert_eq!(run.retried(), before.retried(), "step {}", i);
            prop_assert_eq!(run.previous(), before.previous());
            prop_assert_eq!(run.remaining(probe), before.remaining(probe));
            prop_assert!(budgets.alike(), "step {}: the budgets differ", i);
        }
    }
}
