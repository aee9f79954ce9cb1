//! `Periods` answers as the core's `Limits` over `ironward::Period`s does, in Redis and on
//! the fallback: random quotas (0 to 10), periods, aligned or not, costs (0 to 12, and
//! `u32::MAX`), and times moving forward, standing still and stepping back. Each `take`'s
//! answer and the `next` after it, and each `peek`, are compared, every `next` counted from
//! the `now` passed (the core counts it from the latest reading its periods took, which
//! differs after a clock steps back). Then the hostile inputs, one test each.

use crate::common;

use std::time::Duration;

use ironward::{Limit, Limits, LimitsReason};
use ironward_redis::{Options, Periods, Source, Store, Term};
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence, TestRunner};
use redis::AsyncCommands;
use tokio::runtime::Runtime;

use common::{Server, unique};

/// Cases: each is up to 30 decisions on each of two stores.
const CASES: u32 = 64;

/// One step: how far the clock moves (microseconds, possibly back), whether to take or only
/// peek, and a cost per limit.
#[derive(Debug, Clone)]
struct Step {
    delta: i64,
    take: bool,
    costs: Vec<u32>,
}

fn term() -> impl Strategy<Value = Term> {
    // Round periods, which the round steps below land on exactly, and odd ones.
    let period = prop_oneof![
        Just(1u64),
        Just(1_000u64),
        Just(1_000_000u64),
        Just(60_000_000u64),
        1..2_000u64,
        1_000_000..5_000_000u64,
    ];
    (0..=10u32, period, any::<bool>()).prop_map(|(quota, micros, align)| Term {
        quota,
        period: Duration::from_micros(micros),
        align,
    })
}

fn cost() -> impl Strategy<Value = u32> {
    prop_oneof![8 => 0..=12u32, 1 => Just(u32::MAX)]
}

fn delta() -> impl Strategy<Value = i64> {
    prop_oneof![
        3 => Just(0),
        // To a period's end exactly, or a step short of it.
        2 => prop::sample::select(vec![1i64, 999, 1_000, 999_999, 1_000_000, 60_000_000]),
        4 => 0..2_000i64,
        4 => 0..3_000_000i64,
        1 => 0..100_000_000i64,
        // A clock that steps back.
        2 => -3_000_000..0i64,
    ]
}

fn case() -> impl Strategy<Value = (Vec<Term>, u64, Vec<Step>)> {
    let start = prop_oneof![
        Just(0u64),
        0..10_000_000u64,
        1_700_000_000_000_000..1_800_000_000_000_000u64
    ];
    (prop::collection::vec(term(), 1..=3), start).prop_flat_map(|(terms, start)| {
        let n = terms.len();
        let step = (
            delta(),
            prop::bool::weighted(0.75),
            prop::collection::vec(cost(), n),
        )
            .prop_map(|(delta, take, costs)| Step { delta, take, costs });
        (Just(terms), Just(start), prop::collection::vec(step, 1..30))
    })
}

/// The core's limiters for `terms`.
fn core_periods<const N: usize>(terms: &[Term]) -> [ironward::Period; N] {
    std::array::from_fn(|i| {
        let term = terms[i];
        if term.align {
            ironward::Period::aligned(term.quota, term.period)
        } else {
            ironward::Period::new(term.quota, term.period)
        }
    })
}

/// The core's `Limits` over `periods` at `costs`.
fn limits<'a, const N: usize>(
    periods: &'a mut [ironward::Period; N],
    costs: &[u32],
) -> Limits<'a, N> {
    let mut i = 0;
    Limits(periods.each_mut().map(|period| {
        i += 1;
        Limit::Period(period, costs[i - 1])
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
    terms: &[Term],
    start: u64,
    steps: &[Step],
) -> Result<(), TestCaseError> {
    let redis = Periods::new(store, &unique("periods"), terms);
    let mut memory = core_periods::<N>(terms);
    let (mut t, mut latest) = (start, Duration::ZERO);
    for (i, step) in steps.iter().enumerate() {
        t = t.saturating_add_signed(step.delta);
        let now = Duration::from_micros(t);
        if step.take {
            let answer = redis.take("k", now, &step.costs).await.unwrap();
            prop_assert_eq!(answer.source, source);
            let expected = limits(&mut memory, &step.costs).check(now);
            if expected.is_ok() {
                latest = latest.max(now);
            }
            let expected = shifted(expected, latest, now);
            prop_assert_eq!(answer.value, expected, "take {} at {}", i, t);
            let after = limits(&mut memory, &step.costs).peek(now);
            let after = shifted(after, latest, now)
                .err()
                .map_or(Duration::ZERO, |r| r.next);
            prop_assert_eq!(answer.next, after, "next after {}", i);
        } else {
            let peek = redis.peek("k", now, &step.costs).await.unwrap();
            let expected = shifted(limits(&mut memory, &step.costs).peek(now), latest, now);
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
fn periods_answer_as_the_core_limits_in_redis_and_on_the_fallback() {
    let server = Server::start();
    let runtime = runtime();
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
            "tests/proptest-regressions/periods.txt",
        ))),
        ..Config::default()
    });
    runner
        .run(&case(), |(terms, start, steps)| {
            runtime.block_on(async {
                for (store, source) in [(&redis, Source::Redis), (&local, Source::Local)] {
                    match terms.len() {
                        1 => run::<1>(store, source, &terms, start, &steps).await?,
                        2 => run::<2>(store, source, &terms, start, &steps).await?,
                        _ => run::<3>(store, source, &terms, start, &steps).await?,
                    }
                }
                Ok(())
            })
        })
        .unwrap();
}

const SECOND: Duration = Duration::from_secs(1);
/// A Unix reading, in whole seconds.
const NOW: Duration = Duration::from_secs(1_750_000_000);

/// The three doubles a `.p<i>` key packs: count, start and latest reading (µs).
async fn state(server: &Server, key: String) -> Option<[f64; 3]> {
    let mut conn = server.conn().await;
    let bytes: Option<Vec<u8>> = conn.get(key).await.unwrap();
    let bytes = bytes?;
    assert_eq!(bytes.len(), 24);
    let mut out = [0.0; 3];
    for (out, bytes) in out.iter_mut().zip(bytes.chunks_exact(8)) {
        *out = f64::from_le_bytes(bytes.try_into().unwrap());
    }
    Some(out)
}

#[tokio::test]
async fn a_refusal_writes_nothing_and_an_admission_writes_every_key_with_one_ttl() {
    let server = Server::start();
    let store = server.store(common::PATIENT).await;
    let name = unique("keys");
    let limits = Periods::new(
        &store,
        &name,
        &[
            Term::new(3, 60 * SECOND),
            Term::aligned(100, 86_400 * SECOND),
        ],
    );
    let key = |i: usize| format!("{{{name}:k}}.p{i}");

    // Refused by the daily tokens before anything was written: no key at all.
    let refused = limits.take("k", NOW, &[1, 101]).await.unwrap();
    assert_eq!(
        refused.value,
        Err(LimitsReason {
            index: 1,
            next: Duration::MAX
        })
    );
    assert_eq!(refused.source, Source::Redis);
    assert_eq!(state(&server, key(0)).await, None);
    assert_eq!(state(&server, key(1)).await, None);

    let answer = limits.take("k", NOW, &[1, 60]).await.unwrap();
    assert_eq!(
        (answer.value, answer.next),
        (
            Ok(()),
            86_400 * SECOND - Duration::from_secs(1_750_000_000 % 86_400)
        )
    );
    let micros = NOW.as_micros() as f64;
    let day = (1_750_000_000 - 1_750_000_000 % 86_400) as f64 * 1e6;
    assert_eq!(state(&server, key(0)).await, Some([1.0, micros, micros]));
    assert_eq!(state(&server, key(1)).await, Some([60.0, day, micros]));
    // One TTL for both: twice the longest period, two days.
    let mut conn = server.conn().await;
    for i in 0..2 {
        let ttl: i64 = conn.pttl(key(i)).await.unwrap();
        assert!(
            (172_000_000..=172_800_000).contains(&ttl),
            "ttl of p{i}: {ttl}"
        );
    }

    // 41 more tokens pass no day that has counted 60; the request log is not charged.
    let refused = limits.take("k", NOW + SECOND, &[1, 41]).await.unwrap();
    assert!(!refused.admitted());
    assert_eq!(refused.value.unwrap_err().index, 1);
    assert_eq!(state(&server, key(0)).await, Some([1.0, micros, micros]));
    assert_eq!(state(&server, key(1)).await, Some([60.0, day, micros]));
}

#[tokio::test]
async fn costs_of_the_wrong_length_are_refused_as_never_and_write_nothing() {
    let server = Server::start();
    let store = server.store(common::PATIENT).await;
    let name = unique("length");
    let limits = Periods::new(&store, &name, &[Term::new(3, SECOND), Term::new(3, SECOND)]);
    let never = |index| {
        Err(LimitsReason {
            index,
            next: Duration::MAX,
        })
    };
    let short = limits.take("k", NOW, &[1]).await.unwrap();
    assert_eq!(
        (short.value, short.next, short.source),
        (never(1), Duration::MAX, Source::Redis)
    );
    assert_eq!(limits.take("k", NOW, &[]).await.unwrap().value, never(0));
    assert_eq!(
        limits.take("k", NOW, &[1, 1, 1]).await.unwrap().value,
        never(2)
    );
    assert_eq!(limits.peek("k", NOW, &[1, 1, 1]).await.unwrap(), never(2));
    assert_eq!(state(&server, format!("{{{name}:k}}.p0")).await, None);
    // The right length passes.
    assert_eq!(limits.take("k", NOW, &[1, 1]).await.unwrap().value, Ok(()));
}

#[tokio::test]
async fn no_limits_admit_everything() {
    let server = Server::start();
    let store = server.store(common::PATIENT).await;
    let limits = Periods::new(&store, &unique("none"), &[]);
    let answer = limits.take("k", NOW, &[]).await.unwrap();
    assert_eq!((answer.value, answer.next), (Ok(()), Duration::ZERO));
    assert_eq!(limits.peek("k", NOW, &[]).await.unwrap(), Ok(()));
    // Costs where there are no limits: refused as never, as any wrong length.
    let answer = limits.take("k", NOW, &[1]).await.unwrap();
    assert_eq!(
        answer.value,
        Err(LimitsReason {
            index: 0,
            next: Duration::MAX
        })
    );
}

#[tokio::test]
async fn costs_of_zero_pass_and_costs_past_a_quota_never_do() {
    let server = Server::start();
    let store = server.store(common::PATIENT).await;
    let limits = Periods::new(
        &store,
        &unique("costs"),
        &[Term::new(0, 10 * SECOND), Term::new(5, 10 * SECOND)],
    );
    // A quota of 0 admits a cost of 0, and nothing else.
    let zero = limits.take("k", NOW, &[0, 0]).await.unwrap();
    assert_eq!((zero.value, zero.next), (Ok(()), Duration::ZERO));
    let never = Err(LimitsReason {
        index: 0,
        next: Duration::MAX,
    });
    assert_eq!(limits.take("k", NOW, &[1, 1]).await.unwrap().value, never);
    let max = limits.take("k", NOW, &[0, u32::MAX]).await.unwrap();
    assert_eq!(
        (max.value, max.next),
        (
            Err(LimitsReason {
                index: 1,
                next: Duration::MAX
            }),
            Duration::MAX
        )
    );
    // Five pass at once; the sixth waits for the period opened by the cost of 0.
    assert_eq!(
        limits.take("k", NOW + SECOND, &[0, 5]).await.unwrap().value,
        Ok(())
    );
    let full = limits.take("k", NOW + SECOND, &[0, 1]).await.unwrap();
    assert_eq!(
        full.value,
        Err(LimitsReason {
            index: 1,
            next: 9 * SECOND
        })
    );
}

#[tokio::test]
async fn a_clock_stepping_back_frees_nothing_and_waits_on_its_own_clock() {
    let server = Server::start();
    let store = server.store(common::PATIENT).await;
    let limits = Periods::new(
        &store,
        &unique("back"),
        &[Term::new(1, 10 * SECOND), Term::new(10, 60 * SECOND)],
    );
    assert_eq!(
        limits
            .take("k", NOW + 5 * SECOND, &[1, 1])
            .await
            .unwrap()
            .value,
        Ok(())
    );
    // Ten seconds back: the period opened at NOW + 5 s still counts, and ends 15 s from NOW - 5 s.
    let back = limits.take("k", NOW - 5 * SECOND, &[1, 1]).await.unwrap();
    assert_eq!(
        back.value,
        Err(LimitsReason {
            index: 0,
            next: 20 * SECOND
        })
    );
    assert_eq!(
        limits.peek("k", NOW - 5 * SECOND, &[0, 9]).await.unwrap(),
        Ok(())
    );
}

#[tokio::test]
async fn a_share_below_one_unit_refuses_on_the_fallback() {
    let options = Options {
        start_local: true,
        share: 0.5,
        ..Options::default()
    };
    let store = Store::connect("redis+unix:///nonexistent/redis.sock", options)
        .await
        .unwrap();
    // Half of 10 is 5; half of 1 is no unit.
    let limits = Periods::new(
        &store,
        "share",
        &[Term::new(10, SECOND), Term::new(1, SECOND)],
    );
    let refused = limits.take("k", NOW, &[1, 0]).await.unwrap();
    assert_eq!(
        refused.value,
        Err(LimitsReason {
            index: 1,
            next: store.options().probe
        })
    );
    assert_eq!(refused.source, Source::Local);
    let half = Periods::new(&store, "half", &[Term::new(10, SECOND)]);
    let mut passed = 0;
    for _ in 0..10 {
        if half.take("k", NOW, &[1]).await.unwrap().admitted() {
            passed += 1;
        }
    }
    assert_eq!(passed, 5);
}

#[tokio::test]
async fn with_redis_gone_the_fallback_holds_each_limit_to_its_share() {
    let mut server = Server::start();
    let store = server
        .store(Options {
            share: 0.5,
            ..common::PATIENT
        })
        .await;
    let limits = Periods::new(
        &store,
        &unique("gone"),
        &[Term::new(10, 60 * SECOND), Term::new(100, 60 * SECOND)],
    );
    assert_eq!(
        limits.take("k", NOW, &[1, 1]).await.unwrap().source,
        Source::Redis
    );
    server.kill();
    // Shares of 5 requests and 50 tokens a minute, kept apart from what Redis counted: the
    // requests run out first, the tokens charged only with them.
    let (mut requests, mut tokens) = (0, 0);
    for i in 0..20 {
        let answer = limits.take("k", NOW + i * SECOND, &[1, 2]).await.unwrap();
        assert_eq!(answer.source, Source::Local);
        if answer.admitted() {
            (requests, tokens) = (requests + 1, tokens + 2);
        }
    }
    assert_eq!((requests, tokens), (5, 10));
    let refused = limits.take("k", NOW + 20 * SECOND, &[1, 2]).await.unwrap();
    assert_eq!(
        refused.value,
        Err(LimitsReason {
            index: 0,
            next: 40 * SECOND
        })
    );
    // On another key 50 tokens spend the tokens' share at once, and the tokens refuse.
    let other = limits.take("j", NOW, &[1, 50]).await.unwrap();
    assert_eq!(other.value, Ok(()));
    let over = limits.take("j", NOW, &[1, 1]).await.unwrap();
    assert_eq!(
        (over.value, over.source),
        (
            Err(LimitsReason {
                index: 1,
                next: 60 * SECOND
            }),
            Source::Local
        )
    );
    assert_eq!(limits.peek("j", NOW, &[4, 0]).await.unwrap(), Ok(()));
}

#[tokio::test]
async fn with_redis_time_the_script_decides_at_redis_readings() {
    let server = Server::start();
    let store = server
        .store(Options {
            time: ironward_redis::Time::Server,
            ..common::PATIENT
        })
        .await;
    let name = unique("server-time");
    let limits = Periods::new(&store, &name, &[Term::new(1, 3_600 * SECOND)]);
    // The `now` passed (zero) is the fallback's alone.
    assert_eq!(
        limits.take("k", Duration::ZERO, &[1]).await.unwrap().value,
        Ok(())
    );
    let wall = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_micros() as f64;
    let [count, start, latest] = state(&server, format!("{{{name}:k}}.p0")).await.unwrap();
    assert_eq!((count, start), (1.0, latest));
    assert!(
        (latest - wall).abs() < 60e6,
        "{latest} read by Redis, {wall} here"
    );
    // The hour opened at Redis's reading: a refusal waits for most of it.
    let refused = limits.take("k", Duration::ZERO, &[1]).await.unwrap();
    let next = refused.value.unwrap_err().next;
    assert!(next > 3_500 * SECOND && next <= 3_600 * SECOND, "{next:?}");
}
