//! Redis under `maxmemory`, under each eviction policy: what a quota keeps.
//!
//! One key of a period limiter (quota 50 an hour) is spent. Under `noeviction`, with
//! `maxmemory` then set below what Redis holds, the limiter's calls are refused with `OOM`
//! (`StoreError::Key`) and nothing more is admitted, then or once there is room again: the
//! bound is the quota, 50. For the evicting policies filler keys of 1 KiB are written
//! until Redis is full (1 MiB past what it held at the start). Under `allkeys-lru` and `volatile-lru` (the limiter's keys all have a TTL,
//! so they are candidates under both) the fillers push the limiter's keys out; once they
//! are gone (checked with `EXISTS`) and the fillers deleted, the key takes a fresh quota:
//! 100 admitted where the quota is 50, with no failover. Under `volatile-lru` a Redis full
//! of keys without a TTL has only the limiters' keys to evict, and evicts them at every
//! call: the key took at least a second quota while Redis was full. There is no bound
//! under an evicting policy, which is why the store warns about it at connect; the other
//! five evicting policies are run too, each warned about, each resetting a key it evicts.

use crate::common;

use std::time::Duration;

use ironward::Usage;
use ironward_redis::{Period, Source, Store, StoreError};
use redis::AsyncCommands;
use redis::aio::MultiplexedConnection;

// Every call goes to Redis, a refused one too: what is measured is what Redis itself keeps
// of a quota under memory pressure.
use common::{EVERY_CALL, Server, unique};

const QUOTA: u32 = 50;
const HOUR: Duration = Duration::from_secs(3600);
const NOW: Duration = Duration::from_secs(1_700_000_000);
/// The most fillers written: 64 MiB, far past the 1 MiB of room.
const MAX_FILLERS: usize = 65_536;

/// What one run saw.
#[derive(Debug, Default)]
struct Seen {
    /// Admitted before the fill, and after it.
    admitted: [u32; 2],
    /// Calls refused with `StoreError::Key`, and their codes.
    key_errors: u32,
    codes: Vec<String>,
    /// Whether the limiter's keys were evicted.
    evicted: bool,
    /// Whether a filler was refused with OOM.
    full: bool,
}

async fn used_memory(conn: &mut MultiplexedConnection) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("memory")
        .query_async(conn)
        .await
        .unwrap();
    info.lines()
        .find_map(|line| line.strip_prefix("used_memory:"))
        .and_then(|n| n.trim().parse().ok())
        .expect("INFO memory gives used_memory")
}

async fn config_set(conn: &mut MultiplexedConnection, name: &str, value: &str) {
    let () = redis::cmd("CONFIG")
        .arg("SET")
        .arg(name)
        .arg(value)
        .query_async(conn)
        .await
        .unwrap();
}

async fn take(limit: &Period, n: u32, seen: &mut Seen, phase: usize) {
    for _ in 0..n {
        match limit.take("k", NOW).await {
            Ok(answer) => {
                assert_eq!(answer.source, Source::Redis);
                if answer.admitted() {
                    seen.admitted[phase] += 1;
                }
            }
            Err(StoreError::Key { code, .. }) => {
                seen.key_errors += 1;
                if !seen.codes.contains(&code) {
                    seen.codes.push(code);
                }
            }
            Err(err) => panic!("{err}"),
        }
    }
}

/// Spends the key, fills Redis under the evicting `policy`, and takes again.
async fn run(policy: &str) -> (Seen, Store) {
    let server = Server::start();
    let mut conn = server.conn().await;
    let room = used_memory(&mut conn).await + (1 << 20);
    config_set(&mut conn, "maxmemory", &room.to_string()).await;
    config_set(&mut conn, "maxmemory-policy", policy).await;
    let store = server.store(EVERY_CALL).await;
    let name = unique("evict");
    let limit = Period::new(&store, &name, QUOTA, HOUR);
    let mut seen = Seen::default();
    take(&limit, 2 * QUOTA, &mut seen, 0).await;

    let state = format!("{{{name}:k}}.period");
    let filler = vec![b'x'; 1024];
    let mut written = Vec::new();
    for i in 0..MAX_FILLERS {
        let key = format!("filler:{i}");
        let set: redis::RedisResult<()> = conn.set(&key, &filler).await;
        match set {
            Ok(()) => written.push(key),
            Err(err) if err.code() == Some("OOM") => seen.full = true,
            Err(err) => panic!("{err}"),
        }
        let left: u32 = redis::cmd("EXISTS")
            .arg(&state)
            .query_async(&mut conn)
            .await
            .unwrap();
        seen.evicted = left < 1;
        if seen.evicted || seen.full {
            break;
        }
    }
    // Full and refusing writes: the limiter cannot count, so it admits nothing. Not when the
    // write that evicted the limiter's key was refused too (under `volatile-*` its key was
    // the last candidate, and freeing it can leave Redis short of a filler's room): its
    // calls would then meet the `OOM` that the `noeviction` test counts, and what this run
    // asks is what an evicted key admits once there is room.
    if seen.full && !seen.evicted {
        take(&limit, 2 * QUOTA, &mut seen, 1).await;
    }
    // Room again: what Redis still knows of the key decides.
    for chunk in written.chunks(512) {
        let _: u64 = conn.del(chunk).await.unwrap();
    }
    take(&limit, 2 * QUOTA, &mut seen, 1).await;
    (seen, store)
}

#[tokio::test]
async fn under_noeviction_a_full_redis_refuses_with_oom_and_admits_nothing_past_the_quota() {
    let server = Server::start();
    let mut conn = server.conn().await;
    config_set(&mut conn, "maxmemory-policy", "noeviction").await;
    let store = server.store(EVERY_CALL).await;
    let limit = Period::new(&store, &unique("full"), QUOTA, HOUR);
    let mut seen = Seen::default();
    take(&limit, 2 * QUOTA, &mut seen, 0).await;
    // Full: maxmemory below what Redis already holds, so that every write is refused
    // however much memory the replies and buffers take from one moment to the next.
    let used = used_memory(&mut conn).await;
    config_set(&mut conn, "maxmemory", &(used / 2).to_string()).await;
    take(&limit, 2 * QUOTA, &mut seen, 1).await;
    let key_errors = seen.key_errors;
    // Room again: the quota spent before is still spent.
    config_set(&mut conn, "maxmemory", "0").await;
    take(&limit, 2 * QUOTA, &mut seen, 1).await;
    println!("{seen:?}\n{:?}", store.stats());
    assert_eq!(seen.admitted, [QUOTA, 0]);
    assert_eq!(
        (seen.codes.as_slice(), key_errors),
        (["OOM".to_owned()].as_slice(), 2 * QUOTA)
    );
    let stats = store.stats();
    assert_eq!((stats.failovers, stats.eviction_warnings), (0, 0));
    assert_eq!(stats.key_errors, u64::from(2 * QUOTA));
    assert_eq!(store.source(), Source::Redis);
}

/// What every evicting policy must show for `policy`'s run: the quota taken once before,
/// the store warned at connect and failed nothing over, and a key that was evicted (as it
/// must be when `evicts`) took a second quota, one that was not stayed spent.
fn assert_evicting(policy: &str, seen: &Seen, store: &Store, evicts: bool) {
    println!("{policy}: {seen:?}\n{:?}", store.stats());
    assert_eq!(seen.admitted[0], QUOTA, "{policy}");
    let stats = store.stats();
    assert_eq!(
        (stats.failovers, stats.key_errors, stats.eviction_warnings),
        (0, 0, 1),
        "{policy}"
    );
    if evicts {
        assert!(seen.evicted, "{policy}: {seen:?}");
    }
    if seen.evicted {
        assert!(seen.admitted[1] >= QUOTA, "{policy}: {seen:?}");
    } else {
        assert_eq!(seen.admitted[1], 0, "{policy}: still spent: {seen:?}");
    }
}

#[tokio::test]
async fn under_allkeys_lru_an_evicted_key_takes_a_second_quota_and_the_store_warns() {
    let (seen, store) = run("allkeys-lru").await;
    assert_evicting("allkeys-lru", &seen, &store, true);
}

#[tokio::test]
async fn under_volatile_lru_the_limiters_keys_with_their_ttls_are_evicted_too() {
    // The fillers have no TTL: the limiter's keys are the only candidates, evicted before
    // Redis gives up and refuses a filler (and again at each call while it is full).
    let (seen, store) = run("volatile-lru").await;
    assert_evicting("volatile-lru", &seen, &store, true);
}

// The other five evicting policies, each warned about at connect and none failing over.
// Under the `volatile-*` ones the limiter's key (it has a TTL; the fillers have none) is
// the only candidate and goes, and the key takes a second quota; under `allkeys-random`
// it goes among the fillers sooner or later, with the same result. Under `allkeys-lfu` a
// key used a hundred times outlives fillers used once, so it may stay spent: that is luck,
// not a bound, and the store warns all the same.
#[tokio::test]
async fn every_other_evicting_policy_warns_and_resets_an_evicted_key() {
    for policy in [
        "volatile-lfu",
        "volatile-random",
        "volatile-ttl",
        "allkeys-random",
        "allkeys-lfu",
    ] {
        let (seen, store) = run(policy).await;
        assert_evicting(policy, &seen, &store, policy != "allkeys-lfu");
    }
}

// Managed Redis often renames CONFIG away: the policy is then not known, and that is
// no reason to fail.
#[tokio::test]
async fn a_redis_that_refuses_config_is_used_without_a_warning() {
    let server = Server::start_with(&["--rename-command", "CONFIG", ""]);
    let store = server.store(EVERY_CALL).await;
    let limit = Period::new(&store, &unique("managed"), 1, HOUR);
    assert_eq!(limit.take("k", NOW).await.unwrap().value, Usage::Hit);
    let stats = store.stats();
    assert_eq!((stats.eviction_warnings, stats.failovers), (0, 0));
}

// The write that opens a period sets the key's TTL, twice the period (at least ten
// seconds); the writes inside the period keep it (`KEEPTTL`), so the key outlives the open
// period by at least a period, counted from its opening; the next period sets it afresh.
#[tokio::test]
async fn a_periods_key_keeps_the_ttl_its_opening_set_until_the_next_period() {
    let server = Server::start();
    let store = server.store(EVERY_CALL).await;
    let mut conn = server.conn().await;
    let name = unique("ttl");
    let key = format!("{{{name}:k}}.period");
    let limit = Period::new(&store, &name, 2, Duration::from_secs(10));

    assert_eq!(limit.take("k", NOW).await.unwrap().value, Usage::Under);
    let opened: i64 = conn.pttl(&key).await.unwrap();
    assert!((19_000..=20_000).contains(&opened), "{opened}");

    // As if 15 s of Redis's clock had gone by: an admission and a refusal inside the
    // period keep what is left.
    let _: bool = conn.pexpire(&key, 5_000).await.unwrap();
    let inside = NOW + Duration::from_secs(1);
    assert_eq!(limit.take("k", inside).await.unwrap().value, Usage::Hit);
    assert_eq!(limit.take("k", inside).await.unwrap().value, Usage::Over);
    let kept: i64 = conn.pttl(&key).await.unwrap();
    assert!((0..=5_000).contains(&kept), "{kept}");

    let next = NOW + Duration::from_secs(10);
    assert_eq!(limit.take("k", next).await.unwrap().value, Usage::Under);
    let reopened: i64 = conn.pttl(&key).await.unwrap();
    assert!((19_000..=20_000).contains(&reopened), "{reopened}");
}
