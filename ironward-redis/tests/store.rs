//! What the store does with Redis: keys, TTLs and hash tags; scripts loaded once and again
//! after a flush; a timeout refused, an error failed over and recovered by `PING`, an
//! unknown reply an error; and the local fallback's share of the quota.

use crate::common;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use ironward::Usage;
use ironward_redis::{
    Bucket, OnTimeout, Options, Period, Sliding, Source, Stats, Store, StoreError,
};
use redis::AsyncCommands;

use common::{Server, unique};

const SECOND: Duration = Duration::from_secs(1);

/// A clock reading on the Unix clock, as a fleet passes it.
const NOW: Duration = Duration::from_secs(1_700_000_000);

/// A store on a socket where no Redis is: its first call fails over.
async fn without_redis(options: Options) -> Store {
    let options = Options {
        start_local: true,
        ..options
    };
    Store::connect("redis+unix:///nonexistent/ironward-redis.sock", options)
        .await
        .unwrap()
}

// go-zero keeps `{key}.tokens` and `{key}.ts` in one hash slot and gives both a TTL; so
// does every limiter here.
#[tokio::test]
async fn every_key_has_a_ttl_and_one_hash_tag_per_limiter_key() {
    let server = Server::start();
    let store = server.store(common::PATIENT).await;
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
            "{p:alice}.period",
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
async fn the_script_is_loaded_once_and_again_after_a_flush() {
    let server = Server::start();
    let store = server.store(common::PATIENT).await;
    let mut conn = server.conn().await;
    // One script holds every limiter's (`lua/batch.lua` after the ten and their preludes).
    let cached = |conn: &mut redis::aio::MultiplexedConnection| {
        let mut conn = conn.clone();
        async move {
            let info: String = redis::cmd("INFO")
                .arg("memory")
                .query_async(&mut conn)
                .await
                .unwrap();
            let line = info
                .lines()
                .find_map(|line| line.strip_prefix("number_of_cached_scripts:"))
                .unwrap();
            line.trim().parse::<u32>().unwrap()
        }
    };
    assert_eq!(cached(&mut conn).await, 0);
    store.load().await.unwrap();
    assert_eq!(cached(&mut conn).await, 1);
    // Every kind runs on the one script: nothing more is loaded.
    let limit = Period::new(&store, "loaded", 1, SECOND);
    assert_eq!(limit.take("k", NOW).await.unwrap().value, Usage::Hit);
    let bucket = Bucket::new(&store, "loaded", 1.0, 1.0);
    assert!(bucket.take("k", NOW, 1.0).await.unwrap().admitted());
    assert_eq!(cached(&mut conn).await, 1);

    // A flush (or a restart) empties the cache: the next call is answered `NOSCRIPT`,
    // loads the script, and runs it.
    let () = redis::cmd("SCRIPT")
        .arg("FLUSH")
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(cached(&mut conn).await, 0);
    let limit = Period::new(&store, "flushed", 1, SECOND);
    assert_eq!(limit.take("k", NOW).await.unwrap().value, Usage::Hit);
    assert_eq!(cached(&mut conn).await, 1);
    assert_eq!(store.source(), Source::Redis);
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
    assert_eq!(limit.take("k", NOW).await, Err(StoreError::Timeout));
    assert!(started.elapsed() < SECOND);
    // A call dropped before its answer is cancelled: no failover either.
    let dropped = tokio::time::timeout(Duration::from_millis(10), limit.take("k", NOW)).await;
    assert!(dropped.is_err());
    assert_eq!(store.source(), Source::Redis);
    let stats = store.stats();
    assert_eq!((stats.timeouts, stats.failovers), (1, 0));

    // Once the pause is over, Redis answers again.
    tokio::time::sleep_until((started + SECOND).into()).await;
    let answer = limit.take("k", NOW).await.unwrap();
    assert_eq!(answer.source, Source::Redis);
}

// An error about one key's data is that key's: a wrong type beside a healthy key on a
// healthy server fails no one over.
#[tokio::test]
async fn a_wrong_type_key_is_its_own_error_and_fails_nothing_over() {
    let server = Server::start();
    let store = server.store(common::PATIENT).await;
    let name = unique("wrongtype");
    let limit = Sliding::new(&store, &name, 300, Duration::from_secs(3600));
    // Another program's string where one key's log should be: Redis answers WRONGTYPE.
    let mut conn = server.conn().await;
    let () = conn.set(format!("{{{name}:bad}}.log"), "x").await.unwrap();

    let (mut admitted, mut key_errors) = (0, 0);
    for i in 0..600 {
        let now = NOW + Duration::from_millis(i);
        if limit.take("good", now).await.unwrap().admitted() {
            admitted += 1;
        }
        match limit.take("bad", now).await {
            Err(StoreError::Key { script, code, .. }) => {
                assert_eq!((script, code.as_str()), ("sliding", "WRONGTYPE"));
                key_errors += 1;
            }
            other => panic!("{other:?}"),
        }
    }
    let next = limit.next("bad", NOW).await.unwrap_err();
    assert!(
        matches!(
            next,
            StoreError::Key {
                script: "sliding_next",
                ..
            }
        ),
        "{next:?}"
    );
    assert_eq!((admitted, key_errors), (300, 600));
    assert_eq!(store.source(), Source::Redis);
    let stats = store.stats();
    // The good key's first refusal came from Redis, the 299 after it from memory.
    assert_eq!(
        (stats.failovers, stats.key_errors, stats.redis, stats.local),
        (0, 601, 301, 0)
    );
    assert_eq!(stats.blocked, 299);
}

// A server that is not fit to count (here a replica, READONLY) fails over, and a PING
// brings the store back once it is.
#[tokio::test]
async fn a_read_only_server_fails_over_and_a_ping_brings_the_store_back() {
    let server = Server::start();
    let store = server
        .store(Options {
            share: 1.0,
            ..Options::default()
        })
        .await;
    let limit = Sliding::new(&store, &unique("readonly"), 1, SECOND);
    let mut conn = server.conn().await;
    let dead = common::free_port();
    let () = redis::cmd("REPLICAOF")
        .arg("127.0.0.1")
        .arg(dead)
        .query_async(&mut conn)
        .await
        .unwrap();

    let answer = limit.take("k", NOW).await.unwrap();
    assert_eq!((answer.value, answer.source), (true, Source::Local));
    assert_eq!(store.source(), Source::Local);
    let () = redis::cmd("REPLICAOF")
        .arg("NO")
        .arg("ONE")
        .query_async(&mut conn)
        .await
        .unwrap();
    // The probe's PING is answered: back on Redis within a few probe intervals.
    let deadline = Instant::now() + Duration::from_secs(10);
    while store.source() == Source::Local {
        assert!(Instant::now() < deadline, "never back on Redis");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(limit.take("k", NOW).await.unwrap().source, Source::Redis);
    let stats = store.stats();
    assert_eq!((stats.failovers, stats.local, stats.key_errors), (1, 1, 0));
}

// A typo in the URL is found at start, unless the caller asks to start on the fallback.
#[tokio::test]
async fn connect_fails_on_an_unreachable_redis_unless_asked_to_start_local() {
    let url = format!("redis://127.0.0.1:{}/", common::free_port());
    let started = Instant::now();
    assert!(
        Store::connect(url.as_str(), Options::default())
            .await
            .is_err()
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    let options = Options {
        start_local: true,
        ..Options::default()
    };
    let store = Store::connect(url.as_str(), options).await.unwrap();
    let limit = Period::new(&store, "typo", 5, SECOND);
    // The default share is 0: the fallback refuses, and says when to ask again.
    let answer = limit.take("k", NOW).await.unwrap();
    assert_eq!(
        (answer.value, answer.source, answer.next),
        (Usage::Over, Source::Local, options.probe)
    );
    assert_eq!(store.stats().failovers, 1);
}

#[tokio::test]
async fn a_reply_no_script_gives_is_an_error_not_a_guess() {
    let server = Server::start();
    let store = server.store(common::PATIENT).await;
    let bucket = Bucket::new(&store, "odd", 1.0, 5.0);
    // A clock reading no caller can pass: the script's reply is out of range.
    let mut conn = server.conn().await;
    let () = conn.set("{odd:k}.ts", "1e300").await.unwrap();
    let () = conn.set("{odd:k}.tokens", "1").await.unwrap();

    let err = bucket.take("k", NOW, 1.0).await.unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::Reply {
                script: "bucket",
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(store.source(), Source::Redis);
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
    let answers: Vec<Usage> = {
        let mut answers = Vec::new();
        for _ in 0..4 {
            answers.push(period.take("k", NOW).await.unwrap().value);
        }
        answers
    };
    assert_eq!(
        answers,
        [Usage::Under, Usage::Under, Usage::Hit, Usage::Over]
    );
    assert_eq!(store.source(), Source::Local);

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
    // Nothing was sent, so nothing failed over; nor has the store ever reached Redis, and
    // its source says so.
    assert_eq!(store.source(), Source::Local);
    assert_eq!(store.stats(), Stats::default());
}

// Found by the equivalence property: a span shorter than a round trip once got a TTL of a
// millisecond, so Redis forgot the state while the caller's clock still counted it. Keys
// now live at least ten seconds.
#[tokio::test]
async fn a_span_shorter_than_a_round_trip_keeps_its_keys_ten_seconds() {
    let server = Server::start();
    let store = server.store(common::PATIENT).await;
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

// A share of 0 refuses everything: a bucket's burst below one token was once raised to one
// by the core, and 100 of 100 fresh keys were admitted.
#[tokio::test]
async fn a_share_of_zero_refuses_every_key_of_every_limiter() {
    let store = without_redis(Options::default()).await;
    let period = Period::new(&store, "p", 10, Duration::from_secs(60));
    let sliding = Sliding::new(&store, "s", 10, Duration::from_secs(60));
    let bucket = Bucket::new(&store, "b", 10.0, 10.0);
    let probe = store.options().probe;
    let mut admitted = 0;
    for i in 0..100 {
        let key = format!("fresh-{i}");
        for answer in [
            period.take(&key, NOW).await.unwrap().admitted(),
            sliding.take(&key, NOW).await.unwrap().admitted(),
            bucket.take(&key, NOW, 1.0).await.unwrap().admitted(),
        ] {
            admitted += u32::from(answer);
        }
    }
    assert_eq!(admitted, 0);
    let refused = bucket.take("k", NOW, 1.0).await.unwrap();
    assert_eq!((refused.value, refused.next), (false, probe));
    assert_eq!(period.next("k", NOW).await.unwrap(), probe);
    assert_eq!(sliding.next("k", NOW).await.unwrap(), probe);
    assert_eq!(bucket.next("k", NOW, 1.0).await.unwrap(), probe);
    // A cost of zero passes, as it always does; a cost that is none is refused for good.
    assert!(bucket.take("k", NOW, 0.0).await.unwrap().admitted());
    assert_eq!(
        bucket.take("k", NOW, f64::NAN).await.unwrap().next,
        Duration::MAX
    );
    assert_eq!(store.stats().local, 100 * 3 + 1 + 3 + 2);
}

// A share that comes to less than one call refuses, rather than round up to one.
#[tokio::test]
async fn a_share_below_one_call_refuses_rather_than_round_up() {
    let store = without_redis(Options {
        share: 0.04,
        ..Options::default()
    })
    .await;
    // 0.04 · 20 = 0.8 events, and 0.8 tokens: below one.
    let period = Period::new(&store, "p", 20, Duration::from_secs(60));
    let sliding = Sliding::new(&store, "s", 20, Duration::from_secs(60));
    let bucket = Bucket::new(&store, "b", 20.0, 20.0);
    for i in 0..50 {
        let key = format!("k{i}");
        let now = NOW + Duration::from_secs(i);
        assert_eq!(period.take(&key, now).await.unwrap().value, Usage::Over);
        assert!(!sliding.take(&key, now).await.unwrap().admitted());
        // Not even half a token: the fallback holds none.
        assert!(!bucket.take(&key, now, 0.5).await.unwrap().admitted());
    }
    // 0.04 · 50 = 2 tokens: a share of the burst of at least one is the share, exactly.
    let bigger = Bucket::new(&store, "bigger", 25.0, 50.0);
    assert!(bigger.take("k", NOW, 2.0).await.unwrap().admitted());
    let refused = bigger.take("k", NOW, 0.5).await.unwrap();
    // One token a second (0.04 · 25): half a token in 500 ms.
    assert_eq!(
        (refused.value, refused.next),
        (false, Duration::from_millis(500))
    );
}

// A caller whose clock stepped back is told the wait from its own `now`: waiting that long
// on its own clock, it is not refused again. On Redis and on the fallback, each limiter.
#[tokio::test]
async fn next_is_counted_from_the_now_passed_after_a_clock_steps_back() {
    let server = Server::start();
    let on_redis = server.store(common::PATIENT).await;
    let local = without_redis(Options {
        share: 1.0,
        ..Options::default()
    })
    .await;
    let back = 10 * SECOND;
    let later = NOW + back;
    for store in [&on_redis, &local] {
        let name = unique("back");
        // Spent at `later`, asked again at `NOW`, ten seconds earlier.
        let period = Period::new(store, &name, 1, Duration::from_secs(60));
        assert_eq!(period.take("k", later).await.unwrap().value, Usage::Hit);
        let refused = period.take("k", NOW).await.unwrap();
        assert_eq!((refused.value, refused.next), (Usage::Over, 70 * SECOND));
        assert_eq!(period.next("k", NOW).await.unwrap(), 70 * SECOND);

        let sliding = Sliding::new(store, &name, 1, Duration::from_secs(60));
        assert!(sliding.take("k", later).await.unwrap().admitted());
        let refused = sliding.take("k", NOW).await.unwrap();
        assert_eq!((refused.value, refused.next), (false, 70 * SECOND));
        assert_eq!(sliding.next("k", NOW).await.unwrap(), 70 * SECOND);
        // Waiting that long on its own clock, the caller is admitted.
        assert!(
            sliding
                .take("k", NOW + refused.next)
                .await
                .unwrap()
                .admitted()
        );

        // One token a second: the next is a second after `later`, eleven after `NOW`.
        let bucket = Bucket::new(store, &name, 1.0, 1.0);
        assert!(bucket.take("k", later, 1.0).await.unwrap().admitted());
        let refused = bucket.take("k", NOW, 1.0).await.unwrap();
        assert_eq!((refused.value, refused.next), (false, 11 * SECOND));
        assert_eq!(bucket.next("k", NOW, 1.0).await.unwrap(), 11 * SECOND);
        // Room now is room now, whichever clock.
        assert_eq!(bucket.next("k", NOW, 0.0).await.unwrap(), Duration::ZERO);
    }
    assert_eq!(on_redis.stats().local, 0);
    assert_eq!(local.stats().redis, 0);
}

// Fail open is a choice, and only as open as the share: with `OnTimeout::Fallback` a call
// Redis does not answer in time is the fallback's, here refused (share 0) and here admitted
// (share 1), and the store stays on Redis either way.
#[tokio::test]
async fn a_timeout_with_on_timeout_fallback_is_the_fallbacks_answer() {
    let server = Server::start();
    let options = |share| Options {
        timeout: Duration::from_millis(100),
        on_timeout: OnTimeout::Fallback,
        share,
        ..Options::default()
    };
    let closed = server.store(options(0.0)).await;
    let open = server.store(options(1.0)).await;
    let name = unique("slow");
    let limits = [&closed, &open].map(|store| Sliding::new(store, &name, 5, SECOND));
    let mut conn = server.conn().await;
    let () = redis::cmd("CLIENT")
        .arg("PAUSE")
        .arg(2000)
        .query_async(&mut conn)
        .await
        .unwrap();
    let refused = limits[0].take("k", NOW).await.unwrap();
    assert_eq!(
        (refused.value, refused.source, refused.next),
        (false, Source::Local, closed.options().probe)
    );
    let admitted = limits[1].take("k", NOW).await.unwrap();
    assert_eq!((admitted.value, admitted.source), (true, Source::Local));
    for store in [&closed, &open] {
        let stats = store.stats();
        assert_eq!((stats.timeouts, stats.local, stats.failovers), (1, 1, 0));
        assert_eq!(store.source(), Source::Redis);
    }
}
