//! What the server does to the limiters, on Valkey as on Redis: each check is written once,
//! over a [`Flavor`], and run as `<check>::on_redis` and `<check>::on_valkey` (failing,
//! saying how to provide the server, without `IRONWARD_VALKEY_SERVER`; `scripts/test` always
//! sets it). Each
//! counts what was admitted against the bound the crate docs state:
//!
//! - the server is the one asked for (`INFO server`);
//! - `SCRIPT FLUSH` between calls: the script is loaded again (`NOSCRIPT`, then the
//!   script), no failover, exactly the quota admitted, a reservation made before the flush
//!   settled after it;
//! - `CONFIG GET maxmemory-policy` once the server first answers, at an eager connect and
//!   at a lazy store's first call: one eviction warning under each of the seven evicting
//!   policies, none under `noeviction`, and the lazy store on the server once answered;
//! - another program's data under a limiter's keys (`WRONGTYPE`, Redis's own and the period
//!   scripts'), and a full server under `noeviction` (`OOM`): each call refused with
//!   `StoreError::Key` for that key alone, no failover, nothing admitted past the quota;
//! - the server killed with SIGKILL and restarted empty on its port: every limiter fails
//!   over, admits its share, and returns to the server, exactly `Q`, `⌊share · Q⌋` and `Q`
//!   admitted, the bound `2 · Q + ⌊share · Q⌋`;
//! - the server's clock (`Time::Server`, the scripts reading `TIME`): exactly the quota.

use crate::common;

use std::future::Future;
use std::time::{Duration, Instant};

use ironward::Usage;
use ironward_redis::{
    Bucket, Options, Period, Periods, Sliding, Source, Stats, Store, StoreError, Term, Time,
};
use redis::aio::MultiplexedConnection;

use common::{EVERY_CALL, Flavor, Server, unique};

crate::on_both!(the_server_is_the_one_asked_for, identity);
crate::on_both!(scripts_flushed_are_loaded_again, flushed);
crate::on_both!(an_evicting_policy_is_warned_of_at_connect, policies);
crate::on_both!(another_programs_data_is_that_keys_error, wrong_type);
crate::on_both!(a_full_server_refuses_with_oom_and_admits_nothing_more, full);
crate::on_both!(a_killed_server_fails_over_and_is_used_again, killed);
crate::on_both!(the_servers_clock_decides, server_clock);

const HOUR: Duration = Duration::from_secs(3600);
/// A Unix reading, in whole seconds: every call here is at it.
const NOW: Duration = Duration::from_secs(1_750_000_000);
/// How long a restarted server may take to be used again, on a loaded two-core machine.
const BOUND: Duration = Duration::from_secs(30);

/// `check` on a runtime of two threads (the store's probe runs beside the calls).
fn block<F: Future>(check: F) -> F::Output {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
        .block_on(check)
}

/// The four limiters of one name on `store`, each of quota `q`: a period and a window of
/// an hour, a bucket of `q` tokens that never refills, and a periods of one hourly term.
struct Four {
    name: String,
    period: Period,
    sliding: Sliding,
    bucket: Bucket,
    periods: Periods,
}

impl Four {
    fn new(store: &Store, q: u32) -> Self {
        let name = unique("four");
        Self {
            period: Period::new(store, &name, q, HOUR),
            sliding: Sliding::new(store, &name, q, HOUR),
            bucket: Bucket::new(store, &name, 0.0, f64::from(q)),
            periods: Periods::new(store, &name, &[Term::new(q, HOUR)]),
            name,
        }
    }

    /// `n` takes of one unit on `key` from each limiter: how many each admitted, in the
    /// order period, sliding, bucket, periods, and each answer's source, which must be
    /// `source`.
    async fn take(&self, key: &str, n: u32, source: Source) -> [u32; 4] {
        let mut admitted = [0; 4];
        for _ in 0..n {
            let answers = [
                self.period
                    .take(key, NOW)
                    .await
                    .map(|a| (a.admitted(), a.source)),
                self.sliding
                    .take(key, NOW)
                    .await
                    .map(|a| (a.admitted(), a.source)),
                self.bucket
                    .take(key, NOW, 1.0)
                    .await
                    .map(|a| (a.admitted(), a.source)),
                self.periods
                    .take(key, NOW, &[1])
                    .await
                    .map(|a| (a.admitted(), a.source)),
            ];
            for (count, answer) in admitted.iter_mut().zip(answers) {
                let (yes, answered) = answer.expect("an answer");
                assert_eq!(answered, source);
                *count += u32::from(yes);
            }
        }
        admitted
    }

    /// The server's key of `part` for `key`, as the crate docs' table names them.
    fn key(&self, key: &str, part: &str) -> String {
        format!("{{{}:{key}}}.{part}", self.name)
    }
}

/// What a call refused with `StoreError::Key` says: its code, its script and Redis's message.
fn key_error<T: std::fmt::Debug>(answer: Result<T, StoreError>) -> (String, &'static str, String) {
    match answer {
        Err(StoreError::Key {
            code,
            script,
            message,
        }) => (code, script, message),
        other => panic!("a key error, not {other:?}"),
    }
}

async fn cmd(conn: &mut MultiplexedConnection, args: &[&str]) -> redis::Value {
    let mut cmd = redis::cmd(args[0]);
    for arg in &args[1..] {
        cmd.arg(*arg);
    }
    cmd.query_async(conn).await.expect("the command runs")
}

/// `number_of_cached_scripts` from `INFO memory`, which Redis 7 and Valkey both give.
async fn cached_scripts(conn: &mut MultiplexedConnection) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("memory")
        .query_async(conn)
        .await
        .unwrap();
    info.lines()
        .find_map(|line| line.strip_prefix("number_of_cached_scripts:"))
        .and_then(|n| n.trim().parse().ok())
        .expect("INFO memory gives number_of_cached_scripts")
}

// Valkey says who it is in `INFO server` (`server_name:valkey`, `valkey_version:`) beside
// the Redis version it is compatible with (`redis_version:7.2.4`), which Redis alone
// gives: so an `IRONWARD_VALKEY_SERVER` that names a `redis-server` fails here rather than
// test Redis twice.
fn identity(flavor: Flavor) {
    block(async {
        let server = Server::of(flavor);
        let mut conn = server.conn().await;
        let info: String = redis::cmd("INFO")
            .arg("server")
            .query_async(&mut conn)
            .await
            .unwrap();
        let field = |name: &str| {
            info.lines()
                .find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))
                .map(str::trim)
        };
        let version = field("redis_version").expect("redis_version, on both");
        match flavor {
            Flavor::Redis => assert_eq!(field("server_name"), None, "{info}"),
            Flavor::Valkey => {
                assert_eq!(field("server_name"), Some("valkey"), "{info}");
                assert!(field("valkey_version").is_some(), "{info}");
            }
        }
        eprintln!(
            "{flavor:?}: redis_version {version}, valkey_version {:?}",
            field("valkey_version")
        );
    });
}

// A flushed script cache is what a restarted or failed-over server has: each call meets
// `NOSCRIPT`, and the store loads the script (the one that holds every limiter's) and
// sends the call again. Quota 5: 3 takes and a
// reservation of 2 before the flush; after it, the reservation settled at 0 (its 2 come
// back, through a script loaded again) and 5 takes, of which 2 pass; a period's 5 exactly.
fn flushed(flavor: Flavor) {
    block(async {
        let server = Server::of(flavor);
        let store = server.store(EVERY_CALL).await;
        let mut conn = server.conn().await;
        let four = Four::new(&store, 5);
        assert_eq!(four.take("k", 3, Source::Redis).await, [3; 4]);
        let reserved = four.period.reserve("r", NOW, 2, HOUR).await.unwrap();
        let reservation = reserved.value.expect("room for 2");
        assert!(cached_scripts(&mut conn).await > 0);

        let _ = cmd(&mut conn, &["SCRIPT", "FLUSH"]).await;
        assert_eq!(cached_scripts(&mut conn).await, 0);
        four.period.settle(reservation, 0, NOW).await.unwrap();
        assert_eq!(four.take("k", 5, Source::Redis).await, [2; 4]);
        assert_eq!(
            four.period.take_n("r", NOW, 5).await.unwrap().value,
            Usage::Hit
        );
        assert_eq!(
            cached_scripts(&mut conn).await,
            1,
            "the one script loaded again"
        );

        let _ = cmd(&mut conn, &["SCRIPT", "FLUSH"]).await;
        store.load().await.expect("every script loads");
        assert_eq!(
            cached_scripts(&mut conn).await,
            1,
            "Store::load loads the one script"
        );
        let stats = store.stats();
        assert_eq!(
            (stats.failovers, stats.key_errors, stats.unknown),
            (0, 0, 0)
        );
        // 8 takes of four limiters, the reserve, the settle and the last take.
        assert_eq!(stats.redis, 35, "{stats:?}");
    });
}

// Under an evicting policy a key's state may vanish and its quota with it, so the store
// reads the policy once the server first answers it (`CONFIG GET maxmemory-policy`) and
// warns once: at an eager connect, and at the first call of a store that connects lazily
// (`start_local`), which says `Source::Local` until then. The eight policies Redis 7 and
// Valkey both have, each set with `CONFIG SET` and read by stores made after it.
fn policies(flavor: Flavor) {
    block(async {
        let server = Server::of(flavor);
        let mut conn = server.conn().await;
        let policies = [
            "noeviction",
            "allkeys-lru",
            "allkeys-lfu",
            "allkeys-random",
            "volatile-lru",
            "volatile-lfu",
            "volatile-random",
            "volatile-ttl",
        ];
        for policy in policies {
            let _ = cmd(&mut conn, &["CONFIG", "SET", "maxmemory-policy", policy]).await;
            let stats = server.store(EVERY_CALL).await.stats();
            let expected = u64::from(policy != "noeviction");
            assert_eq!(stats.eviction_warnings, expected, "{policy}: {stats:?}");

            let lazy = Options {
                start_local: true,
                ..EVERY_CALL
            };
            let store = server.store(lazy).await;
            assert_eq!(store.source(), Source::Local, "{policy}");
            let limit = Period::new(&store, &unique("lazy"), 5, HOUR);
            for _ in 0..3 {
                assert_eq!(limit.take("k", NOW).await.unwrap().source, Source::Redis);
            }
            let stats = store.stats();
            assert_eq!(stats.eviction_warnings, expected, "{policy}: {stats:?}");
            assert_eq!(store.source(), Source::Redis, "{policy}");
        }
    });
}

/// What a run of key errors must show: no failover, the store still on the server, and
/// `errors` counted.
fn kept_on_the_server(store: &Store, errors: u64) -> Stats {
    let stats = store.stats();
    assert_eq!(store.source(), Source::Redis);
    assert_eq!((stats.failovers, stats.local), (0, 0), "{stats:?}");
    assert_eq!(stats.key_errors, errors, "{stats:?}");
    stats
}

// Another program's data under a limiter's keys. The server's own `WRONGTYPE`: a list
// where a period and a periods' term keep a string, a string where a log keeps a list. The
// scripts' `WRONGTYPE`: a string of the wrong length where a period keeps its packed
// state, a list entry no log writes, and a bucket's: `MGET` answers no value for a key of
// another type (on both servers), so a bucket that finds none asks the key's `TYPE` before
// it would write over it as a fresh bucket's, and refuses a string that is no number. Each
// call is refused with `StoreError::Key` for its key, the store stays on the server, and a clean
// key beside them takes exactly its quota.
fn wrong_type(flavor: Flavor) {
    block(async {
        let server = Server::of(flavor);
        let store = server.store(EVERY_CALL).await;
        let mut conn = server.conn().await;
        let four = Four::new(&store, 3);
        let _ = cmd(&mut conn, &["RPUSH", &four.key("k", "period"), "a list"]).await;
        let _ = cmd(&mut conn, &["SET", &four.key("k", "log"), "a string"]).await;
        let _ = cmd(&mut conn, &["RPUSH", &four.key("k", "p0"), "a list"]).await;
        let servers = [
            key_error(four.period.take("k", NOW).await),
            key_error(four.sliding.take("k", NOW).await),
            key_error(four.periods.take("k", NOW, &[1]).await),
        ];
        for (code, script, message) in &servers {
            assert_eq!(code, "WRONGTYPE", "{script}: {message}");
            let text = "Operation against a key holding the wrong kind of value";
            assert!(message.starts_with(text), "{script}: {message}");
            eprintln!("{flavor:?} {script}: {code} {message}");
        }
        let scripts: Vec<&str> = servers.iter().map(|(_, script, _)| *script).collect();
        assert_eq!(scripts, ["period", "sliding", "limits"]);
        kept_on_the_server(&store, 3);

        let _ = cmd(&mut conn, &["SET", &four.key("j", "period"), "short"]).await;
        let _ = cmd(&mut conn, &["RPUSH", &four.key("j", "log"), "no stamp"]).await;
        let _ = cmd(&mut conn, &["RPUSH", &four.key("j", "tokens"), "a list"]).await;
        let _ = cmd(&mut conn, &["SET", &four.key("i", "ts"), "noon"]).await;
        let scripts = [
            (
                key_error(four.period.take("j", NOW).await),
                "holds no period state",
            ),
            (
                key_error(four.sliding.take("j", NOW).await),
                "holds no sliding log",
            ),
            (
                key_error(four.bucket.take("j", NOW, 1.0).await),
                "holds no bucket state",
            ),
            (
                key_error(four.bucket.take("i", NOW, 1.0).await),
                "holds no bucket state",
            ),
        ];
        for ((code, script, message), text) in &scripts {
            assert_eq!(code, "WRONGTYPE", "{script}: {message}");
            assert!(message.contains(text), "{script}: {message}");
            eprintln!("{flavor:?} {script}: {code} {message}");
        }
        kept_on_the_server(&store, 7);
        assert_eq!(four.take("clean", 5, Source::Redis).await, [3; 4]);
    });
}

// A server at `maxmemory` under `noeviction` refuses writes with `OOM`: each call that
// must write is then refused with `StoreError::Key` (no failover, which would hand every key
// the fallback's share), and once there is room a spent key is still spent. Quota 5, all
// 5 taken; while full, 3 calls on the spent key (a period, a log and a bucket write even
// to refuse: `OOM`; a periods' refusal writes nothing, and is answered) and 1 on a fresh
// key (an admission writes: `OOM` from all four); then 1 call on each: 5 admitted on the
// spent key of 9 calls, 1 on the fresh one.
fn full(flavor: Flavor) {
    block(async {
        let server = Server::of_with(flavor, &["--maxmemory-policy", "noeviction"]);
        let store = server.store(EVERY_CALL).await;
        let mut conn = server.conn().await;
        let four = Four::new(&store, 5);
        assert_eq!(four.take("k", 5, Source::Redis).await, [5; 4]);
        let _ = cmd(&mut conn, &["CONFIG", "SET", "maxmemory", "1"]).await;
        for i in 0..3 {
            let errors = [
                key_error(four.period.take("k", NOW).await),
                key_error(four.sliding.take("k", NOW).await),
                key_error(four.bucket.take("k", NOW, 1.0).await),
            ];
            for (code, script, message) in errors {
                assert_eq!(code, "OOM", "{script}: {message}");
                if i == 0 {
                    eprintln!("{flavor:?} {script}: {code} {message}");
                }
            }
            let refused = four.periods.take("k", NOW, &[1]).await.unwrap();
            assert_eq!((refused.admitted(), refused.source), (false, Source::Redis));
        }
        let fresh = [
            key_error(four.period.take("fresh", NOW).await),
            key_error(four.sliding.take("fresh", NOW).await),
            key_error(four.bucket.take("fresh", NOW, 1.0).await),
            key_error(four.periods.take("fresh", NOW, &[1]).await),
        ];
        for (code, script, message) in fresh {
            assert_eq!(code, "OOM", "{script}: {message}");
        }
        kept_on_the_server(&store, 13);
        let _ = cmd(&mut conn, &["CONFIG", "SET", "maxmemory", "0"]).await;
        assert_eq!(four.take("k", 1, Source::Redis).await, [0; 4]);
        assert_eq!(four.take("fresh", 1, Source::Redis).await, [1; 4]);
    });
}

// SIGKILL, as a crash, then a restart on the same port with no data. Quota 20, share 0.5,
// 25 calls per limiter in each phase: 20 admitted on the server, ⌊0.5 · 20⌋ = 10 on the
// fallback while it is away, 20 on the restarted server, which came back empty: 50 of 75,
// the bound 2 · Q + ⌊share · Q⌋ for one process, exactly, for each of the four.
fn killed(flavor: Flavor) {
    block(async {
        let mut server = Server::of(flavor);
        let port = server.port();
        let options = Options {
            share: 0.5,
            probe: Duration::from_millis(50),
            ..EVERY_CALL
        };
        let store = server.store(options).await;
        let four = Four::new(&store, 20);
        assert_eq!(four.take("k", 25, Source::Redis).await, [20; 4]);

        server.kill();
        assert_eq!(four.take("k", 25, Source::Local).await, [10; 4]);
        let stats = store.stats();
        assert_eq!((stats.failovers, stats.local), (1, 100), "{stats:?}");

        let deadline = Instant::now() + BOUND;
        let _restarted = loop {
            if let Some(server) = Server::of_on_with(flavor, port, &[]) {
                break server;
            }
            assert!(Instant::now() < deadline, "no server on port {port} again");
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        while store.source() != Source::Redis {
            assert!(Instant::now() < deadline, "not back: {:?}", store.stats());
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(four.take("k", 25, Source::Redis).await, [20; 4]);
        let stats = store.stats();
        assert_eq!((stats.failovers, stats.recoveries), (1, 1), "{stats:?}");
        assert_eq!(
            (stats.redis, stats.local, stats.timeouts),
            (200, 100, 0),
            "{stats:?}"
        );
    });
}

// The scripts read the server's `TIME` (and switch on effects replication where a server
// needs it): the `now` passed is then the fallback's alone, and a key takes exactly its
// quota whatever the caller's clock says.
fn server_clock(flavor: Flavor) {
    block(async {
        let server = Server::of(flavor);
        let store = server
            .store(Options {
                time: Time::Server,
                ..EVERY_CALL
            })
            .await;
        let four = Four::new(&store, 3);
        let mut admitted = [0; 4];
        // Each call at a caller's reading an hour apart, which the server never reads.
        for i in 0..6 {
            let now = NOW + HOUR * i;
            let answers = [
                four.period.take("k", now).await.unwrap().admitted(),
                four.sliding.take("k", now).await.unwrap().admitted(),
                four.bucket.take("k", now, 1.0).await.unwrap().admitted(),
                four.periods.take("k", now, &[1]).await.unwrap().admitted(),
            ];
            for (count, yes) in admitted.iter_mut().zip(answers) {
                *count += u32::from(yes);
            }
        }
        assert_eq!(admitted, [3; 4]);
        let stats = store.stats();
        assert_eq!((stats.redis, stats.failovers), (24, 0), "{stats:?}");
    });
}
