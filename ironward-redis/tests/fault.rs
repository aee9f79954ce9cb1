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

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use ironward_redis::{Mode, Options, Period};

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
    /// Calls that had no answer ([`ironward_redis::Error`]): refusals.
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
                                let slot = match (answer.mode, phase) {
                                    (Mode::Local, _) => 1,
                                    // The server killed, or about to be.
                                    (Mode::Redis, 0 | 1) => 0,
                                    (Mode::Redis, _) => {
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
    assert_eq!(store.mode(), Mode::Redis);

    // Killed mid-load: the fallback takes over and spends its share.
    *PHASE.lock().unwrap() = 1;
    server.kill();
    wait_for("the fallback's share spent", &tally, |t| t.refused[1] > 0).await;
    assert_eq!(store.mode(), Mode::Local);
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
    assert_eq!(store.mode(), Mode::Redis);
}
