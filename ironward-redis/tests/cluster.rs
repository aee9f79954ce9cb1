//! Redis Cluster: a real three-master cluster with a replica each, started by the test on
//! free loopback ports (`redis-server --cluster-enabled yes`, then `redis-cli --cluster
//! create`). Each test runs on Redis and, as `*_on_valkey`, on a Valkey cluster
//! (`valkey-server --cluster-enabled yes`; see `common`'s docs for how to provide it).
//!
//! - Keys spread over every master decide exactly as the core types do, through one
//!   cluster connection that follows the slot map (`MOVED`, `ASK`); the store is on the
//!   cluster from its connect, and warns once of a cluster whose nodes may evict.
//! - A key's slot moved to another master under the store (`CLUSTER SETSLOT`, `MIGRATE`):
//!   its answers stay the core's through the `ASK` and then the `MOVED` redirections.
//! - A master killed under load: its replica is promoted, the store fails over to its local
//!   fallback while the master's slots are down and comes back to the cluster once they are
//!   served again, and no key is admitted past the bound the crate docs state for it: the
//!   quota, plus the fallback's share of it, plus the writes the replica had not yet
//!   received when its master died (replication is asynchronous), which the test measures.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use ironward::Usage;
use ironward_redis::{Options, Period, Sliding, Source, Store};

use common::Flavor;
use common::cluster::{BOUND, Cluster};

fn unix_now() -> Duration {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap()
}

async fn store(cluster: &Cluster, options: Options) -> Store {
    Store::connect_cluster(cluster.urls(), options)
        .await
        .expect("a store over the cluster")
}

/// A cluster of `flavor`, started off the runtime's threads.
async fn cluster(flavor: Flavor) -> Cluster {
    tokio::task::spawn_blocking(move || Cluster::start(flavor))
        .await
        .unwrap()
}

// Thirty keys over the three masters, each taken from twelve times on a quota of five:
// every answer is the core's, on Redis, through the one cluster connection.

/// A store's timeout for the tests that are not about time: every call answered, on a loaded
/// machine too.
const PATIENT: Duration = Duration::from_secs(5);
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_on_every_master_decide_exactly_as_the_core() {
    keys_on_every_master(Flavor::Redis).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_on_every_master_decide_exactly_as_the_core_on_valkey() {
    keys_on_every_master(Flavor::Valkey).await;
}

async fn keys_on_every_master(flavor: Flavor) {
    let cluster = cluster(flavor).await;
    let patient = Options {
        timeout: PATIENT,
        ..Options::default()
    };
    let store = store(&cluster, patient).await;
    // Connected, the store has reached the cluster and read its policy: `noeviction`.
    assert_eq!(store.source(), Source::Redis);
    assert_eq!(store.stats().eviction_warnings, 0);
    let name = common::unique("cluster");
    let limit = Period::new(&store, &name, 5, Duration::from_secs(60));
    let log = Sliding::new(&store, &name, 3, Duration::from_secs(60));
    let keys: Vec<String> = (0..30).map(|k| format!("user-{k}")).collect();
    let masters: BTreeSet<u16> = keys
        .iter()
        .map(|key| cluster.master_of(&format!("{{{name}:{key}}}.period")))
        .collect::<Option<_>>()
        .expect("every slot served");
    assert_eq!(masters.len(), 3, "the keys fall on every master");
    let at = Duration::from_secs;
    for key in &keys {
        let mut core = ironward::Period::new(5, at(60));
        let mut sliding = ironward::Sliding::new(3, at(60));
        for t in 0..12 {
            let now = at(1_000 + t);
            let answer = limit.take(key, now).await.expect("answered");
            assert_eq!(
                (answer.value, answer.source),
                (core.take(now), Source::Redis)
            );
            let answer = log.take(key, now).await.expect("answered");
            assert_eq!(answer.value, sliding.take(now));
        }
    }
    assert_eq!(store.stats().failovers, 0);

    // Every node evicting: a store made now warns once, as a single Redis's store does.
    for port in cluster.live() {
        let set = Cluster::cli(port, &["CONFIG", "SET", "maxmemory-policy", "allkeys-lru"]);
        assert_eq!(set.trim(), "OK");
    }
    let warned = Store::connect_cluster(cluster.urls(), Options::default())
        .await
        .unwrap();
    assert_eq!(
        (warned.source(), warned.stats().eviction_warnings),
        (Source::Redis, 1)
    );
}

/// Eight calls on `limit`'s key a second apart from `t`, each answered as `core` answers.
async fn eight(limit: &Period, core: &mut ironward::Period, t: &mut u64) {
    for _ in 0..8 {
        let now = Duration::from_secs(1_000 + *t);
        *t += 1;
        let answer = limit.take("k", now).await.expect("answered");
        assert_eq!(
            (answer.value, answer.source),
            (core.take(now), Source::Redis)
        );
    }
}

// A key's slot moved to another master while the store runs, as `redis-cli --cluster
// reshard` moves it: while it is migrating, its old master answers `ASK` for the keys it
// has handed over; once the new master owns it, `MOVED`. The cluster connection follows
// both, and every answer is the core's (a quota of 12 over 24 calls, eight in each phase),
// with no failover.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slot_moved_under_the_store_is_followed_through_ask_and_moved() {
    a_slot_moved(Flavor::Redis).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slot_moved_under_the_store_is_followed_through_ask_and_moved_on_valkey() {
    a_slot_moved(Flavor::Valkey).await;
}

async fn a_slot_moved(flavor: Flavor) {
    let cluster = cluster(flavor).await;
    // Every call reaches the cluster, refusals too: each phase is one of redirections. The
    // test is of following them, not of speed: a timeout wide enough for a loaded two-core
    // machine (the preset's 100 ms once timed a redirection out there).
    let options = Options {
        blocked_keys: 0,
        timeout: PATIENT,
        ..Options::default()
    };
    let store = store(&cluster, options).await;
    let name = common::unique("moving");
    let limit = Period::new(&store, &name, 12, Duration::from_secs(600));
    let mut core = ironward::Period::new(12, Duration::from_secs(600));
    let key = format!("{{{name}:k}}");
    let any = cluster.live().next().unwrap();
    let slot = Cluster::cli(any, &["CLUSTER", "KEYSLOT", &key])
        .trim()
        .to_owned();
    let from = cluster.master_of(&key).expect("a master");
    let to = cluster
        .live()
        .find(|&port| {
            port != from && Cluster::cli(port, &["INFO", "replication"]).contains("role:master")
        })
        .expect("another master");
    let id = |port| Cluster::cli(port, &["CLUSTER", "MYID"]).trim().to_owned();
    let (from_id, to_id) = (id(from), id(to));
    let mut t = 0;
    eight(&limit, &mut core, &mut t).await;

    // Migrating: the keys go over, and the old master answers ASK for them.
    let to_port = to.to_string();
    let steps: [(u16, Vec<&str>); 2] = [
        (to, vec!["CLUSTER", "SETSLOT", &slot, "IMPORTING", &from_id]),
        (from, vec!["CLUSTER", "SETSLOT", &slot, "MIGRATING", &to_id]),
    ];
    for (port, args) in &steps {
        assert_eq!(Cluster::cli(*port, args).trim(), "OK", "{args:?}");
    }
    let keys = Cluster::cli(from, &["CLUSTER", "GETKEYSINSLOT", &slot, "100"]);
    let keys: Vec<&str> = keys
        .lines()
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .collect();
    assert!(!keys.is_empty(), "the key's state is in its slot");
    let mut migrate = vec!["MIGRATE", "127.0.0.1", &to_port, "", "0", "5000", "KEYS"];
    migrate.extend(&keys);
    assert_eq!(Cluster::cli(from, &migrate).trim(), "OK");
    eight(&limit, &mut core, &mut t).await;

    // Moved: every master learns the slot's new owner, and the old one answers MOVED.
    for port in cluster.live() {
        let _ = Cluster::cli(port, &["CLUSTER", "SETSLOT", &slot, "NODE", &to_id]);
    }
    eight(&limit, &mut core, &mut t).await;
    assert_eq!(cluster.master_of(&key), Some(to));
    let stats = store.stats();
    assert_eq!((stats.failovers, stats.redis), (0, 24), "{stats:?}");
}

/// The events a period's key holds in the cluster now (see `lua/period.lua`: the count is
/// the first of three little-endian doubles in `{name:key}.period`), 0 if it holds none.
async fn surviving_count(
    conn: &mut redis::cluster_async::ClusterConnection,
    name: &str,
    key: &str,
) -> u32 {
    let state: Option<Vec<u8>> = redis::cmd("GET")
        .arg(format!("{{{name}:{key}}}.period"))
        .query_async(conn)
        .await
        .expect("a GET");
    let Some(state) = state else { return 0 };
    let count: [u8; 8] = state[..8].try_into().expect("a period's state");
    f64::from_le_bytes(count) as u32
}

/// What the load saw for one key.
#[derive(Debug, Default, Clone, Copy)]
struct Seen {
    /// Calls Redis answered (counted there, admitted or not), and those admitted.
    redis: u32,
    redis_admitted: u32,
    /// Calls the fallback admitted.
    local_admitted: u32,
}

// Eight tasks take from forty keys (a quota of 50 an hour each, fallback share 0.2) while
// the master of some of them is killed. The cluster promotes its replica; the store fails
// over and comes back. Per key, what Redis admitted is at most the quota plus the writes
// the promoted replica never received, which the test reads back (the count Redis holds at
// the end against the calls it answered); what the fallback admitted is at most ⌊0.2 · 50⌋
// = 10.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_master_killed_under_load_is_replaced_and_every_key_keeps_its_bound() {
    a_master_killed(Flavor::Redis).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_master_killed_under_load_is_replaced_and_every_key_keeps_its_bound_on_valkey() {
    a_master_killed(Flavor::Valkey).await;
}

async fn a_master_killed(flavor: Flavor) {
    const QUOTA: u32 = 50;
    const SHARE: f64 = 0.2;
    let mut cluster = cluster(flavor).await;
    let options = Options {
        timeout: Duration::from_millis(500),
        share: SHARE,
        // Every call reaches the cluster, so that what it answered is what it counted.
        blocked_keys: 0,
        probe: Duration::from_millis(100),
        ..Options::default()
    };
    let store = store(&cluster, options).await;
    let name = common::unique("failover");
    let limit = Period::new(&store, &name, QUOTA, Duration::from_secs(3600));
    let keys: Vec<String> = (0..40).map(|k| format!("k{k}")).collect();
    let seen = Arc::new(Mutex::new(BTreeMap::<String, Seen>::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let tasks: Vec<_> = (0..8)
        .map(|task| {
            let (limit, keys, seen, stop) = (
                limit.clone(),
                keys.clone(),
                Arc::clone(&seen),
                Arc::clone(&stop),
            );
            tokio::spawn(async move {
                let mut i = task;
                while !stop.load(Ordering::Relaxed) {
                    let key = &keys[i % keys.len()];
                    i += 7;
                    if let Ok(answer) = limit.take(key, unix_now()).await {
                        let mut seen = seen.lock().unwrap();
                        let entry = seen.entry(key.clone()).or_default();
                        let admitted = answer.value != Usage::Over;
                        match answer.source {
                            Source::Redis => {
                                entry.redis += 1;
                                entry.redis_admitted += u32::from(admitted);
                            }
                            Source::Local => entry.local_admitted += u32::from(admitted),
                        }
                    }
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            })
        })
        .collect();
    // Let the quotas fill partly, then kill the master of the first key.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let victim = cluster
        .master_of(&format!("{{{name}:{}}}.period", keys[0]))
        .expect("every slot served");
    cluster.kill(victim);
    let killed = Instant::now();
    // The replica takes over (about twice the node timeout: the master is first marked
    // failing, then a replica is elected), and the store comes back after that.
    let first = format!("{{{name}:{}}}.period", keys[0]);
    let deadline = killed + BOUND;
    loop {
        let promoted = {
            let c = &cluster;
            tokio::task::block_in_place(|| {
                c.state_ok(c.live()) && c.master_of(&first).is_some_and(|port| port != victim)
            })
        };
        if promoted {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no replica promoted: {:?}",
            store.stats()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let promoted = Instant::now();
    let recoveries = store.stats().recoveries;
    while store.source() != Source::Redis
        || store.stats().recoveries == recoveries && store.stats().failovers > recoveries
    {
        assert!(
            Instant::now() < deadline,
            "the store did not come back: {:?}",
            store.stats()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    eprintln!(
        "promoted {:?} after the kill, the store back {:?} after that",
        promoted - killed,
        promoted.elapsed()
    );
    // A second on the promoted replica, then stop.
    tokio::time::sleep(Duration::from_secs(1)).await;
    stop.store(true, Ordering::Relaxed);
    for task in tasks {
        task.await.unwrap();
    }
    let stats = store.stats();
    assert!(stats.failovers >= 1, "the store failed over: {stats:?}");
    let mut conn = redis::cluster::ClusterClient::new(cluster.urls())
        .unwrap()
        .get_async_connection()
        .await
        .expect("a plain cluster connection");
    let local_bound = (SHARE * f64::from(QUOTA)) as u32;
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), keys.len(), "every key was taken from");
    let mut lost_total = 0;
    for (key, seen) in &seen {
        let count = surviving_count(&mut conn, &name, key).await;
        let lost = seen.redis.saturating_sub(count);
        lost_total += lost;
        assert!(
            seen.redis_admitted <= QUOTA + lost,
            "{key}: Redis admitted {} > {QUOTA} + {lost} lost: {seen:?}",
            seen.redis_admitted
        );
        assert!(
            seen.local_admitted <= local_bound,
            "{key}: the fallback admitted {} > {local_bound}: {seen:?}",
            seen.local_admitted
        );
    }
    eprintln!("failover on {flavor:?}: {stats:?}, writes lost with the master: {lost_total}");
}
