//! A store that connects on its first call (`Options::start_local`, or `Store::new` on a
//! connection of the caller's): what its source says before Redis has answered, and the one
//! check every connection runs once Redis answers it, the read of `maxmemory-policy`.
//!
//! - Against a Redis under `allkeys-lru`, 20 takes (one after the other, or all at once)
//!   count one eviction warning, from one `CONFIG GET`: the call Redis first answers reads
//!   the policy, as an eager connect and a recovery do.
//! - Against a port where nothing listens, the store says `Source::Local` from the start,
//!   and still after its first call has failed over; against a live Redis it says
//!   `Source::Local` until that call is answered, and `Source::Redis` after.
//! - A lazy store that starts on its fallback and then sees Redis come up warns once, at
//!   the recovery; one whose script is loaded up front (`Store::load`) warns at the load.

use crate::common;

use std::time::{Duration, Instant};

use ironward::Usage;
use ironward_redis::{Options, Period, Source, Store};
use redis::aio::{ConnectionManager, MultiplexedConnection};

use common::{EVERY_CALL, Server, unique};

const HOUR: Duration = Duration::from_secs(3600);
const NOW: Duration = Duration::from_secs(1_700_000_000);
/// How long a restarted Redis may take to be found again.
const BOUND: Duration = Duration::from_secs(10);

/// [`EVERY_CALL`], connecting on the first call.
const LAZY: Options = Options {
    start_local: true,
    ..EVERY_CALL
};

/// The evicting policy the trial ran under, set on the server's command line so that the
/// test's own connection sends no `CONFIG` of its own.
const EVICTING: [&str; 2] = ["--maxmemory-policy", "allkeys-lru"];

/// How many `CONFIG GET`s the server has answered (`INFO commandstats`): counted as a
/// difference, since Valkey counts a few of its own from the start.
async fn config_gets(conn: &mut MultiplexedConnection) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(conn)
        .await
        .unwrap();
    info.lines()
        .find_map(|line| line.strip_prefix("cmdstat_config|get:calls="))
        .and_then(|rest| rest.split(',').next()?.parse().ok())
        .unwrap_or(0)
}

// The hostile trial: `start_local` against a reachable Redis under `allkeys-lru`, 20 takes.
// The warning is the one sign an operator gets that quotas may reset without a word: one,
// not zero, and not one per call.
#[tokio::test]
async fn a_lazy_store_warns_of_an_evicting_policy_once_redis_first_answers() {
    let server = Server::start_with(&EVICTING);
    let mut conn = server.conn().await;
    let before = config_gets(&mut conn).await;
    let store = server.store(LAZY).await;
    // Nothing is sent at connect.
    assert_eq!(store.stats().eviction_warnings, 0);
    assert_eq!(config_gets(&mut conn).await, before);
    let limit = Period::new(&store, &unique("lazy"), 100, HOUR);
    for _ in 0..20 {
        let answer = limit.take("k", NOW).await.unwrap();
        assert_eq!(answer.source, Source::Redis);
    }
    let stats = store.stats();
    println!("{stats:?}");
    assert_eq!(
        (stats.eviction_warnings, stats.redis, stats.failovers),
        (1, 20, 0)
    );
    assert_eq!(config_gets(&mut conn).await - before, 1);
}

// Twenty first calls at once: each is answered, one of them reads the policy, and the
// others leave the read to it rather than send twenty.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_first_calls_read_the_policy_once() {
    let server = Server::start_with(&EVICTING);
    let mut conn = server.conn().await;
    let before = config_gets(&mut conn).await;
    let store = server.store(LAZY).await;
    let limit = Period::new(&store, &unique("lazy-many"), 100, HOUR);
    let mut calls = tokio::task::JoinSet::new();
    for i in 0..20 {
        let limit = limit.clone();
        calls.spawn(async move { limit.take(format!("k{i}"), NOW).await });
    }
    while let Some(answer) = calls.join_next().await {
        assert_eq!(answer.unwrap().unwrap().value, Usage::Under);
    }
    let stats = store.stats();
    assert_eq!((stats.eviction_warnings, stats.redis), (1, 20), "{stats:?}");
    assert_eq!(store.source(), Source::Redis);
    assert_eq!(config_gets(&mut conn).await - before, 1);
}

// A store made on a connection of the caller's sends nothing when it is made: the call
// Redis first answers reads the policy, as with `start_local`.
#[tokio::test]
async fn a_store_on_the_callers_connection_warns_once_redis_first_answers() {
    let server = Server::start_with(&EVICTING);
    let client = redis::Client::open(server.url()).unwrap();
    let conn = ConnectionManager::new_lazy_with_config(client, Store::config(&EVERY_CALL));
    let store = Store::new(conn.unwrap(), EVERY_CALL);
    assert_eq!(store.source(), Source::Local);
    let limit = Period::new(&store, &unique("new"), 100, HOUR);
    for _ in 0..20 {
        assert_eq!(limit.take("k", NOW).await.unwrap().source, Source::Redis);
    }
    assert_eq!(store.source(), Source::Redis);
    assert_eq!(store.stats().eviction_warnings, 1);
}

// Loading the script up front reaches Redis as a call does: the check runs there, and the
// store is on Redis before its first decision.
#[tokio::test]
async fn loading_the_script_reaches_redis_as_a_call_does() {
    let server = Server::start_with(&EVICTING);
    let store = server.store(LAZY).await;
    assert_eq!(store.source(), Source::Local);
    store.load().await.unwrap();
    assert_eq!(store.source(), Source::Redis);
    assert_eq!(store.stats().eviction_warnings, 1);
    let limit = Period::new(&store, &unique("loaded"), 5, HOUR);
    assert_eq!(limit.take("k", NOW).await.unwrap().source, Source::Redis);
    assert_eq!(store.stats().eviction_warnings, 1);
}

// Nothing listens: the store has never reached Redis, and its source says so from the start,
// not only once the first call has failed over.
#[tokio::test]
async fn a_lazy_store_to_a_dead_port_is_local_from_the_start() {
    let url = format!("redis://127.0.0.1:{}/", common::free_port());
    let store = Store::connect(url, LAZY).await.unwrap();
    assert_eq!(store.source(), Source::Local);
    let limit = Period::new(&store, &unique("dead"), 5, HOUR);
    let answer = limit.take("k", NOW).await.unwrap();
    assert_eq!((answer.value, answer.source), (Usage::Over, Source::Local));
    assert_eq!(store.source(), Source::Local);
    let stats = store.stats();
    assert_eq!((stats.failovers, stats.local, stats.redis), (1, 1, 0));
}

// A live Redis: the first call goes to it (a lazy store is not on its fallback, it has
// not connected yet), and once it is answered the store is on Redis.
#[tokio::test]
async fn a_lazy_store_to_a_live_redis_is_on_redis_once_a_call_is_answered() {
    let server = Server::start();
    let store = server.store(LAZY).await;
    assert_eq!(store.source(), Source::Local);
    let limit = Period::new(&store, &unique("live"), 5, HOUR);
    let answer = limit.take("k", NOW).await.unwrap();
    assert_eq!((answer.value, answer.source), (Usage::Under, Source::Redis));
    assert_eq!(store.source(), Source::Redis);
    let stats = store.stats();
    assert_eq!(
        (stats.redis, stats.failovers, stats.eviction_warnings),
        (1, 0, 0)
    );
}

// Started on the fallback, Redis comes up later under an evicting policy: the recovery
// runs the same check, and warns once.
#[tokio::test]
async fn a_lazy_store_that_starts_on_its_fallback_warns_at_the_recovery() {
    let port = common::free_port();
    let store = Store::connect(format!("redis://127.0.0.1:{port}/"), LAZY)
        .await
        .unwrap();
    let limit = Period::new(&store, &unique("later"), 5, HOUR);
    assert_eq!(limit.take("k", NOW).await.unwrap().source, Source::Local);
    let _server = (0..50)
        .find_map(|_| Server::start_on_with(port, &EVICTING))
        .expect("redis-server starts on the port");
    let deadline = Instant::now() + BOUND;
    while store.source() == Source::Local {
        assert!(Instant::now() < deadline, "never on Redis");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(limit.take("k", NOW).await.unwrap().source, Source::Redis);
    let stats = store.stats();
    assert_eq!(
        (stats.failovers, stats.recoveries, stats.eviction_warnings),
        (1, 1, 1)
    );
}
