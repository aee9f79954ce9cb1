//! Each Redis limiter answers exactly what the in-memory `ironward` type answers, for random
//! sequences of takes and reads at random times (forwards, standing still, backwards, and
//! near the end of the clock), against a real `redis-server`.
//!
//! Times are whole microseconds and spans whole microseconds, where the crate promises the
//! core's answers exactly: `take`'s answer and the `next` after it, and `next` alone, each
//! `next` counted from the `now` passed (the core counts it from the latest reading seen,
//! which differs after a clock steps back). The bucket's tokens are compared through
//! `next`, which depends on every bit of them.
//! Each case is one key of its own; few cases, as each operation is a round trip.

use crate::common;

use std::time::Duration;

use ironward::Usage;
use ironward_redis::{Bucket, Period, Sliding, Source, Store};
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence, TestRunner};
use tokio::runtime::Runtime;

use common::{Server, unique};

/// The largest time the scripts carry exactly, in microseconds.
const END: u64 = 1 << 53;

/// Cases per limiter: each is up to 40 round trips.
const CASES: u32 = 96;

/// One step of a sequence: how far the clock moves (microseconds, possibly backwards), and
/// whether to take (with a cost, for a bucket) or only read `next`, and for a period or a
/// log whether through the cost forms (`take_n`, `next_n`, with `units`) or not.
#[derive(Debug, Clone)]
struct Step {
    delta: i64,
    take: bool,
    cost: f64,
    units: Option<u32>,
}

/// A clock reading after `delta` from `t`, kept within `[0, END]`.
fn moved(t: u64, delta: i64) -> u64 {
    t.saturating_add_signed(delta).min(END)
}

fn start() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0),
        0..10_000_000u64,
        // A Unix clock in microseconds, as a fleet passes it.
        1_700_000_000_000_000..1_800_000_000_000_000u64,
        // The end of the exact range.
        (END - 10_000_000)..=END,
    ]
}

fn delta() -> impl Strategy<Value = i64> {
    prop_oneof![
        3 => Just(0),
        4 => 0..2_000i64,
        4 => 0..3_000_000i64,
        1 => 0..100_000_000_000i64,
        // To the end of the clock: elapsed nanoseconds past 2^53, which round as doubles.
        1 => Just(END as i64),
        // A clock that steps back.
        2 => -3_000_000..0i64,
    ]
}

fn cost() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => Just(1.0),
        1 => Just(0.0),
        1 => Just(0.25),
        1 => Just(1.5),
        1 => Just(2.0),
        1 => Just(7.0),
        // Hostile costs, which the core refuses.
        1 => Just(-1.0),
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
    ]
}

/// A cost in units for the cost forms, or `None` for `take` and `next`: small costs
/// around a small quota, 0, and hostile ones (above any quota, the largest).
fn units() -> impl Strategy<Value = Option<u32>> {
    prop_oneof![
        2 => Just(None),
        2 => Just(Some(1)),
        1 => Just(Some(0)),
        3 => (2..6u32).prop_map(Some),
        1 => Just(Some(u32::MAX - 1)),
        1 => Just(Some(u32::MAX)),
    ]
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    prop::collection::vec(
        (delta(), prop::bool::weighted(0.75), cost(), units()).prop_map(
            |(delta, take, cost, units)| Step {
                delta,
                take,
                cost,
                units,
            },
        ),
        1..40,
    )
}

fn quota() -> impl Strategy<Value = u32> {
    prop_oneof![1 => Just(0u32), 6 => 1..8u32, 1 => Just(u32::MAX)]
}

fn span() -> impl Strategy<Value = Duration> {
    prop_oneof![
        Just(1u64),
        Just(7),
        1..2_000u64,
        1..10_000_000u64,
        Just(END),
    ]
    .prop_map(Duration::from_micros)
}

fn rate() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(0.0),
        Just(0.3),
        Just(1.0),
        Just(3.0),
        Just(7.0),
        Just(123.456),
        Just(1e9 / 3.0),
        Just(1e-3),
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
        Just(1.5),
        Just(2.0),
        Just(3.7),
        Just(f64::NAN),
        1.0..10.0f64,
    ]
}

/// A test runner with few cases (`PROPTEST_CASES` asks for more) and the regressions
/// file `regressions`.
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

/// A server, a runtime and a store on it, for one property: every call reaches the script
/// (no memory of refusals, which `tests/blocked.rs` checks), so that each is compared.
fn harness() -> (Server, Runtime, Store) {
    let server = Server::start();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let store = runtime.block_on(server.store(common::EVERY_CALL));
    (server, runtime, store)
}

/// The core's `next`, counted from `latest` (the latest reading its key has taken at, which
/// the core reads an earlier `now` as), counted from `now` as the Redis limiters count it:
/// a caller whose clock stepped back waits on its own clock.
fn from_now(wait: Duration, latest: Duration, now: Duration) -> Duration {
    if wait.is_zero() || wait == Duration::MAX {
        return wait;
    }
    wait.saturating_add(latest.saturating_sub(now))
}

#[test]
fn a_redis_period_answers_as_the_in_memory_period() {
    let (_server, runtime, store) = harness();
    let strategy = (quota(), span(), any::<bool>(), start(), steps());
    runner("tests/proptest-regressions/period.txt")
        .run(&strategy, |(quota, period, align, start, steps)| {
            let (redis, mut memory) = if align {
                (
                    Period::aligned(&store, &unique("period"), quota, period),
                    ironward::Period::aligned(quota, period),
                )
            } else {
                (
                    Period::new(&store, &unique("period"), quota, period),
                    ironward::Period::new(quota, period),
                )
            };
            let (mut t, mut latest) = (start, Duration::ZERO);
            runtime.block_on(async {
                for (i, step) in steps.iter().enumerate() {
                    t = moved(t, step.delta);
                    let now = Duration::from_micros(t);
                    match (step.take, step.units) {
                        (true, None) => {
                            latest = latest.max(now);
                            let answer = redis.take("k", now).await.unwrap();
                            prop_assert_eq!(answer.source, Source::Redis);
                            let expected: Usage = memory.take(now);
                            prop_assert_eq!(answer.value, expected, "take {} at {}", i, t);
                            let expected = from_now(memory.next(now), latest, now);
                            prop_assert_eq!(answer.next, expected, "next after {}", i);
                        }
                        (true, Some(n)) => {
                            latest = latest.max(now);
                            let answer = redis.take_n("k", now, n).await.unwrap();
                            prop_assert_eq!(answer.source, Source::Redis);
                            let expected: Usage = memory.take_n(now, n);
                            prop_assert_eq!(answer.value, expected, "take_n {} at {}", i, t);
                            let expected = from_now(memory.next_n(now, n), latest, now);
                            prop_assert_eq!(answer.next, expected, "next_n after {}", i);
                        }
                        (false, None) => {
                            let next = redis.next("k", now).await.unwrap();
                            let expected = from_now(memory.next(now), latest, now);
                            prop_assert_eq!(next, expected, "next {} at {}", i, t);
                        }
                        (false, Some(n)) => {
                            let next = redis.next_n("k", now, n).await.unwrap();
                            let expected = from_now(memory.next_n(now, n), latest, now);
                            prop_assert_eq!(next, expected, "next_n {} at {} for {}", i, t, n);
                        }
                    }
                }
                Ok(())
            })
        })
        .unwrap();
}

#[test]
fn a_redis_sliding_log_answers_as_the_in_memory_log() {
    let (_server, runtime, store) = harness();
    let strategy = (quota(), span(), start(), steps());
    runner("tests/proptest-regressions/sliding.txt")
        .run(&strategy, |(quota, window, start, steps)| {
            let redis = Sliding::new(&store, &unique("sliding"), quota, window);
            let mut memory = ironward::Sliding::new(quota, window);
            let (mut t, mut latest) = (start, Duration::ZERO);
            runtime.block_on(async {
                for (i, step) in steps.iter().enumerate() {
                    t = moved(t, step.delta);
                    let now = Duration::from_micros(t);
                    let n = step.units.unwrap_or(1);
                    if step.take {
                        latest = latest.max(now);
                        let answer = match step.units {
                            Some(n) => redis.take_n("k", now, n).await.unwrap(),
                            None => redis.take("k", now).await.unwrap(),
                        };
                        prop_assert_eq!(answer.source, Source::Redis);
                        let expected = memory.take_n(now, n);
                        prop_assert_eq!(answer.value, expected, "take {} at {} of {}", i, t, n);
                        let expected = from_now(memory.next_n(now, n), latest, now);
                        prop_assert_eq!(answer.next, expected, "next after {}", i);
                    } else {
                        let next = match step.units {
                            Some(n) => redis.next_n("k", now, n).await.unwrap(),
                            None => redis.next("k", now).await.unwrap(),
                        };
                        let expected = from_now(memory.next_n(now, n), latest, now);
                        prop_assert_eq!(next, expected, "next {} at {} for {}", i, t, n);
                    }
                }
                Ok(())
            })
        })
        .unwrap();
}

#[test]
fn a_redis_bucket_answers_as_the_in_memory_bucket_to_the_bit() {
    let (_server, runtime, store) = harness();
    let strategy = (rate(), burst(), start(), steps());
    runner("tests/proptest-regressions/bucket.txt")
        .run(&strategy, |(rate, burst, start, steps)| {
            let redis = Bucket::new(&store, &unique("bucket"), rate, burst);
            // A key's bucket is made, full, at its first take.
            let mut memory: Option<ironward::Bucket> = None;
            let (mut t, mut latest) = (start, Duration::ZERO);
            runtime.block_on(async {
                for (i, step) in steps.iter().enumerate() {
                    t = moved(t, step.delta);
                    let now = Duration::from_micros(t);
                    let n = step.cost;
                    if step.take {
                        latest = latest.max(now);
                        let bucket =
                            memory.get_or_insert_with(|| ironward::Bucket::new(rate, burst, now));
                        let answer = redis.take("k", now, n).await.unwrap();
                        prop_assert_eq!(answer.source, Source::Redis);
                        prop_assert_eq!(answer.value, bucket.take(now, n), "take {} at {}", i, t);
                        let expected = from_now(bucket.next(now, n), latest, now);
                        prop_assert_eq!(answer.next, expected, "next after {}", i);
                    } else {
                        let expected = match &memory {
                            Some(bucket) => from_now(bucket.next(now, n), latest, now),
                            None => ironward::Bucket::new(rate, burst, now).next(now, n),
                        };
                        let next = redis.next("k", now, n).await.unwrap();
                        prop_assert_eq!(next, expected, "next {} at {} for {}", i, t, n);
                    }
                }
                Ok(())
            })
        })
        .unwrap();
}

// The core's own worked case (`next_rounds_up_so_that_taking_then_succeeds`): at three
// tokens a second, one token takes 333 333 333.3 ns, so `next` is 333 333 334 ns, and the
// retry succeeds at `now + next` although that reading is not a whole microsecond.
#[test]
fn a_bucket_retry_after_next_succeeds() {
    let (_server, runtime, store) = harness();
    runtime.block_on(async {
        let bucket = Bucket::new(&store, "third", 3.0, 1.0);
        let now = Duration::from_secs(1_700_000_000);
        assert!(bucket.take("k", now, 1.0).await.unwrap().admitted());
        let refused = bucket.take("k", now, 1.0).await.unwrap();
        assert_eq!(refused.next, Duration::from_nanos(333_333_334));
        assert!(
            bucket
                .take("k", now + refused.next, 1.0)
                .await
                .unwrap()
                .admitted()
        );
    });
}
