//! Faults of a real `redis-server`, each counting what was admitted against the bound the
//! crate docs state for it:
//!
//! - killed with SIGKILL mid-load and restarted empty (below): `Q + ⌊share · Q⌋ + Q`;
//! - frozen with SIGSTOP, then SIGCONT, and blocked with `DEBUG SLEEP`: a slow Redis, no
//!   failover; a store failing closed admits nothing during the pause, one failing open
//!   ([`OnTimeout::Fallback`](ironward_redis::OnTimeout)) at most its share, and Redis
//!   never more than the quota;
//! - `SCRIPT FLUSH` mid-load: scripts reloaded, exactly the quota, no failover;
//! - twenty distinct keys through a fallback that holds four, during an outage: each held
//!   to its share, the sixteen without room together to one key's share.
//!
//! Failover: `redis-server` killed mid-load, then restarted on the same port.
//!
//! Eight tasks take from one key of a period limiter (quota 200 an hour, fallback share
//! 0.5) without pause. The test kills the server once the quota is spent, waits for the
//! fallback's share to be spent too, restarts the server, and checks:
//!
//! - every call is answered within the timeout (plus scheduling slack), from Redis or the
//!   fallback, and nothing panics;
//! - traffic is back on Redis within a second of the restarted server accepting
//!   connections;
//! - admissions across the outage are exactly the bound the crate docs state: the quota
//!   before the kill (200), the fallback's share during the outage (⌊0.5 · 200⌋ = 100), and
//!   a fresh quota after the restart (200), because a server without persistence comes
//!   back empty. With one process in the fleet that is at most Q + ⌊share · Q⌋ + Q = 500.
//!
//! Every store here sends each call to Redis, a refused one too (`blocked_keys: 0`): a
//! key refused from memory would not notice the fault these tests make.
use crate::common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use ironward_redis::{Options, Period, Source};

use common::Server;

const QUOTA: u32 = 200;
const SHARE: f64 = 0.5;
const TIMEOUT: Duration = Duration::from_millis(250);
/// What a loaded two-core machine may add to a call's time.
const SLACK: Duration = Duration::from_millis(250);
/// The longest any phase may take.
const BOUND: Duration = Duration::from_secs(30);

/// What the load saw, by phase.
#[derive(Debug, Default)]
struct Tally {
    /// Admitted by Redis before the kill, by the fallback, by Redis after the restart.
    admitted: [u32; 3],
    /// Refused (over the quota) in the same phases.
    refused: [u32; 3],
    /// Calls that had no answer ([`ironward_redis::StoreError`]): refusals.
    errors: u32,
    /// The longest a call took.
    slowest: Duration,
    /// When the first answer from the restarted Redis came.
    back: Option<Instant>,
}

/// The phase: 0 before the kill, 1 after it, 2 after the restart.
static PHASE: Mutex<usize> = Mutex::new(0);

fn phase() -> usize {
    *PHASE.lock().unwrap()
}

async fn wait_for(what: &str, tally: &Mutex<Tally>, done: impl Fn(&Tally) -> bool) {
    let deadline = Instant::now() + BOUND;
    while !done(&tally.lock().unwrap()) {
        assert!(
            Instant::now() < deadline,
            "{what}: {:?}",
            tally.lock().unwrap()
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_redis_fails_over_and_traffic_returns_within_a_second_of_the_restart() {
    let mut server = Server::start();
    let port = server.port();
    let store = server
        .store(Options {
            timeout: TIMEOUT,
            share: SHARE,
            blocked_keys: 0,
            ..Options::default()
        })
        .await;
    let limit = Period::new(&store, "fault", QUOTA, Duration::from_secs(3600));

    let tally = Arc::new(Mutex::new(Tally::default()));
    let stop = Arc::new(AtomicBool::new(false));
    let load: Vec<_> = (0..8)
        .map(|_| {
            let (limit, tally, stop) = (limit.clone(), Arc::clone(&tally), Arc::clone(&stop));
            tokio::spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    let phase = phase();
                    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
                    let started = Instant::now();
                    let answer = limit.take("k", now).await;
                    let took = started.elapsed();
                    {
                        let mut tally = tally.lock().unwrap();
                        tally.slowest = tally.slowest.max(took);
                        match answer {
                            Ok(answer) => {
                                // Which store answered, and when, says which count
                                // it belongs to.
                                let slot = match (answer.source, phase) {
                                    (Source::Local, _) => 1,
                                    // The server killed, or about to be.
                                    (Source::Redis, 0 | 1) => 0,
                                    (Source::Redis, _) => {
                                        tally.back.get_or_insert_with(Instant::now);
                                        2
                                    }
                                };
                                if answer.admitted() {
                                    tally.admitted[slot] += 1;
                                } else {
                                    tally.refused[slot] += 1;
                                }
                            }
                            Err(_) => tally.errors += 1,
                        }
                    }
                    tokio::task::yield_now().await;
                }
            })
        })
        .collect();

    // Redis serves the quota, then refuses.
    wait_for("the quota spent on Redis", &tally, |t| t.refused[0] > 0).await;
    assert_eq!(store.source(), Source::Redis);

    // Killed mid-load: the fallback takes over and spends its share.
    *PHASE.lock().unwrap() = 1;
    server.kill();
    wait_for("the fallback's share spent", &tally, |t| t.refused[1] > 0).await;
    assert_eq!(store.source(), Source::Local);
    // Let the outage last a few probe intervals.
    tokio::time::sleep(Duration::from_millis(300)).await;

    // Restarted on the same port, empty: back on Redis within a second.
    *PHASE.lock().unwrap() = 2;
    drop(server);
    let server = (0..50)
        .find_map(|_| {
            Server::start_on(port).or_else(|| {
                std::thread::sleep(Duration::from_millis(100));
                None
            })
        })
        .expect("redis-server restarts on its port");
    let restarted = Instant::now();
    wait_for("traffic back on Redis", &tally, |t| t.back.is_some()).await;
    let back = tally.lock().unwrap().back.unwrap();
    let returned = back.saturating_duration_since(restarted);
    wait_for("the fresh quota spent", &tally, |t| t.refused[2] > 0).await;

    stop.store(true, Ordering::Relaxed);
    for task in load {
        task.await.expect("no call panics");
    }
    drop(server);

    let tally = tally.lock().unwrap();
    let stats = store.stats();
    println!("{tally:?}\n{stats:?}\nback on Redis {returned:?} after the restart");
    assert!(
        returned < Duration::from_secs(1),
        "back on Redis after {returned:?}"
    );
    assert!(
        tally.slowest <= TIMEOUT + SLACK,
        "a call took {:?}",
        tally.slowest
    );
    let share = (f64::from(QUOTA) * SHARE) as u32;
    assert_eq!(tally.admitted, [QUOTA, share, QUOTA]);
    assert!(tally.admitted.iter().sum::<u32>() <= 2 * QUOTA + share);
    assert!(stats.failovers >= 1 && stats.recoveries >= 1, "{stats:?}");
    assert_eq!(store.source(), Source::Redis);
}

/// A server that stops answering for a while, and how.
#[derive(Debug, Clone, Copy)]
enum Pause {
    /// `SIGSTOP`, then `SIGCONT`: the process is frozen, connections stay open.
    Stop,
    /// `DEBUG SLEEP`: the server blocks in its own event loop.
    Sleep,
}

/// What the calls during and after a pause came to, for one store.
#[derive(Debug, Default)]
struct Paused {
    /// Admitted by Redis (before and after the pause) and by the fallback.
    redis: u32,
    local: u32,
    /// Calls refused with `StoreError::Timeout`, and other errors.
    timeouts: u32,
    errors: u32,
}

impl Paused {
    fn count(
        &mut self,
        answer: Result<ironward_redis::Answer<ironward::Usage>, ironward_redis::StoreError>,
    ) {
        match answer {
            Ok(answer) if answer.admitted() => match answer.source {
                Source::Redis => self.redis += 1,
                Source::Local => self.local += 1,
            },
            Ok(_) => {}
            Err(ironward_redis::StoreError::Timeout) => self.timeouts += 1,
            Err(_) => self.errors += 1,
        }
    }
}

/// Takes from one key on two stores, one failing closed on a timeout and one failing open
/// onto a fallback of share 0.5, before, during and after `pause`. The bound the docs
/// state: Redis admits at most the quota (a timed-out call's script may still run when the
/// server wakes, and count an event nobody was admitted for), the failing-open store's
/// fallback at most ⌊0.5 · Q⌋, the failing-closed store nothing during the pause; and no
/// failover, since a slow Redis is not a failed one.
async fn pause_and_count(pause: Pause) {
    use ironward_redis::OnTimeout;
    const Q: u32 = 60;
    /// Calls each store makes during the pause: 2 s of timeouts in all, where the pause
    /// lasts 8 s (a `DEBUG SLEEP` is seen a second after it starts).
    const CALLS: u32 = 4;
    let server = Server::start();
    let closed = server
        .store(Options {
            timeout: TIMEOUT,
            blocked_keys: 0,
            ..Options::default()
        })
        .await;
    let open = server
        .store(Options {
            timeout: TIMEOUT,
            share: SHARE,
            on_timeout: OnTimeout::Fallback,
            blocked_keys: 0,
            ..Options::default()
        })
        .await;
    let name = common::unique("pause");
    let limits =
        [&closed, &open].map(|store| Period::new(store, &name, Q, Duration::from_secs(3600)));
    let mut seen = [Paused::default(), Paused::default()];
    let now = || SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    for _ in 0..10 {
        for (limit, seen) in limits.iter().zip(&mut seen) {
            seen.count(limit.take("k", now()).await);
        }
    }
    let before = [seen[0].redis, seen[1].redis];

    let port = server.port();
    let sleeper = match pause {
        Pause::Stop => {
            server.signal("STOP");
            None
        }
        // On a plain socket: a client's response timeout would give up on the reply.
        Pause::Sleep => Some(tokio::task::spawn_blocking(move || {
            use std::io::{Read, Write};
            let mut socket = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
            socket.write_all(b"DEBUG SLEEP 8\r\n").unwrap();
            let mut reply = [0; 5];
            socket.read_exact(&mut reply).unwrap();
            assert_eq!(&reply, b"+OK\r\n");
        })),
    };
    // Wait until the server is blocked (a PING goes unanswered for a second) before the
    // calls that must wait on it.
    let deadline = Instant::now() + BOUND;
    while tokio::task::spawn_blocking(move || common::ping(port))
        .await
        .unwrap()
    {
        assert!(
            Instant::now() < deadline,
            "{pause:?}: the server never paused"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let during = Instant::now();
    let mut paused = [Paused::default(), Paused::default()];
    for _ in 0..CALLS {
        for (limit, paused) in limits.iter().zip(&mut paused) {
            paused.count(limit.take("k", now()).await);
        }
    }
    let took = during.elapsed();
    match sleeper {
        None => server.signal("CONT"),
        Some(sleeper) => sleeper.await.unwrap(),
    }

    // Awake: Redis answers again, and counts on from what it counted.
    let deadline = Instant::now() + BOUND;
    loop {
        let mut refused = 0;
        for (limit, seen) in limits.iter().zip(&mut seen) {
            let answer = limit.take("k", now()).await;
            if matches!(&answer, Ok(a) if !a.admitted() && a.source == Source::Redis) {
                refused += 1;
            }
            seen.count(answer);
        }
        if refused == 2 {
            break;
        }
        assert!(Instant::now() < deadline, "{pause:?}: {seen:?}");
    }
    println!("{pause:?}: before {before:?}, paused {paused:?} in {took:?}, all {seen:?}");
    // All within the pause (8 s, at least 7 of them left; the calls take 2 s), each
    // refused by the closed store and answered by the open store's fallback, within its
    // share.
    assert!(took < Duration::from_secs(7), "{took:?}");
    assert_eq!(paused[0].timeouts, CALLS, "{paused:?}");
    assert_eq!(paused[0].redis + paused[0].local, 0, "{paused:?}");
    assert_eq!(paused[1].local, CALLS, "{paused:?}");
    assert!(paused[1].local <= (f64::from(Q) * SHARE) as u32);
    assert!(open.stats().timeouts >= u64::from(CALLS));
    // Redis never admitted past the quota, and lost no more than the calls that timed out.
    let redis = seen[0].redis + seen[1].redis;
    let timed_out = closed.stats().timeouts + open.stats().timeouts;
    let timed_out = u32::try_from(timed_out).unwrap();
    assert!(
        redis <= Q && redis + timed_out >= Q,
        "{redis} of {Q}, {timed_out} timed out"
    );
    for store in [&closed, &open] {
        assert_eq!(
            (store.stats().failovers, store.source()),
            (0, Source::Redis)
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigstop_then_sigcont_is_a_slow_redis_refused_or_answered_within_the_share() {
    pause_and_count(Pause::Stop).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn debug_sleep_is_a_slow_redis_refused_or_answered_within_the_share() {
    pause_and_count(Pause::Sleep).await;
}

// `SCRIPT FLUSH` (or a restart) empties Redis's script cache: the next call is answered
// NOSCRIPT, and the store loads the script and sends the call again. Nothing is lost or
// doubled.
#[tokio::test]
async fn script_flush_mid_load_loses_no_count_and_fails_nothing_over() {
    const Q: u32 = 40;
    let server = Server::start();
    let store = server.store(common::EVERY_CALL).await;
    let limit = Period::new(
        &store,
        &common::unique("flush"),
        Q,
        Duration::from_secs(3600),
    );
    let now = || SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    let mut conn = server.conn().await;
    let mut admitted = 0;
    for i in 0..2 * Q {
        if i % 10 == 5 {
            let () = redis::cmd("SCRIPT")
                .arg("FLUSH")
                .query_async(&mut conn)
                .await
                .unwrap();
        }
        let answer = limit.take("k", now()).await.unwrap();
        assert_eq!(answer.source, Source::Redis);
        admitted += u32::from(answer.admitted());
    }
    assert_eq!(admitted, Q);
    let stats = store.stats();
    assert_eq!(
        (stats.redis, stats.failovers, stats.key_errors),
        (u64::from(2 * Q), 0, 0)
    );
}

// A flood of distinct keys during an outage: more keys than the fallback's table holds,
// each taken from far past its share. Each key is held to its share: the keys that found
// room to their own ⌊0.5 · 10⌋ = 5, the rest together to one key's 5, on the overflow.
#[tokio::test]
async fn more_keys_than_the_fallback_holds_during_an_outage_each_keep_the_share() {
    const Q: u32 = 10;
    const KEYS: usize = 4;
    let mut server = Server::start();
    let store = server
        .store(Options {
            share: SHARE,
            local_keys: KEYS,
            blocked_keys: 0,
            ..Options::default()
        })
        .await;
    let limit = ironward_redis::Sliding::new(&store, "flood", Q, Duration::from_secs(3600));
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    assert!(limit.take("warm", now).await.unwrap().admitted());
    server.kill();
    let share = (f64::from(Q) * SHARE) as u32;
    let mut admitted = vec![0u32; 20];
    // Round after round over twenty keys: each cycles out of and back into the table.
    for round in 0..30u64 {
        for (key, admitted) in admitted.iter_mut().enumerate() {
            let at = now + Duration::from_millis(round);
            let answer = limit.take(format!("key-{key}"), at).await.unwrap();
            assert_eq!(answer.source, Source::Local);
            *admitted += u32::from(answer.admitted());
        }
    }
    println!("{admitted:?}");
    assert!(admitted.iter().all(|&n| n <= share), "{admitted:?}");
    // The first four keys found room; the sixteen others shared one key's share.
    assert_eq!(&admitted[..KEYS], [share; KEYS]);
    assert_eq!(admitted[KEYS..].iter().sum::<u32>(), share);
    assert_eq!(store.stats().failovers, 1);
}
