//! `Limits` against a real Redis, one case at a time: what Redis keeps (nothing on a
//! refusal, every key with one TTL on an admission), every key of a call in one hash slot
//! (on a cluster-enabled server, where a script over two slots fails with `CROSSSLOT`),
//! sixteen tasks on two stores taking from one key (Redis read back holds exactly what was
//! admitted, limit by limit), the memory of refusals, the fallback's shares with Redis
//! killed, and the hostile inputs, one test each. `tests/limits.rs` holds the random cases
//! against the core.

use crate::common;

use std::time::{Duration, Instant};

use ironward::LimitsReason;
use ironward_redis::{Limits, Options, Source, Store, Time};
use ironward_tokio::Quota;
use redis::AsyncCommands;
use redis::aio::MultiplexedConnection;

use common::{Server, unique};

const SECOND: Duration = Duration::from_secs(1);
const MINUTE: Duration = Duration::from_secs(60);
const DAY: Duration = Duration::from_secs(86_400);
/// A Unix reading, in whole seconds.
const NOW: Duration = Duration::from_secs(1_750_000_000);

/// "60 requests a minute in bursts, 100 000 tokens in any minute, 1 000 000 tokens a day".
const LLM: [Quota; 3] = [
    Quota::bucket(1.0, 60.0),
    Quota::sliding(100_000, MINUTE),
    Quota::aligned(1_000_000, DAY),
];

fn never(index: usize) -> Result<(), LimitsReason> {
    Err(LimitsReason {
        index,
        next: Duration::MAX,
    })
}

/// The keys `name`'s limits keep for `key`, sorted.
async fn keys(conn: &mut MultiplexedConnection, name: &str, key: &str) -> Vec<String> {
    let mut keys: Vec<String> = conn.keys(format!("{{{name}:{key}}}*")).await.unwrap();
    keys.sort();
    keys
}

/// The costs a log's entries hold: the second of each entry's three little-endian doubles.
async fn log_units(conn: &mut MultiplexedConnection, key: &str) -> f64 {
    let entries: Vec<Vec<u8>> = conn.lrange(key, 0, -1).await.unwrap();
    entries
        .iter()
        .map(|entry| {
            assert_eq!(entry.len(), 24, "{key}");
            f64::from_le_bytes(entry[8..16].try_into().unwrap())
        })
        .sum()
}

/// The count a period's key holds: the first of its three little-endian doubles.
async fn period_count(conn: &mut MultiplexedConnection, key: &str) -> f64 {
    let state: Vec<u8> = conn.get(key).await.unwrap();
    assert_eq!(state.len(), 24, "{key}");
    f64::from_le_bytes(state[..8].try_into().unwrap())
}

#[tokio::test]
async fn a_refusal_writes_nothing_and_an_admission_writes_every_key_with_one_ttl() {
    let server = Server::start();
    let store = server.store(common::EVERY_CALL).await;
    let mut conn = server.conn().await;
    let name = unique("keys");
    let limits = Limits::new(&store, &name, &LLM);

    // Refused by the minute's tokens before anything was written: no key at all.
    let refused = limits.take("k", NOW, &[1.0, 100_001.0, 1.0]).await.unwrap();
    assert_eq!((refused.value, refused.source), (never(1), Source::Redis));
    assert!(keys(&mut conn, &name, "k").await.is_empty());

    let answer = limits
        .take("k", NOW, &[1.0, 40_000.0, 40_000.0])
        .await
        .unwrap();
    // The same again waits for nothing: 59 tokens, 60 000 in the minute, 960 000 in the day.
    assert_eq!((answer.value, answer.next), (Ok(()), Duration::ZERO));
    let parts = ["b0", "b0.ts", "l1", "l1.ts", "p2"];
    let mut expected: Vec<String> = parts.iter().map(|p| format!("{{{name}:k}}.{p}")).collect();
    expected.sort();
    assert_eq!(keys(&mut conn, &name, "k").await, expected);
    let tokens: String = conn.get(format!("{{{name}:k}}.b0")).await.unwrap();
    assert_eq!(tokens, "59");
    assert_eq!(
        log_units(&mut conn, &format!("{{{name}:k}}.l1")).await,
        40_000.0
    );
    assert_eq!(
        period_count(&mut conn, &format!("{{{name}:k}}.p2")).await,
        40_000.0
    );
    // One TTL for every key: twice the longest limit's, the day's, two days.
    for key in &expected {
        let ttl: i64 = conn.pttl(key).await.unwrap();
        assert!((172_000_000..=172_800_000).contains(&ttl), "{key}: {ttl}");
    }

    // 60 001 more tokens fit no minute that holds 40 000: refused, and neither the bucket
    // nor the day is charged.
    let refused = limits
        .take("k", NOW + SECOND, &[1.0, 60_001.0, 1.0])
        .await
        .unwrap();
    assert_eq!(
        refused.value,
        Err(LimitsReason {
            index: 1,
            next: 59 * SECOND
        })
    );
    let tokens: String = conn.get(format!("{{{name}:k}}.b0")).await.unwrap();
    assert_eq!(tokens, "59");
    assert_eq!(
        period_count(&mut conn, &format!("{{{name}:k}}.p2")).await,
        40_000.0
    );
}

/// A Redis with cluster source on and every slot its own: one node, so no redirection, but
/// a script whose keys lie in two slots fails with `CROSSSLOT` all the same.
async fn one_node_cluster() -> Server {
    let server = Server::start_with(&["--cluster-enabled", "yes"]);
    let mut conn = server.conn().await;
    let () = redis::cmd("CLUSTER")
        .arg("ADDSLOTSRANGE")
        .arg(0)
        .arg(16_383)
        .query_async(&mut conn)
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let info: String = redis::cmd("CLUSTER")
            .arg("INFO")
            .query_async(&mut conn)
            .await
            .unwrap();
        if info.contains("cluster_state:ok") {
            return server;
        }
        assert!(
            Instant::now() < deadline,
            "the cluster never said ok: {info}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn every_key_of_a_call_lies_in_one_hash_slot() {
    let server = one_node_cluster().await;
    let store = Store::connect_cluster([server.url()], common::EVERY_CALL)
        .await
        .unwrap();
    let name = unique("slot");
    let limits = [
        Quota::bucket(1.0, 5.0),
        Quota::bucket(1.0, f64::INFINITY),
        Quota::sliding(10, MINUTE),
        Quota::period(10, MINUTE),
        Quota::aligned(10, DAY),
    ];
    let limits = Limits::new(&store, &name, &limits);
    let mut conn = server.conn().await;
    // A plain key, and one with braces of its own: the hash tag is the first `{...}`.
    for key in ["alice", "a}b{c"] {
        let answer = limits.take(key, NOW, &[1.0; 5]).await.unwrap();
        assert_eq!(
            (answer.value, answer.source),
            (Ok(()), Source::Redis),
            "{key}"
        );
        let peek = limits.peek(key, NOW, &[1.0; 5]).await.unwrap();
        assert_eq!(peek, Ok(()));
        let written: Vec<String> = conn.keys(format!("{{{name}:*")).await.unwrap();
        let written: Vec<&String> = written
            .iter()
            .filter(|k| k.starts_with(&format!("{{{name}:{key}}}")))
            .collect();
        // Two of the bucket, none of the bucket of infinite burst, two of the log, one a
        // period.
        assert_eq!(written.len(), 6, "{key}: {written:?}");
        let mut slots = Vec::new();
        for key in written {
            let slot: i64 = redis::cmd("CLUSTER")
                .arg("KEYSLOT")
                .arg(key)
                .query_async(&mut conn)
                .await
                .unwrap();
            slots.push(slot);
        }
        slots.dedup();
        assert_eq!(slots.len(), 1, "{key}: {slots:?}");
    }
    assert_eq!(store.stats().key_errors, 0);
}

const REQUESTS: f64 = 200.0;
const TOKENS: u32 = 2_000;
const TASKS: u64 = 8;
const TAKES: usize = 80;

/// Costs from 1 to `most`, a different run for each task (xorshift64).
fn costs(task: u64, most: u32) -> impl Iterator<Item = u32> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ (task + 1).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    std::iter::repeat_with(move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % u64::from(most)) as u32 + 1
    })
}

/// Sixteen tasks on two stores take `TAKES` times each for `key`, each asking a request of
/// a bucket of 200 that never refills and 1 to `most` tokens of both a log and a period
/// of 2 000; the requests and tokens admitted, checked against what Redis holds.
async fn hammer(server: &Server, name: &str, key: &'static str, most: u32) -> (u32, u32) {
    let terms = [
        Quota::bucket(0.0, REQUESTS),
        Quota::sliding(TOKENS, MINUTE),
        Quota::period(TOKENS, MINUTE),
    ];
    let mut tasks = Vec::new();
    let mut first = None;
    for process in 0..2 {
        let store = server.store(common::PATIENT).await;
        let limits = Limits::new(&store, name, &terms);
        first.get_or_insert_with(|| limits.clone());
        for task in 0..TASKS {
            let limits = limits.clone();
            tasks.push(tokio::spawn(async move {
                let (mut requests, mut tokens) = (0u32, 0u32);
                for asked in costs(process * TASKS + task, most).take(TAKES) {
                    let cost = f64::from(asked);
                    let answer = limits.take(key, NOW, &[1.0, cost, cost]).await.unwrap();
                    assert_eq!(answer.source, Source::Redis);
                    if answer.admitted() {
                        requests += 1;
                        tokens += asked;
                    }
                }
                (requests, tokens)
            }));
        }
    }
    let (mut requests, mut tokens) = (0, 0);
    for task in tasks {
        let (r, t) = tokio::time::timeout(Duration::from_secs(60), task)
            .await
            .expect("the tasks finish")
            .unwrap();
        requests += r;
        tokens += t;
    }
    assert!(
        f64::from(requests) <= REQUESTS,
        "{requests} requests admitted"
    );
    assert!(tokens <= TOKENS, "{tokens} tokens admitted");
    // 1 280 takes fill one limit: no more request of `most` tokens passes.
    let most = f64::from(most);
    let full = first
        .unwrap()
        .peek(key, NOW, &[1.0, most, most])
        .await
        .unwrap();
    assert!(
        full.is_err(),
        "{requests} requests, {tokens} tokens: {full:?}"
    );
    // Never a partial take: Redis holds exactly what was admitted, limit by limit.
    let mut conn = server.conn().await;
    let key = |part: &str| format!("{{{name}:{key}}}.{part}");
    let left: String = conn.get(key("b0")).await.unwrap();
    assert_eq!(left.parse::<f64>().unwrap(), REQUESTS - f64::from(requests));
    assert_eq!(log_units(&mut conn, &key("l1")).await, f64::from(tokens));
    assert_eq!(period_count(&mut conn, &key("p2")).await, f64::from(tokens));
    (requests, tokens)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_takes_charge_every_limit_or_none() {
    let server = Server::start();
    let name = unique("contended");
    // Tokens of 1 to 30 run out first: exactly the 2 000, the requests uncharged past them.
    let (requests, tokens) = hammer(&server, &name, "k", 30).await;
    assert_eq!(tokens, TOKENS, "{requests} requests");
    assert!(f64::from(requests) < REQUESTS);
    // Tokens of 1 to 5 do not: exactly the 200 requests, the tokens uncharged past them.
    let (requests, tokens) = hammer(&server, &name, "small", 5).await;
    assert_eq!(f64::from(requests), REQUESTS);
    assert!(tokens < TOKENS, "{tokens} tokens");
}

#[tokio::test]
async fn costs_of_the_wrong_length_and_no_limits_ask_no_script() {
    let server = Server::start();
    let store = server.store(common::EVERY_CALL).await;
    let mut conn = server.conn().await;
    let name = unique("length");
    let limits = Limits::new(&store, &name, &LLM);
    let short = limits.take("k", NOW, &[1.0]).await.unwrap();
    assert_eq!((short.value, short.next), (never(1), Duration::MAX));
    assert_eq!(limits.take("k", NOW, &[]).await.unwrap().value, never(0));
    assert_eq!(limits.peek("k", NOW, &[1.0; 4]).await.unwrap(), never(3));
    let none = Limits::new(&store, &name, &[]);
    let answer = none.take("k", NOW, &[]).await.unwrap();
    assert_eq!((answer.value, answer.next), (Ok(()), Duration::ZERO));
    assert_eq!(none.take("k", NOW, &[1.0]).await.unwrap().value, never(0));
    assert_eq!(store.stats().redis, 0, "no round trip");
    assert!(keys(&mut conn, &name, "k").await.is_empty());
}

// A log's or a period's cost is a whole number of units; a bucket's is tokens, and one the
// core refuses (NaN, negative, infinite) is refused as never. An infinite burst admits
// every finite cost and keeps nothing.
#[tokio::test]
async fn costs_no_limit_can_charge_are_refused_as_never_and_take_nothing() {
    let server = Server::start();
    let store = server.store(common::EVERY_CALL).await;
    let mut conn = server.conn().await;
    let name = unique("costs");
    let limits = Limits::new(
        &store,
        &name,
        &[
            Quota::bucket(1.0, 10.0),
            Quota::sliding(10, MINUTE),
            Quota::period(10, MINUTE),
        ],
    );
    for (costs, index) in [
        ([1.0, 0.5, 1.0], 1),
        ([1.0, 1.0, -1.0], 2),
        ([1.0, 1.0, 4_294_967_296.0], 2),
        ([1.0, f64::NAN, 1.0], 1),
        ([f64::NAN, 1.0, 1.0], 0),
        ([-0.5, 1.0, 1.0], 0),
        ([f64::INFINITY, 1.0, 1.0], 0),
        ([11.0, 1.0, 1.0], 0),
        ([1.0, f64::from(u32::MAX), 1.0], 1),
    ] {
        let answer = limits.take("k", NOW, &costs).await.unwrap();
        assert_eq!(answer.value, never(index), "{costs:?}");
        assert_eq!(limits.peek("k", NOW, &costs).await.unwrap(), never(index));
    }
    assert!(
        keys(&mut conn, &name, "k").await.is_empty(),
        "nothing taken"
    );
    // Costs of 0 pass every limit (and open the period).
    let zero = limits.take("k", NOW, &[0.0, -0.0, 0.0]).await.unwrap();
    assert_eq!((zero.value, zero.next), (Ok(()), Duration::ZERO));

    let free = Limits::new(&store, &name, &[Quota::bucket(0.0, f64::INFINITY)]);
    assert!(
        free.take("free", NOW, &[f64::MAX])
            .await
            .unwrap()
            .admitted()
    );
    assert_eq!(
        free.take("free", NOW, &[f64::NAN]).await.unwrap().value,
        never(0)
    );
    assert!(keys(&mut conn, &name, "free").await.is_empty());
}

#[tokio::test]
async fn a_clock_stepping_back_frees_nothing_and_waits_on_its_own_clock() {
    let server = Server::start();
    let store = server.store(common::EVERY_CALL).await;
    let limits = Limits::new(
        &store,
        &unique("back"),
        &[Quota::bucket(1.0, 1.0), Quota::sliding(10, MINUTE)],
    );
    let first = limits
        .take("k", NOW + 5 * SECOND, &[1.0, 1.0])
        .await
        .unwrap();
    assert!(first.admitted());
    // Ten seconds back: the bucket, empty at NOW + 5 s, has its token at NOW + 6 s, 11 s from
    // NOW - 5 s; the log still holds its entry.
    let back = limits
        .take("k", NOW - 5 * SECOND, &[1.0, 1.0])
        .await
        .unwrap();
    assert_eq!(
        back.value,
        Err(LimitsReason {
            index: 0,
            next: 11 * SECOND
        })
    );
    assert_eq!(
        limits
            .peek("k", NOW - 5 * SECOND, &[0.0, 10.0])
            .await
            .unwrap(),
        Err(LimitsReason {
            index: 1,
            next: 70 * SECOND
        })
    );
}

#[tokio::test]
async fn a_refusal_is_remembered_for_the_same_costs_only() {
    let server = Server::start();
    let store = server.store(common::PATIENT).await;
    let limits = Limits::new(&store, &unique("memory"), &LLM);
    assert!(
        limits
            .take("k", NOW, &[1.0, 100_000.0, 1.0])
            .await
            .unwrap()
            .admitted()
    );
    let refused = Err(LimitsReason {
        index: 1,
        next: MINUTE,
    });
    assert_eq!(
        limits.take("k", NOW, &[1.0, 1.0, 1.0]).await.unwrap().value,
        refused
    );
    let stats = store.stats();
    // From memory: the same limit, the wait counted down.
    let again = limits
        .take("k", NOW + SECOND, &[1.0, 1.0, 1.0])
        .await
        .unwrap();
    assert_eq!(
        (again.value, again.source),
        (
            Err(LimitsReason {
                index: 1,
                next: 59 * SECOND
            }),
            Source::Redis
        )
    );
    assert_eq!(store.stats().blocked, stats.blocked + 1);
    assert_eq!(store.stats().redis, stats.redis, "no round trip");
    // Other costs go to Redis; so does a peek.
    let other = limits
        .take("k", NOW + SECOND, &[0.0, 0.0, 1.0])
        .await
        .unwrap();
    assert!(other.admitted());
    assert_eq!(store.stats().redis, stats.redis + 1);
    let peek = limits
        .peek("k", NOW + SECOND, &[1.0, 1.0, 1.0])
        .await
        .unwrap();
    assert!(peek.is_err());
    assert_eq!(store.stats().redis, stats.redis + 2);

    // On Redis's clock nothing is remembered: the caller's `now` says nothing of it.
    let server_time = server
        .store(Options {
            time: Time::Server,
            ..common::PATIENT
        })
        .await;
    let limits = Limits::new(&server_time, &unique("memory"), &[Quota::sliding(1, DAY)]);
    for _ in 0..3 {
        limits.take("k", NOW, &[1.0]).await.unwrap();
    }
    assert_eq!(
        (server_time.stats().blocked, server_time.stats().redis),
        (0, 3)
    );
}

#[tokio::test]
async fn with_redis_gone_the_fallback_holds_each_limit_to_its_share() {
    let mut server = Server::start();
    let store = server
        .store(Options {
            share: 0.5,
            ..common::EVERY_CALL
        })
        .await;
    let limits = Limits::new(
        &store,
        &unique("gone"),
        &[
            Quota::bucket(0.0, 10.0),
            Quota::sliding(100, MINUTE),
            Quota::period(1_000, MINUTE),
        ],
    );
    assert_eq!(
        limits.take("k", NOW, &[1.0; 3]).await.unwrap().source,
        Source::Redis
    );
    server.kill();
    // Shares of 5 tokens, 50 units a window and 500 a period, kept apart from what Redis
    // counted: the bucket runs out first, the others charged only with it.
    let (mut requests, mut units) = (0, 0);
    for i in 0..20 {
        let answer = limits
            .take("k", NOW + i * SECOND, &[1.0, 2.0, 2.0])
            .await
            .unwrap();
        assert_eq!(answer.source, Source::Local);
        if answer.admitted() {
            (requests, units) = (requests + 1, units + 2);
        }
    }
    assert_eq!((requests, units), (5, 10));
    let refused = limits.take("k", NOW, &[1.0, 2.0, 2.0]).await.unwrap();
    assert_eq!(refused.value, never(0));
    // The log's share is 50: 40 more pass on another key's fresh group, 41 do not.
    assert!(
        limits
            .take("j", NOW, &[0.0, 40.0, 0.0])
            .await
            .unwrap()
            .admitted()
    );
    assert_eq!(
        limits.peek("j", NOW, &[0.0, 11.0, 0.0]).await.unwrap(),
        Err(LimitsReason {
            index: 1,
            next: MINUTE
        })
    );
    // A share below one unit refuses as the single limiter's fallback does, until Redis
    // may answer again.
    let small = Limits::new(&store, &unique("small"), &[Quota::bucket(1.0, 1.0)]);
    let below = small.take("k", NOW, &[1.0]).await.unwrap();
    assert_eq!(
        below.value,
        Err(LimitsReason {
            index: 0,
            next: store.options().probe
        })
    );
    assert!(small.take("k", NOW, &[0.0]).await.unwrap().admitted());
}
