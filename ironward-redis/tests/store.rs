//! What the store does with Redis: keys, TTLs and hash tags; scripts loaded once and again
//! after a flush; a timeout refused, an error failed over and recovered by `PING`, an
//! unknown reply an error; and the local fallback's share of the quota.

mod common;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use ironward::Quota;
use ironward_redis::{Bucket, Error, Mode, Options, Period, Sliding, Stats, Store};
use redis::AsyncCommands;

use common::{Server, unique};

const SECOND: Duration = Duration::from_secs(1);

/// A clock reading on the Unix clock, as a fleet passes it.
const NOW: Duration = Duration::from_secs(1_700_000_000);

/// A store on a socket where no Redis is: its first call fails over.
async fn without_redis(options: Options) -> Store {
    Store::connect("redis+unix:///nonexistent/ironward-redis.sock", options)
        .await
        .unwrap()
}

// go-zero keeps `{key}.tokens` and `{key}.ts` in one hash slot and gives both a TTL; so
// does every limiter here.
#[tokio::test]
async fn every_key_has_a_ttl_and_one_hash_tag_per_limiter_key() {
    let server = Server::start();
    let store = server.store(Options::default()).await;
    let period = Period::aligned(&store, "p", 5, Duration::from_secs(60));
    let sliding = Sliding::new(&store, "s", 5, Duration::from_secs(30));
    let bucket = Bucket::new(&store, "b", 2.0, 50.0);
    period.take("alice", NOW).await.unwrap();
    sliding.take("alice", NOW).await.unwrap();
    bucket.take("alice", NOW, 1.0).await.unwrap();

    let mut conn = server.conn().await;
    let mut keys: Vec<String> = conn.keys("*").await.unwrap();
    keys.sort();
    assert_eq!(
        keys,
        [
            "{b:alice}.tokens",
            "{b:alice}.ts",
            "{p:alice}.count",
            "{p:alice}.start",
            "{p:alice}.ts",
            "{s:alice}.log",
            "{s:alice}.ts",
        ]
    );
    // Twice the time to be as good as new: a period, a window, a bucket's burst / rate.
    for (prefix, ttl) in [("{p:", 120_000), ("{s:", 60_000), ("{b:", 50_000)] {
        for key in keys.iter().filter(|key| key.starts_with(prefix)) {
            let left: i64 = conn.pttl(key).await.unwrap();
            assert!(left > ttl - 10_000 && left <= ttl, "{key}: {left} ms");
        }
    }
    // The hash tag is the part in braces: one per limiter and key.
    let tags: BTreeSet<&str> = keys
        .iter()
        .map(|key| &key[..key.find('}').unwrap()])
        .collect();
    assert_eq!(tags.len(), 3);
}

#[tokio::test]
async fn scripts_are_loaded_once_and_again_after_a_flush() {
    let server = Server::start();
    let store = server.store(Options::default()).await;
    let mut conn = server.conn().await;
    let hashes: Vec<String> = [
        include_str!("../lua/period.lua"),
        include_str!("../lua/period_next.lua"),
        include_str!("../lua/bucket.lua"),
        include_str!("../lua/bucket_next.lua"),
        include_str!("../lua/sliding.lua"),
        include_str!("../lua/sliding_next.lua"),
    ]
    // Each script is loaded after the clock-reading prelude.
    .map(|code| {
        let code = [include_str!("../lua/now.lua"), code].concat();
        redis::Script::new(&code).get_hash().to_owned()
    })
    .into();
    let exists = |conn: &mut redis::aio::MultiplexedConnection| {
        let mut conn = conn.clone();
        let hashes = hashes.clone();
        async move {
            let exists: Vec<bool> = redis::cmd("SCRIPT")
                .arg("EXISTS")
                .arg(&hashes)
                .query_async(&mut conn)
                .await
                .unwrap();
            exists
        }
    };
    assert_eq!(exists(&mut conn).await, [false; 6]);
    store.load().await.unwrap();
    assert_eq!(exists(&mut conn).await, [true; 6]);

    // A flush (or a restart) empties the cache: the next call is answered `NOSCRIPT`,
    // loads its script, and runs it.
    let () = redis::cmd("SCRIPT")
        .arg("FLUSH")
        .query_async(&mut conn)
        .await
        .unwrap();
    let limit = Period::new(&store, "flushed", 1, SECOND);
    assert_eq!(limit.take("k", NOW).await.unwrap().value, Quota::Hit);
    assert_eq!(
        exists(&mut conn).await,
        [true, false, false, false, false, false]
    );
    assert_eq!(store.mode(), Mode::Redis);
}

// go-zero's TokenLimiter refuses on a context deadline and fails over on anything else.
#[tokio::test]
async fn a_timeout_is_a_refusal_and_the_store_stays_on_redis() {
    let server = Server::start();
    let options = Options {
        timeout: Duration::from_millis(100),
        ..Options::default()
    };
    let store = server.store(options).await;
    let limit = Sliding::new(&store, "paused", 5, SECOND);
    assert!(limit.take("k", NOW).await.unwrap().admitted());

    // Redis holds every client's commands for 600 ms: calls time out.
    let mut conn = server.conn().await;
    let () = redis::cmd("CLIENT")
        .arg("PAUSE")
        .arg(600)
        .query_async(&mut conn)
        .await
        .unwrap();
    let started = Instant::now();
    assert_eq!(limit.take("k", NOW).await, Err(Error::Timeout));
    assert!(started.elapsed() < SECOND);
    // A call dropped before its answer is cancelled: no failover either.
    let dropped = tokio::time::timeout(Duration::from_millis(10), limit.take("k", NOW)).await;
    assert!(dropped.is_err());
    assert_eq!(store.mode(), Mode::Redis);
    let stats = store.stats();
    assert_eq!((stats.timeouts, stats.failovers), (1, 0));

    // Once the pause is over, Redis answers again.
    tokio::time::sleep_until((started + SECOND).into()).await;
    let answer = limit.take("k", NOW).await.unwrap();
    assert_eq!(answer.mode, Mode::Redis);
}

#[tokio::test]
async fn an_error_reply_fails_over_and_a_ping_brings_the_store_back() {
    let server = Server::start();
    let store = server.store(Options::default()).await;
    let name = unique("wrongtype");
    let limit = Sliding::new(&store, &name, 1, SECOND);
    // Another program's string where the log should be: Redis answers WRONGTYPE.
    let mut conn = server.conn().await;
    let () = conn.set(format!("{{{name}:k}}.log"), "x").await.unwrap();

    let answer = limit.take("k", NOW).await.unwrap();
    assert_eq!((answer.value, answer.mode), (true, Mode::Local));
    assert_eq!(store.mode(), Mode::Local);
    // The probe's PING is answered: back on Redis within a few probe intervals.
    let deadline = Instant::now() + Duration::from_secs(10);
    while store.mode() == Mode::Local {
        assert!(Instant::now() < deadline, "never back on Redis");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let stats = store.stats();
    assert_eq!((stats.failovers, stats.recoveries, stats.local), (1, 1, 1));
}

#[tokio::test]
async fn a_reply_no_script_gives_is_an_error_not_a_guess() {
    let server = Server::start();
    let store = server.store(Options::default()).await;
    let bucket = Bucket::new(&store, "odd", 1.0, 5.0);
    // A clock reading no caller can pass: the script's reply is out of range.
    let mut conn = server.conn().await;
    let () = conn.set("{odd:k}.ts", "1e300").await.unwrap();
    let () = conn.set("{odd:k}.tokens", "1").await.unwrap();

    let err = bucket.take("k", NOW, 1.0).await.unwrap_err();
    assert!(
        matches!(
            err,
            Error::Reply {
                script: "bucket",
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(store.mode(), Mode::Redis);
    assert_eq!(store.stats().unknown, 1);
}

#[tokio::test]
async fn the_fallback_admits_its_share_of_each_quota() {
    let store = without_redis(Options {
        share: 0.3,
        ..Options::default()
    })
    .await;
    let period = Period::new(&store, "p", 10, Duration::from_secs(60));
    let answers: Vec<Quota> = {
        let mut answers = Vec::new();
        for _ in 0..4 {
            answers.push(period.take("k", NOW).await.unwrap().value);
        }
        answers
    };
    assert_eq!(
        answers,
        [Quota::Under, Quota::Under, Quota::Hit, Quota::Over]
    );
    assert_eq!(store.mode(), Mode::Local);

    let sliding = Sliding::new(&store, "s", 10, Duration::from_secs(60));
    for _ in 0..3 {
        assert!(sliding.take("k", NOW).await.unwrap().admitted());
    }
    let refused = sliding.take("k", NOW + SECOND).await.unwrap();
    assert_eq!(
        (refused.value, refused.next),
        (false, Duration::from_secs(59))
    );
    assert_eq!(
        sliding.next("k", NOW + SECOND).await.unwrap(),
        Duration::from_secs(59)
    );
    assert_eq!(sliding.next("other", NOW).await.unwrap(), Duration::ZERO);

    // A bucket's rate and burst both: 3 a second up to 3.
    let bucket = Bucket::new(&store, "b", 10.0, 10.0);
    assert!(bucket.take("k", NOW, 3.0).await.unwrap().admitted());
    let refused = bucket.take("k", NOW, 1.0).await.unwrap();
    assert_eq!(refused.next, Duration::from_nanos(333_333_334));
    assert_eq!(bucket.next("k", NOW, 4.0).await.unwrap(), Duration::MAX);
    assert_eq!(
        bucket.next("fresh", NOW, 3.0).await.unwrap(),
        Duration::ZERO
    );

    let stats = store.stats();
    assert_eq!(
        stats,
        Stats {
            local: 14,
            failovers: 1,
            ..Stats::default()
        }
    );
}

#[tokio::test]
async fn an_infinite_burst_admits_every_finite_cost_without_asking_redis() {
    let store = without_redis(Options::default()).await;
    let bucket = Bucket::new(&store, "free", 0.0, f64::INFINITY);
    assert!(bucket.take("k", NOW, f64::MAX).await.unwrap().admitted());
    assert!(!bucket.take("k", NOW, f64::NAN).await.unwrap().admitted());
    assert_eq!(bucket.next("k", NOW, 1e300).await.unwrap(), Duration::ZERO);
    assert_eq!(store.mode(), Mode::Redis);
    assert_eq!(store.stats(), Stats::default());
}

// Found by the equivalence property: a span shorter than a round trip once got a TTL of a
// millisecond, so Redis forgot the state while the caller's clock still counted it. Keys
// now live at least ten seconds.
#[tokio::test]
async fn a_span_shorter_than_a_round_trip_keeps_its_keys_ten_seconds() {
    let server = Server::start();
    let store = server.store(Options::default()).await;
    let log = Sliding::new(&store, "tiny", 1, Duration::from_micros(1));
    // Time stands still at the end of the clock: the stamp never leaves the window.
    let end = Duration::from_micros(1 << 53);
    assert!(log.take("k", end).await.unwrap().admitted());
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!log.take("k", end).await.unwrap().admitted());

    let mut conn = server.conn().await;
    let left: i64 = conn.pttl("{tiny:k}.log").await.unwrap();
    assert!(left > 9_000 && left <= 10_000, "{left} ms");
}
