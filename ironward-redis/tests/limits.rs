//! `Limits` answers as the core's `Limits` over buckets, sliding logs and periods does, in
//! Redis and on the fallback: random kinds (up to three limits, mixed), quotas (0 to 10),
//! rates, bursts, windows and periods, aligned or not, costs (0 to 12 units, a bucket's in
//! fractional tokens, `u32::MAX`, and a bucket's NaN, negative and infinite ones), and
//! times moving forward, standing still and stepping back. Each `take`'s answer and the
//! `next` after it, and each `peek`, are compared, every `next` counted from the `now`
//! passed (the core counts it from the latest reading its limiters took, which differs
//! after a clock steps back). What Redis keeps, the hash slot, contention and the hostile
//! inputs are in `tests/limits_edges.rs`.

use crate::common;

use std::time::Duration;

use ironward::{Limit as Core, LimitsReason};
use ironward_redis::{Limits, Options, Source, Store};
use ironward_tokio::Quota;
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence, TestRunner};
use tokio::runtime::Runtime;

use common::{Server, unique};

/// Cases: each is up to 30 decisions on each of two stores.
const CASES: u32 = 96;

/// One step: how far the clock moves (microseconds, possibly back), whether to take or only
/// peek, and a cost per limit.
#[derive(Debug, Clone)]
struct Step {
    delta: i64,
    take: bool,
    costs: Vec<f64>,
}

fn span() -> impl Strategy<Value = Duration> {
    // Round spans, which the round steps below land on exactly, and odd ones.
    prop_oneof![
        Just(1u64),
        Just(1_000u64),
        Just(1_000_000u64),
        Just(60_000_000u64),
        1..2_000u64,
        1_000_000..5_000_000u64,
    ]
    .prop_map(Duration::from_micros)
}

fn limit() -> impl Strategy<Value = Quota> {
    prop_oneof![
        (
            prop::sample::select(vec![0.0, 0.5, 1.0, 3.3, 1_000.0, f64::NAN]),
            prop::sample::select(vec![1.0, 2.5, 10.0, f64::INFINITY])
        )
            .prop_map(|(rate, burst)| Quota::bucket(rate, burst)),
        (0..=10u32, span()).prop_map(|(quota, window)| Quota::sliding(quota, window)),
        (0..=10u32, span(), any::<bool>()).prop_map(|(quota, period, align)| Quota::Period {
            quota,
            period,
            align
        }),
    ]
}

/// A cost for `limit`: whole units for a log or a period, fractional tokens for a bucket,
/// and now and then one no limit admits.
fn cost(limit: &Quota) -> BoxedStrategy<f64> {
    match limit {
        Quota::Bucket { .. } => prop_oneof![
            8 => (0..=12u32).prop_map(|n| f64::from(n) * 0.75),
            1 => prop::sample::select(vec![f64::from(u32::MAX), f64::NAN, -1.0, f64::INFINITY]),
        ]
        .boxed(),
        _ => prop_oneof![8 => 0..=12u32, 1 => Just(u32::MAX)]
            .prop_map(f64::from)
            .boxed(),
    }
}

fn delta() -> impl Strategy<Value = i64> {
    prop_oneof![
        3 => Just(0),
        // To a span's end exactly, or a step short of it.
        2 => prop::sample::select(vec![1i64, 999, 1_000, 999_999, 1_000_000, 60_000_000]),
        4 => 0..2_000i64,
        4 => 0..3_000_000i64,
        1 => 0..100_000_000i64,
        // A clock that steps back.
        2 => -3_000_000..0i64,
    ]
}

fn case() -> impl Strategy<Value = (Vec<Quota>, u64, Vec<Step>)> {
    let start = prop_oneof![
        Just(0u64),
        0..10_000_000u64,
        1_700_000_000_000_000..1_800_000_000_000_000u64
    ];
    (prop::collection::vec(limit(), 1..=3), start).prop_flat_map(|(limits, start)| {
        let costs: Vec<_> = limits.iter().map(cost).collect();
        let step = (delta(), prop::bool::weighted(0.75), costs)
            .prop_map(|(delta, take, costs)| Step { delta, take, costs });
        (
            Just(limits),
            Just(start),
            prop::collection::vec(step, 1..30),
        )
    })
}

/// A core limiter of the kind a `Quota` names.
enum Twin {
    Bucket(ironward::Bucket),
    Sliding(ironward::Sliding),
    Period(ironward::Period),
}

impl Twin {
    fn new(limit: &Quota) -> Self {
        match *limit {
            // Full, its clock at zero: a bucket in Redis is full until its first take.
            Quota::Bucket { rate, burst } => {
                Twin::Bucket(ironward::Bucket::new(rate, burst, Duration::ZERO))
            }
            Quota::Sliding { quota, window } => {
                Twin::Sliding(ironward::Sliding::new(quota, window))
            }
            Quota::Period {
                quota,
                period,
                align: false,
            } => Twin::Period(ironward::Period::new(quota, period)),
            Quota::Period { quota, period, .. } => {
                Twin::Period(ironward::Period::aligned(quota, period))
            }
        }
    }

    /// The core's `Limit` over this limiter at `cost` (a whole number of units but for a
    /// bucket, as the strategy draws them).
    fn limit(&mut self, cost: f64) -> Core<'_> {
        match self {
            Twin::Bucket(bucket) => Core::Bucket(bucket, cost),
            Twin::Sliding(log) => Core::Sliding(log, cost as u32),
            Twin::Period(period) => Core::Period(period, cost as u32),
        }
    }
}

/// The core's `Limits` over `twins` at `costs`.
fn core<'a, const N: usize>(twins: &'a mut [Twin], costs: &[f64]) -> ironward::Limits<'a, N> {
    let mut twins = twins.iter_mut();
    ironward::Limits(std::array::from_fn(|i| {
        twins.next().expect("one twin a limit").limit(costs[i])
    }))
}

/// The core's `next`, counted from `latest`, counted from `now` instead.
fn from_now(wait: Duration, latest: Duration, now: Duration) -> Duration {
    if wait.is_zero() || wait == Duration::MAX {
        return wait;
    }
    wait.saturating_add(latest.saturating_sub(now))
}

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

/// One case on `store`: every answer the core's.
async fn run<const N: usize>(
    store: &Store,
    source: Source,
    limits: &[Quota],
    start: u64,
    steps: &[Step],
) -> Result<(), TestCaseError> {
    let redis = Limits::new(store, &unique("limits"), limits);
    let mut twins: Vec<Twin> = redis.limits().iter().map(Twin::new).collect();
    let (mut t, mut latest) = (start, Duration::ZERO);
    for (i, step) in steps.iter().enumerate() {
        t = t.saturating_add_signed(step.delta);
        let now = Duration::from_micros(t);
        if step.take {
            let answer = redis.take("k", now, &step.costs).await.unwrap();
            prop_assert_eq!(answer.source, source);
            let expected = core::<N>(&mut twins, &step.costs).check(now);
            if expected.is_ok() {
                latest = latest.max(now);
            }
            let expected = shifted(expected, latest, now);
            prop_assert_eq!(answer.value, expected, "take {} at {}", i, t);
            let after = core::<N>(&mut twins, &step.costs).peek(now);
            let after = shifted(after, latest, now)
                .err()
                .map_or(Duration::ZERO, |r| r.next);
            prop_assert_eq!(answer.next, after, "next after {}", i);
        } else {
            let peek = redis.peek("k", now, &step.costs).await.unwrap();
            let expected = shifted(core::<N>(&mut twins, &step.costs).peek(now), latest, now);
            prop_assert_eq!(peek, expected, "peek {} at {}", i, t);
        }
    }
    Ok(())
}

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// A store on the fallback alone, with the whole quota: the core's limiters per key.
async fn local_store() -> Store {
    let options = Options {
        start_local: true,
        share: 1.0,
        ..Options::default()
    };
    Store::connect("redis+unix:///nonexistent/redis.sock", options)
        .await
        .unwrap()
}

#[test]
fn limits_answer_as_the_core_limits_in_redis_and_on_the_fallback() {
    let server = Server::start();
    let runtime = runtime();
    // Redis remembering refusals (the default), and the fallback.
    let (redis, local) = runtime.block_on(async {
        let redis = server.store(common::PATIENT).await;
        (redis, local_store().await)
    });
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|cases| cases.parse().ok())
        .unwrap_or(CASES);
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "tests/proptest-regressions/limits.txt",
        ))),
        ..Config::default()
    });
    runner
        .run(&case(), |(limits, start, steps)| {
            runtime.block_on(async {
                for (store, source) in [(&redis, Source::Redis), (&local, Source::Local)] {
                    match limits.len() {
                        1 => run::<1>(store, source, &limits, start, &steps).await?,
                        2 => run::<2>(store, source, &limits, start, &steps).await?,
                        _ => run::<3>(store, source, &limits, start, &steps).await?,
                    }
                }
                Ok(())
            })
        })
        .unwrap();
}
