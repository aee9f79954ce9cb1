//! Decisions that wait on one connection together go to Redis as one call of the batch
//! script, each decided as if sent alone, against a `redis-server` of the test's own:
//!
//! - many callers taking from one key at once admit exactly the quota, and Redis counts
//!   every take, in fewer calls than decisions;
//! - a key of another program's type inside a batch fails its own caller alone;
//! - `SCRIPT FLUSH` under concurrent load: the batch script is loaded again, nothing is
//!   lost, doubled or failed over;
//! - more callers at once than a batch holds (64) go in several batches;
//! - a lone call is a batch of one;
//! - a runtime shut down while a batch forms leaves no call queued for good.

use crate::common;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ironward::Usage;
use ironward_redis::{Bucket, Period, Sliding, Source, Store, StoreError};
use redis::AsyncCommands;

use common::{EVERY_CALL, Server, unique};

const NOW: Duration = Duration::from_secs(1_700_000_000);
const HOUR: Duration = Duration::from_secs(3600);

/// The most decisions one batch holds, as the crate docs state it.
const BOUND: usize = 64;

/// Redis's count of `EVALSHA` calls since the server started.
async fn evalsha_calls(conn: &mut redis::aio::MultiplexedConnection) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(conn)
        .await
        .unwrap();
    info.lines()
        .find_map(|line| line.strip_prefix("cmdstat_evalsha:calls="))
        .and_then(|rest| rest.split(',').next())
        .map_or(0, |calls| calls.parse().unwrap())
}

/// The count a period's key holds: the first of its three packed doubles.
async fn period_count(conn: &mut redis::aio::MultiplexedConnection, key: &str) -> f64 {
    let state: Vec<u8> = conn.get(key).await.unwrap();
    assert_eq!(state.len(), 24, "{key}");
    f64::from_le_bytes(state[..8].try_into().unwrap())
}

/// Runs `n` takes of one unit from `limit`, all at once: each a task of its own.
async fn at_once(limit: &Period, keys: impl Fn(usize) -> String, n: usize) -> Vec<Usage> {
    let tasks: Vec<_> = (0..n)
        .map(|i| {
            let (limit, key) = (limit.clone(), keys(i));
            tokio::spawn(async move { limit.take(key, NOW).await.unwrap() })
        })
        .collect();
    let mut answers = Vec::with_capacity(n);
    for task in tasks {
        let answer = task.await.unwrap();
        assert_eq!(answer.source, Source::Redis);
        answers.push(answer.value);
    }
    answers
}

// The core's answers in some serial order: 8 tasks × 50 takes racing on one key of quota
// 300 admit exactly 300 (one of them `Hit`), and Redis counts all 400 (go-zero's count of
// every event, refused ones too), as one caller sending them one by one would see.
#[tokio::test(flavor = "current_thread")]
async fn racing_callers_admit_exactly_the_quota_in_fewer_calls_than_decisions() {
    const QUOTA: u32 = 300;
    const TASKS: usize = 8;
    const EACH: usize = 50;
    let server = Server::start();
    let store = server.store(EVERY_CALL).await;
    let mut conn = server.conn().await;
    store.load().await.unwrap();
    let name = unique("race");
    let limit = Period::new(&store, &name, QUOTA, HOUR);
    let before = evalsha_calls(&mut conn).await;
    let tasks: Vec<_> = (0..TASKS)
        .map(|_| {
            let limit = limit.clone();
            tokio::spawn(async move {
                let mut answers = Vec::new();
                for _ in 0..EACH {
                    let answer = limit.take("k", NOW).await.unwrap();
                    assert_eq!(answer.source, Source::Redis);
                    answers.push(answer.value);
                }
                answers
            })
        })
        .collect();
    let mut answers = Vec::new();
    for task in tasks {
        answers.extend(task.await.unwrap());
    }
    let count = |value| answers.iter().filter(|&&v| v == value).count();
    assert_eq!(count(Usage::Under), QUOTA as usize - 1);
    assert_eq!(count(Usage::Hit), 1);
    assert_eq!(count(Usage::Over), TASKS * EACH - QUOTA as usize);
    let key = format!("{{{name}:k}}.period");
    assert_eq!(period_count(&mut conn, &key).await, (TASKS * EACH) as f64);

    let stats = store.stats();
    let calls = evalsha_calls(&mut conn).await - before;
    println!("{} decisions in {calls} calls ({stats:?})", TASKS * EACH);
    assert_eq!(stats.redis, (TASKS * EACH) as u64);
    assert_eq!(stats.batches, calls);
    assert!(calls < (TASKS * EACH) as u64, "{calls} calls");
    assert_eq!((stats.failovers, stats.key_errors), (0, 0));
}

// Another program's list under one caller's key, in a batch with nine clean callers: that
// caller is refused with `WRONGTYPE`, the nine are answered, all in one call, and the store
// stays on Redis.
#[tokio::test(flavor = "current_thread")]
async fn a_wrong_type_key_in_a_batch_fails_its_own_caller_alone() {
    let server = Server::start();
    let store = server.store(EVERY_CALL).await;
    let mut conn = server.conn().await;
    let name = unique("wrong");
    let () = conn
        .rpush(format!("{{{name}:bad}}.period"), "another program's")
        .await
        .unwrap();
    let limit = Period::new(&store, &name, 5, HOUR);
    let before = store.stats().batches;
    // Spawned one after another on this one thread, the ten are queued before the task
    // that sends them runs: one batch.
    let tasks: Vec<_> = (0..10)
        .map(|i| {
            let limit = limit.clone();
            let key = if i == 4 {
                "bad".to_owned()
            } else {
                format!("k{i}")
            };
            tokio::spawn(async move { limit.take(key, NOW).await })
        })
        .collect();
    let mut answers = Vec::new();
    for task in tasks {
        answers.push(task.await.unwrap());
    }
    for (i, answer) in answers.iter().enumerate() {
        match answer {
            Err(StoreError::Key { code, script, .. }) if i == 4 => {
                assert_eq!((code.as_str(), *script), ("WRONGTYPE", "period"));
            }
            Ok(answer) if i != 4 => {
                assert_eq!((answer.value, answer.source), (Usage::Under, Source::Redis));
            }
            other => panic!("caller {i}: {other:?}"),
        }
    }
    let stats = store.stats();
    assert_eq!(stats.batches - before, 1, "{stats:?}");
    assert_eq!((stats.key_errors, stats.redis, stats.failovers), (1, 9, 0));
    assert_eq!(store.source(), Source::Redis);
}

// `SCRIPT FLUSH` between rounds of twenty concurrent takes: the batch that meets `NOSCRIPT`
// loads the script and is sent once more, so each round is answered by Redis, exactly the
// quota is admitted, and nothing fails over.
#[tokio::test(flavor = "current_thread")]
async fn script_flush_under_concurrent_load_is_recovered() {
    const QUOTA: u32 = 50;
    let server = Server::start();
    let store = server.store(EVERY_CALL).await;
    let mut conn = server.conn().await;
    let limit = Period::new(&store, &unique("flush"), QUOTA, HOUR);
    let mut admitted = 0;
    for round in 0..5 {
        let () = redis::cmd("SCRIPT")
            .arg("FLUSH")
            .query_async(&mut conn)
            .await
            .unwrap();
        let answers = at_once(&limit, |_| String::from("k"), 20).await;
        admitted += answers.iter().filter(|v| **v != Usage::Over).count();
        println!("round {round}: {:?}", store.stats());
    }
    assert_eq!(admitted, QUOTA as usize);
    let stats = store.stats();
    assert_eq!(
        (stats.redis, stats.failovers, stats.key_errors),
        (100, 0, 0)
    );
    assert!(stats.batches < 100, "{stats:?}");
}

// Two hundred callers at once on one thread, more than a batch holds: they go in batches
// of at most 64, here 64 + 64 + 64 + 8, all in flight together, each answered.
#[tokio::test(flavor = "current_thread")]
async fn more_callers_than_a_batch_holds_go_in_several() {
    const CALLERS: usize = 200;
    let server = Server::start();
    let store = server.store(EVERY_CALL).await;
    let mut conn = server.conn().await;
    store.load().await.unwrap();
    let limit = Period::new(&store, &unique("split"), 1, HOUR);
    let before = evalsha_calls(&mut conn).await;
    let answers = at_once(&limit, |i| format!("k{i}"), CALLERS).await;
    // Each key's one event uses its quota up.
    assert!(answers.iter().all(|v| *v == Usage::Hit), "{answers:?}");
    let calls = evalsha_calls(&mut conn).await - before;
    assert_eq!(calls, CALLERS.div_ceil(BOUND) as u64);
    assert_eq!(store.stats().batches, calls);
    assert_eq!(store.stats().redis, CALLERS as u64);
}

// A caller alone is a batch of one, of every kind: each call is one `EVALSHA`.
#[tokio::test(flavor = "current_thread")]
async fn a_lone_call_is_a_batch_of_one() {
    let server = Server::start();
    let store: Store = server.store(EVERY_CALL).await;
    let mut conn = server.conn().await;
    store.load().await.unwrap();
    let name = unique("lone");
    let period = Period::new(&store, &name, 2, HOUR);
    let bucket = Bucket::new(&store, &name, 1.0, 2.0);
    let sliding = Sliding::new(&store, &name, 2, HOUR);
    let before = evalsha_calls(&mut conn).await;
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    for _ in 0..3 {
        period.take("k", now).await.unwrap();
        bucket.take("k", now, 1.0).await.unwrap();
        sliding.take("k", now).await.unwrap();
        period.next("k", now).await.unwrap();
    }
    assert_eq!(evalsha_calls(&mut conn).await - before, 12);
    assert_eq!(store.stats().batches, 12);
}

// A runtime shut down between a call's queueing and the task that would send it: the call
// is dropped with it, and the store's queue with it, so a call from another runtime is
// answered (by Redis or, if the connection died with the first runtime, by the fallback)
// rather than left queued behind a batch no one will send, until its timeout.
#[test]
fn a_runtime_shut_down_while_a_batch_forms_leaves_the_store_answering() {
    use std::future::Future;
    use std::task::{Context, Waker};

    let server = Server::start();
    let options = ironward_redis::Options {
        timeout: Duration::from_secs(2),
        ..EVERY_CALL
    };
    let first = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let store = first.block_on(server.store(options));
    let limit = Period::new(&store, &unique("shut"), 5, HOUR);
    first.block_on(async {
        // Polled once: queued, with the task that would send it spawned and not yet run.
        let mut take = Box::pin(limit.take("k", NOW));
        let mut cx = Context::from_waker(Waker::noop());
        assert!(take.as_mut().poll(&mut cx).is_pending());
    });
    drop(first);

    let second = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let answer = second.block_on(limit.take("k", NOW));
    assert!(answer.is_ok(), "{answer:?}");
}
