//! A real redis-server that keeps accepting connections but fails every command on them, in
//! front of a deadpool-redis pool of 8 with the ward under load, and the same beside it
//! without the ward (the control), on a server of its own at the same time.
//!
//! The fault: after a healthy warm-up, `CONFIG SET requirepass` and `CLIENT KILL TYPE
//! normal` from an admin connection (which the password change leaves authenticated and the
//! kill skips). Every connection the pool held is gone, and every new one connects (redis-rs
//! sends no `AUTH` without a password, and ignores the `NOAUTH` of its `CLIENT SETINFO`), but
//! its first command, and deadpool-redis's recycle `PING`, fail with `NOAUTH`. This is the
//! flapping backend the breaker is for: each connect succeeds, so the backoff never starts;
//! each recycle fails, and the ward's breaker is fed by recycles. `CONFIG SET requirepass ""`
//! heals it: the connections made during the fault then serve as they are.
//!
//! The load tells the ward each command's outcome ([`Handle::record`]): a recycle alone
//! fails once per connect, and the connect's own success offsets it, so that with the
//! bucket's 4 connects a second a 2 s window holds about 8 successes against 16 calls, under
//! the 5 calls of protection plus 1.5 × the successes that the breaker needs before it
//! refuses any (run without the commands recorded, it refused none: 24 connects, and all
//! 15 298 refusals the bucket's). With the commands recorded, each connect is one success
//! against three calls.
//!
//! The ward's breaker window is 2 s here instead of the preset's 10 s (a retune through the
//! policy), so that the warm-up's successes leave it within the test's fault of 6 s.
//!
//! What it shows, each counted: the breaker refuses connects; every checkout refused during
//! the fault fails at once with the ward's refusal, not a backend error; the ward's connects
//! during the fault stay within the bucket (burst + rate × fault) and far below the
//! control's; and after the heal the pool serves again within a bound derived from the
//! policy. Every wait is bounded.

use crate::common;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use deadpool::managed::{Manager, PoolError};
use ironward::{Outcome, RECONNECT, Reconnect, Sre, WardPiece};
use ironward_pool::Handle;
use ironward_pool::{WardError, Warded};

use common::drill::{self, Counting, Log};
use common::server::Server;

const SIZE: usize = 8;
const FAULT: Duration = Duration::from_secs(6);
/// The longest the warded run's fault holds while its breaker has refused none.
const LONGEST_FAULT: Duration = Duration::from_secs(30);
const PASSWORD: &str = "flapping";

/// The preset with a breaker window of 2 s (20 buckets of 100 ms).
const POLICY: Reconnect = Reconnect {
    breaker: Sre {
        window: Duration::from_secs(2),
        size: 20,
        ..RECONNECT.breaker
    },
    ..RECONNECT
};

/// How long after the heal the warded pool may take to serve a command again, from the
/// policy: the breaker's hold after a refusal (the backoff's base) and its probe, and one
/// token of the bucket; then tripled, plus 1 s, for a loaded two-core machine.
fn patience() -> Duration {
    let token = Duration::from_secs_f64(1.0 / POLICY.rate);
    (POLICY.backoff.base + POLICY.breaker.probe + token) * 3 + Duration::from_secs(1)
}

/// What one pool saw.
#[derive(Debug, Default)]
struct Report {
    /// Connects the manager was asked for while the fault held, and how long it held.
    connects: usize,
    span: Duration,
    /// How long each checkout refused by the ward during the fault took, sorted.
    refusals: Vec<Duration>,
    /// Of those, the ones the breaker refused.
    by_breaker: u64,
    /// Checkouts during the fault that failed with anything but the ward's refusal.
    failed: u64,
    /// From the heal to the first command served.
    served_after_heal: Option<Duration>,
}

impl Report {
    fn median(&self) -> Duration {
        self.refusals
            .get(self.refusals.len() / 2)
            .copied()
            .unwrap_or_default()
    }

    fn slowest(&self) -> Duration {
        self.refusals.last().copied().unwrap_or_default()
    }
}

/// How a checkout failed: `Some(piece)` for the ward's refusal, `None` for anything else.
type Refused<E> = fn(&PoolError<E>) -> Option<WardPiece>;

fn ward_refusal<E>(err: &PoolError<WardError<E>>) -> Option<WardPiece> {
    match err {
        PoolError::Backend(err) => err.refused().map(|refused| refused.piece()),
        _ => None,
    }
}

fn no_refusal<E>(_: &PoolError<E>) -> Option<WardPiece> {
    None
}

/// An admin connection: made before the fault, so it stays authenticated through it.
async fn admin(server: &Server) -> redis::aio::MultiplexedConnection {
    redis::Client::open(server.url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .expect("an admin connection")
}

async fn run<M>(
    server: &Server,
    manager: M,
    log: Log,
    origin: Instant,
    refused: Refused<M::Error>,
    handle: Option<Handle>,
) -> Report
where
    M: Manager<Type = redis::aio::MultiplexedConnection> + 'static,
    M::Error: Send,
{
    let pool = drill::pool(manager, SIZE);
    let mut admin = admin(server).await;
    let stop = Arc::new(AtomicBool::new(false));
    let fault = Arc::new(AtomicBool::new(false));
    let served = Arc::new(AtomicU64::new(0));
    let refusals = Arc::new(Mutex::new(Vec::new()));
    let by_breaker = Arc::new(AtomicU64::new(0));
    let failed = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    for _ in 0..SIZE {
        let (pool, handle) = (pool.clone(), handle.clone());
        let (stop, fault, served) = (Arc::clone(&stop), Arc::clone(&fault), Arc::clone(&served));
        let (refusals, by_breaker, failed) = (
            Arc::clone(&refusals),
            Arc::clone(&by_breaker),
            Arc::clone(&failed),
        );
        tasks.push(tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let asked = Instant::now();
                match pool.get().await {
                    Ok(mut connection) => {
                        let incr = redis::cmd("INCR")
                            .arg("flapping")
                            .query_async::<i64>(&mut *connection)
                            .await;
                        if incr.is_ok() {
                            served.fetch_add(1, Ordering::Relaxed);
                        }
                        // The command's outcome, which the pool never sees, told to the ward.
                        if let Some(handle) = &handle {
                            handle.record(match incr {
                                Ok(_) => Outcome::Success,
                                Err(_) => Outcome::Failure,
                            });
                        }
                        // Held a while, so that the load needs the whole pool.
                        tokio::time::sleep(Duration::from_millis(10)).await;
                    }
                    Err(err) if fault.load(Ordering::Relaxed) => match refused(&err) {
                        Some(piece) => {
                            refusals.lock().unwrap().push(asked.elapsed());
                            if piece == WardPiece::Breaker {
                                by_breaker.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                        None => {
                            failed.fetch_add(1, Ordering::Relaxed);
                        }
                    },
                    Err(_) => {}
                }
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        }));
    }
    // Warm up: the pool full and serving.
    let full = tokio::time::timeout(Duration::from_secs(10), async {
        while pool.status().size < SIZE || served.load(Ordering::Relaxed) < 100 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    assert!(full.is_ok(), "the pool never filled: {:?}", pool.status());
    tokio::time::sleep(Duration::from_millis(200)).await;

    // The fault: connects succeed, every command on them fails.
    fault.store(true, Ordering::Relaxed);
    let start = origin.elapsed();
    let bound = Duration::from_secs(2);
    tokio::time::timeout(bound, async {
        redis::cmd("CONFIG")
            .arg("SET")
            .arg("requirepass")
            .arg(PASSWORD)
            .exec_async(&mut admin)
            .await
            .expect("requirepass set");
        redis::cmd("CLIENT")
            .arg("KILL")
            .arg("TYPE")
            .arg("normal")
            .exec_async(&mut admin)
            .await
            .expect("the pool's connections killed");
    })
    .await
    .expect("the fault set in time");
    tokio::time::sleep(FAULT).await;
    // On a loaded machine the load may be too thin in `FAULT` for the breaker's window to
    // fill: the fault then holds until the breaker has refused once, within a bound.
    if let Some(handle) = &handle {
        let _ = tokio::time::timeout(LONGEST_FAULT - FAULT, async {
            while handle.counts().refused_by_breaker == 0 {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await;
    }
    let end = origin.elapsed();
    fault.store(false, Ordering::Relaxed);
    let served_before_heal = served.load(Ordering::Relaxed);
    tokio::time::timeout(bound, async {
        redis::cmd("CONFIG")
            .arg("SET")
            .arg("requirepass")
            .arg("")
            .exec_async(&mut admin)
            .await
            .expect("requirepass cleared");
    })
    .await
    .expect("the heal in time");
    let healed = Instant::now();
    let served_after_heal = tokio::time::timeout(patience(), async {
        while served.load(Ordering::Relaxed) == served_before_heal {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        healed.elapsed()
    })
    .await
    .ok();

    stop.store(true, Ordering::Relaxed);
    for task in tasks {
        let _ = tokio::time::timeout(Duration::from_secs(5), task).await;
    }
    let mut refusals = std::mem::take(&mut *refusals.lock().unwrap());
    refusals.sort();
    let connects = log
        .lock()
        .unwrap()
        .iter()
        .filter(|a| a.start >= start && a.start < end)
        .count();
    Report {
        connects,
        span: end - start,
        refusals,
        by_breaker: by_breaker.load(Ordering::Relaxed),
        failed: failed.load(Ordering::Relaxed),
        served_after_heal,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_warded_pool_thins_its_connects_to_a_redis_whose_connections_all_fail() {
    let origin = Instant::now();
    let warded_server = Server::start().expect("a redis-server for the warded pool");
    let control_server = Server::start().expect("a redis-server for the control");

    let (counting, warded_log) = Counting::new(
        deadpool_redis::Manager::new(warded_server.url()).unwrap(),
        origin,
    );
    let warded = Warded::with_policy(counting, POLICY);
    let handle = warded.handle();
    let (control, control_log) = Counting::new(
        deadpool_redis::Manager::new(control_server.url()).unwrap(),
        origin,
    );

    let (ward, bare) = tokio::time::timeout(LONGEST_FAULT + Duration::from_secs(40), async {
        tokio::join!(
            run(
                &warded_server,
                warded,
                warded_log,
                origin,
                ward_refusal,
                Some(handle.clone())
            ),
            run(
                &control_server,
                control,
                control_log,
                origin,
                no_refusal,
                None
            ),
        )
    })
    .await
    .expect("both runs end within their bounds");
    let counts = handle.counts();
    let summary = format!(
        "ward: {} connects during the {:?} fault, {} checkouts refused ({} by the breaker; \
         median {:?}, slowest {:?}), {} failed otherwise, serving {:?} after the heal; \
         control: {} connects during the fault, {} checkouts failed, serving {:?} after the \
         heal; the ward's counts: {counts:?}",
        ward.connects,
        ward.span,
        ward.refusals.len(),
        ward.by_breaker,
        ward.median(),
        ward.slowest(),
        ward.failed,
        ward.served_after_heal,
        bare.connects,
        bare.failed,
        bare.served_after_heal,
    );
    println!("{summary}");

    // The breaker refused: the backoff never does here, since every connect succeeds.
    assert!(counts.refused_by_breaker > 0, "{summary}");
    assert!(ward.by_breaker > 0, "{summary}");

    // Checkouts refused during the fault failed at once with the ward's refusal. A refused
    // checkout costs at most one recycle's round trip on loopback (an idle connection's
    // `PING` failing) and the ward's lock; the bounds leave room for a loaded machine.
    assert!(ward.refusals.len() > 100, "{summary}");
    assert!(ward.median() < Duration::from_millis(1), "{summary}");
    assert!(ward.slowest() < Duration::from_millis(100), "{summary}");
    // The only checkouts that reached a backend error were ones whose connect the ward let
    // through (the first command after it fails in the caller, not in the checkout) or
    // whose recycle failed with no connect asked: none is expected, a few are allowed.
    assert!(
        ward.failed <= ward.connects as u64 + SIZE as u64,
        "{summary}"
    );

    // Connects during the fault: within the bucket, and a small fraction of the control's.
    let bucket_bound = POLICY.burst + POLICY.rate * ward.span.as_secs_f64();
    assert!(
        (ward.connects as f64) <= bucket_bound,
        "{} connects, over the bucket's {bucket_bound}: {summary}",
        ward.connects
    );
    // As rates: the warded fault may have held longer.
    let rate = |report: &Report| report.connects as f64 / report.span.as_secs_f64();
    assert!(
        rate(&ward) * 10.0 <= rate(&bare),
        "the ward made {} connects in its {:?} fault, the control {} in {:?}: {summary}",
        ward.connects,
        ward.span,
        bare.connects,
        bare.span
    );

    // After the heal the pool serves again.
    let back = ward
        .served_after_heal
        .unwrap_or_else(|| panic!("not serving {:?} after the heal: {summary}", patience()));
    assert!(back <= patience(), "{summary}");
    assert!(bare.served_after_heal.is_some(), "{summary}");
}
