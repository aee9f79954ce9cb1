//! The limiters on Valkey as on Redis: each check below is written once, over a
//! [`Flavor`], and run twice, as `<check>::on_redis` against `redis-server` and as
//! `<check>::on_valkey` against the `valkey-server` that `IRONWARD_VALKEY_SERVER` names
//! (`scripts/test` installs it; without the variable the Valkey half fails, saying how to
//! provide it). Valkey is the Linux Foundation's fork of Redis 7.2; its Lua, its `struct` library,
//! its error codes and its `CONFIG` are Redis's, which these checks hold it to.
//!
//! Here, every limiter answers exactly as its in-memory twin in the core, for random
//! sequences of calls on one key at random times (forwards, standing still, backwards, near
//! the end of the clock), every `next` counted from the `now` passed (see the crate docs,
//! "Equivalence"):
//!
//! - a [`Period`]'s `take`, `take_n`, `next`, `next_n`, `reserve` and `settle`, as
//!   `ironward::Period`'s;
//! - a [`Sliding`]'s `take`, `take_n`, `next` and `next_n`, as `ironward::Sliding`'s;
//! - a [`Bucket`]'s `take` and `next`, as `ironward::Bucket`'s, to the bit (through `next`,
//!   which depends on every bit of its tokens);
//! - a [`Periods`]' `take` and `peek`, as `ironward::Limits` over core periods.
//!
//! `tests/valkey_faults.rs` has the server's faults and answers, and `tests/cluster.rs`
//! runs its cluster on both.

use crate::common;

use std::time::Duration;

use ironward::{Limit, Limits, LimitsReason, Usage};
use ironward_redis::{Bucket, Period, Periods, Reservation, Sliding, Source, Store, Term};
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence, TestRunner};
use tokio::runtime::Runtime;

use common::{Flavor, Server, unique};

/// The largest time the scripts carry exactly, in microseconds.
const END: u64 = 1 << 53;

/// Cases per limiter and flavor, each up to 30 calls: together with the other files'
/// properties on Redis, enough to meet each script's branches on each server.
const CASES: u32 = 64;

crate::on_both!(a_period_answers_as_the_core, period);
crate::on_both!(a_sliding_log_answers_as_the_core, sliding);
crate::on_both!(a_bucket_answers_as_the_core_to_the_bit, bucket);
crate::on_both!(periods_answer_as_the_core_limits, periods);

/// A server of `flavor`, a runtime, and a store on it that sends every call to the script
/// (no memory of refusals), so that each answer is the server's.
fn harness(flavor: Flavor) -> (Server, Runtime, Store) {
    let server = Server::of(flavor);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let store = runtime.block_on(server.store(common::EVERY_CALL));
    (server, runtime, store)
}

/// A runner of [`CASES`] cases (`PROPTEST_CASES` asks for more), its regressions in
/// `tests/proptest-regressions/valkey-<limiter>.txt`, replayed on both flavors.
fn runner(regressions: &'static str) -> TestRunner {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|cases| cases.parse().ok())
        .unwrap_or(CASES);
    TestRunner::new(Config {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(regressions))),
        ..Config::default()
    })
}

/// The core's `wait`, counted from `latest` (the latest reading its key took), counted
/// from `now` instead, as the limiters here count it.
fn from_now(wait: Duration, latest: Duration, now: Duration) -> Duration {
    if wait.is_zero() || wait == Duration::MAX {
        return wait;
    }
    wait.saturating_add(latest.saturating_sub(now))
}

fn start() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0u64),
        0..10_000_000u64,
        // A Unix clock in microseconds, as a fleet passes it.
        1_700_000_000_000_000..1_800_000_000_000_000u64,
        // The end of the exact range.
        (END - 10_000_000)..=END,
    ]
}

/// How far the clock moves before a call, in microseconds.
fn delta() -> impl Strategy<Value = i64> {
    prop_oneof![
        3 => Just(0i64),
        4 => 0..2_000i64,
        4 => 0..3_000_000i64,
        1 => 0..100_000_000_000i64,
        // To the end of the clock.
        1 => Just(END as i64),
        // A clock that steps back.
        2 => -3_000_000..0i64,
    ]
}

/// A clock reading `delta` from `t`, within `[0, END]`.
fn moved(t: u64, delta: i64) -> u64 {
    t.saturating_add_signed(delta).min(END)
}

fn quota() -> impl Strategy<Value = u32> {
    prop_oneof![1 => Just(0u32), 6 => 1..8u32, 1 => Just(u32::MAX)]
}

fn span() -> impl Strategy<Value = Duration> {
    prop_oneof![Just(1u64), 1..2_000u64, 1..10_000_000u64, Just(END)]
        .prop_map(Duration::from_micros)
}

/// A cost in units for the cost forms, `None` for `take` and `next`: small, 0, and past
/// any quota.
fn units() -> impl Strategy<Value = Option<u32>> {
    prop_oneof![
        2 => Just(None),
        2 => Just(Some(1u32)),
        1 => Just(Some(0)),
        3 => (2..6u32).prop_map(Some),
        1 => Just(Some(u32::MAX)),
    ]
}

/// One call on a period's key.
#[derive(Debug, Clone)]
enum Call {
    /// `take`, or `take_n` of this cost.
    Take(Option<u32>),
    /// `next`, or `next_n` of this cost.
    Next(Option<u32>),
    /// `reserve` of an estimate, settled within this many microseconds.
    Reserve(u32, u64),
    /// `settle` of the reservation this many back among those open, at this actual cost.
    Settle(usize, u32),
}

fn call() -> impl Strategy<Value = Call> {
    prop_oneof![
        4 => units().prop_map(Call::Take),
        2 => units().prop_map(Call::Next),
        2 => (0..7u32, 0..4_000_000u64).prop_map(|(estimate, us)| Call::Reserve(estimate, us)),
        2 => (0..4usize, 0..10u32).prop_map(|(back, actual)| Call::Settle(back, actual)),
    ]
}

fn period(flavor: Flavor) {
    let (_server, runtime, store) = harness(flavor);
    let calls = prop::collection::vec((delta(), call()), 1..30);
    let strategy = (quota(), span(), any::<bool>(), start(), calls);
    runner("tests/proptest-regressions/valkey-period.txt")
        .run(&strategy, |(quota, span, align, start, calls)| {
            let name = unique("period");
            let (redis, mut core) = if align {
                let core = ironward::Period::aligned(quota, span);
                (Period::aligned(&store, &name, quota, span), core)
            } else {
                (
                    Period::new(&store, &name, quota, span),
                    ironward::Period::new(quota, span),
                )
            };
            let (mut t, mut latest) = (start, Duration::ZERO);
            let mut open: Vec<(Reservation, ironward::Reservation)> = Vec::new();
            runtime.block_on(async {
                for (i, (delta, call)) in calls.into_iter().enumerate() {
                    t = moved(t, delta);
                    let now = Duration::from_micros(t);
                    match call {
                        Call::Take(units) => {
                            latest = latest.max(now);
                            let cost = units.unwrap_or(1);
                            let answer = match units {
                                Some(n) => redis.take_n("k", now, n).await.unwrap(),
                                None => redis.take("k", now).await.unwrap(),
                            };
                            prop_assert_eq!(answer.source, Source::Redis);
                            let expected: Usage = core.take_n(now, cost);
                            prop_assert_eq!(answer.value, expected, "take {} at {}", i, t);
                            // `next` is when the open period ends, `next_n` when the cost
                            // fits: they differ while it does.
                            let wait = match units {
                                Some(n) => core.next_n(now, n),
                                None => core.next(now),
                            };
                            let wait = from_now(wait, latest, now);
                            prop_assert_eq!(answer.next, wait, "next after {}", i);
                        }
                        Call::Next(units) => {
                            let (next, wait) = match units {
                                Some(n) => (redis.next_n("k", now, n).await, core.next_n(now, n)),
                                None => (redis.next("k", now).await, core.next(now)),
                            };
                            let wait = from_now(wait, latest, now);
                            prop_assert_eq!(next.unwrap(), wait, "next {} at {}", i, t);
                        }
                        Call::Reserve(estimate, us) => {
                            latest = latest.max(now);
                            let timeout = Duration::from_micros(us);
                            let answer = redis.reserve("k", now, estimate, timeout).await.unwrap();
                            prop_assert_eq!(answer.source, Source::Redis);
                            let expected = core.reserve(now, estimate, timeout);
                            let admitted = (answer.value.is_some(), expected.is_ok());
                            prop_assert_eq!(admitted.0, admitted.1, "reserve {} at {}", i, t);
                            if let (Some(ours), Ok(theirs)) = (answer.value, expected) {
                                open.push((ours, theirs));
                            }
                        }
                        Call::Settle(back, actual) => {
                            if open.is_empty() {
                                continue;
                            }
                            let (ours, theirs) =
                                open.remove(open.len() - 1 - back.min(open.len() - 1));
                            // Past its deadline a settle changes nothing, not even the clock.
                            if latest.max(now) <= theirs.deadline() {
                                latest = latest.max(now);
                            }
                            redis.settle(ours, actual, now).await.unwrap();
                            core.settle(theirs, actual, now);
                            // What the settle left: when a request of one could pass.
                            let next = redis.next("k", now).await.unwrap();
                            let wait = from_now(core.next(now), latest, now);
                            prop_assert_eq!(next, wait, "next after settle {}", i);
                        }
                    }
                }
                Ok(())
            })
        })
        .unwrap();
}

fn sliding(flavor: Flavor) {
    let (_server, runtime, store) = harness(flavor);
    let calls = prop::collection::vec((delta(), prop::bool::weighted(0.75), units()), 1..30);
    let strategy = (quota(), span(), start(), calls);
    runner("tests/proptest-regressions/valkey-sliding.txt")
        .run(&strategy, |(quota, window, start, calls)| {
            let redis = Sliding::new(&store, &unique("sliding"), quota, window);
            let mut core = ironward::Sliding::new(quota, window);
            let (mut t, mut latest) = (start, Duration::ZERO);
            runtime.block_on(async {
                for (i, (delta, take, units)) in calls.into_iter().enumerate() {
                    t = moved(t, delta);
                    let now = Duration::from_micros(t);
                    let cost = units.unwrap_or(1);
                    if take {
                        latest = latest.max(now);
                        let answer = match units {
                            Some(n) => redis.take_n("k", now, n).await.unwrap(),
                            None => redis.take("k", now).await.unwrap(),
                        };
                        prop_assert_eq!(answer.source, Source::Redis);
                        let expected = core.take_n(now, cost);
                        prop_assert_eq!(answer.value, expected, "take {} at {} of {}", i, t, cost);
                        let wait = from_now(core.next_n(now, cost), latest, now);
                        prop_assert_eq!(answer.next, wait, "next after {}", i);
                    } else {
                        let next = match units {
                            Some(n) => redis.next_n("k", now, n).await.unwrap(),
                            None => redis.next("k", now).await.unwrap(),
                        };
                        let wait = from_now(core.next_n(now, cost), latest, now);
                        prop_assert_eq!(next, wait, "next {} at {} for {}", i, t, cost);
                    }
                }
                Ok(())
            })
        })
        .unwrap();
}

fn rate() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(0.0),
        Just(0.3),
        Just(3.0),
        Just(123.456),
        Just(1e9 / 3.0),
        Just(1e-300),
        Just(f64::MAX),
        Just(f64::NAN),
        Just(-1.0),
        0.0..1e6f64,
    ]
}

fn burst() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(0.5),
        Just(1.0),
        Just(3.7),
        Just(f64::NAN),
        1.0..10.0f64
    ]
}

/// A bucket's cost: whole, fractional, 0, and the hostile ones the core refuses.
fn cost() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => Just(1.0),
        1 => Just(0.0),
        1 => Just(0.25),
        1 => Just(2.0),
        1 => Just(7.0),
        1 => Just(-1.0),
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
    ]
}

fn bucket(flavor: Flavor) {
    let (_server, runtime, store) = harness(flavor);
    let calls = prop::collection::vec((delta(), prop::bool::weighted(0.75), cost()), 1..30);
    let strategy = (rate(), burst(), start(), calls);
    runner("tests/proptest-regressions/valkey-bucket.txt")
        .run(&strategy, |(rate, burst, start, calls)| {
            let redis = Bucket::new(&store, &unique("bucket"), rate, burst);
            // A key's bucket is made, full, at its first take.
            let mut core: Option<ironward::Bucket> = None;
            let (mut t, mut latest) = (start, Duration::ZERO);
            runtime.block_on(async {
                for (i, (delta, take, n)) in calls.into_iter().enumerate() {
                    t = moved(t, delta);
                    let now = Duration::from_micros(t);
                    if take {
                        latest = latest.max(now);
                        let core =
                            core.get_or_insert_with(|| ironward::Bucket::new(rate, burst, now));
                        let answer = redis.take("k", now, n).await.unwrap();
                        prop_assert_eq!(answer.source, Source::Redis);
                        prop_assert_eq!(answer.value, core.take(now, n), "take {} at {}", i, t);
                        let wait = from_now(core.next(now, n), latest, now);
                        prop_assert_eq!(answer.next, wait, "next after {}", i);
                    } else {
                        let wait = match &core {
                            Some(core) => from_now(core.next(now, n), latest, now),
                            None => ironward::Bucket::new(rate, burst, now).next(now, n),
                        };
                        let next = redis.next("k", now, n).await.unwrap();
                        prop_assert_eq!(next, wait, "next {} at {} for {}", i, t, n);
                    }
                }
                Ok(())
            })
        })
        .unwrap();
}

fn term() -> impl Strategy<Value = Term> {
    let micros = prop_oneof![
        Just(1u64),
        Just(1_000_000),
        1..2_000u64,
        1_000_000..5_000_000u64
    ];
    (0..=10u32, micros, any::<bool>()).prop_map(|(quota, micros, align)| Term {
        quota,
        period: Duration::from_micros(micros),
        align,
    })
}

/// The core's periods for `terms`.
fn core_periods<const N: usize>(terms: &[Term]) -> [ironward::Period; N] {
    std::array::from_fn(|i| match terms[i] {
        Term {
            quota,
            period,
            align: true,
        } => ironward::Period::aligned(quota, period),
        Term { quota, period, .. } => ironward::Period::new(quota, period),
    })
}

/// The core's `Limits` over `periods`, each at its cost.
fn limits<'a, const N: usize>(
    periods: &'a mut [ironward::Period; N],
    costs: &[u32],
) -> Limits<'a, N> {
    let mut costs = costs.iter().copied();
    Limits(
        periods
            .each_mut()
            .map(|period| Limit::Period(period, costs.next().unwrap_or(0))),
    )
}

/// A refusal's wait counted from `now`, as [`from_now`] counts a `next`.
fn shifted(
    decision: Result<(), LimitsReason>,
    latest: Duration,
    now: Duration,
) -> Result<(), LimitsReason> {
    decision.map_err(|reason| LimitsReason {
        next: from_now(reason.next, latest, now),
        ..reason
    })
}

/// One case of [`periods`] on `N` terms: each `take` and its `next`, and each `peek`.
async fn periods_case<const N: usize>(
    store: &Store,
    terms: &[Term],
    start: u64,
    calls: &[(i64, bool, Vec<u32>)],
) -> Result<(), TestCaseError> {
    let redis = Periods::new(store, &unique("periods"), terms);
    let mut core = core_periods::<N>(terms);
    let (mut t, mut latest) = (start, Duration::ZERO);
    for (i, (delta, take, costs)) in calls.iter().enumerate() {
        t = moved(t, *delta);
        let now = Duration::from_micros(t);
        if *take {
            let answer = redis.take("k", now, costs).await.unwrap();
            prop_assert_eq!(answer.source, Source::Redis);
            let expected = limits(&mut core, costs).check(now);
            // An admission moves every period's clock; a refusal none.
            if expected.is_ok() {
                latest = latest.max(now);
            }
            prop_assert_eq!(
                answer.value,
                shifted(expected, latest, now),
                "take {} at {}",
                i,
                t
            );
            let after = shifted(limits(&mut core, costs).peek(now), latest, now);
            let after = after.err().map_or(Duration::ZERO, |reason| reason.next);
            prop_assert_eq!(answer.next, after, "next after {}", i);
        } else {
            let peek = redis.peek("k", now, costs).await.unwrap();
            let expected = shifted(limits(&mut core, costs).peek(now), latest, now);
            prop_assert_eq!(peek, expected, "peek {} at {}", i, t);
        }
    }
    Ok(())
}

fn periods(flavor: Flavor) {
    let (_server, runtime, store) = harness(flavor);
    let strategy =
        (prop::collection::vec(term(), 1..=3), start()).prop_flat_map(|(terms, start)| {
            let costs = prop::collection::vec(
                prop_oneof![8 => 0..=12u32, 1 => Just(u32::MAX)],
                terms.len(),
            );
            let calls = prop::collection::vec((delta(), prop::bool::weighted(0.75), costs), 1..30);
            (Just(terms), Just(start), calls)
        });
    runner("tests/proptest-regressions/valkey-periods.txt")
        .run(&strategy, |(terms, start, calls)| {
            runtime.block_on(async {
                match terms.len() {
                    1 => periods_case::<1>(&store, &terms, start, &calls).await,
                    2 => periods_case::<2>(&store, &terms, start, &calls).await,
                    _ => periods_case::<3>(&store, &terms, start, &calls).await,
                }
            })
        })
        .unwrap();
}
