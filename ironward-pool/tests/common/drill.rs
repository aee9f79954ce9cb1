//! An outage drill: a deadpool pool of Redis connections under load, its server killed and
//! started again, with every connect the pool made recorded.
//!
//! Shared by the outage test and the example (`#[path]`), so that the figures the example
//! prints are the ones the test asserts on.

#![allow(dead_code, unreachable_pub)]

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use deadpool::Runtime;
use deadpool::managed::{Manager, Metrics, Object, Pool, PoolError, RecycleResult};

use super::server::Server;

/// One connect the pool asked its manager for, in time since the drill began.
#[derive(Debug, Clone, Copy)]
pub struct Attempt {
    pub start: Duration,
    pub end: Duration,
    pub ok: bool,
}

/// Every connect a [`Counting`] manager was asked for.
pub type Log = Arc<Mutex<Vec<Attempt>>>;

/// A manager that records each connect it is asked for, then asks `M`.
pub struct Counting<M> {
    inner: M,
    log: Log,
    origin: Instant,
}

impl<M> Counting<M> {
    /// `inner`, recording into a log of its own in time since `origin`.
    pub fn new(inner: M, origin: Instant) -> (Self, Log) {
        let log = Log::default();
        let counting = Self {
            inner,
            log: Arc::clone(&log),
            origin,
        };
        (counting, log)
    }
}

impl<M: Manager> Manager for Counting<M> {
    type Type = M::Type;
    type Error = M::Error;

    async fn create(&self) -> Result<Self::Type, Self::Error> {
        let start = self.origin.elapsed();
        let result = self.inner.create().await;
        let end = self.origin.elapsed();
        self.log.lock().unwrap().push(Attempt {
            start,
            end,
            ok: result.is_ok(),
        });
        result
    }

    async fn recycle(&self, obj: &mut Self::Type, metrics: &Metrics) -> RecycleResult<Self::Error> {
        self.inner.recycle(obj, metrics).await
    }
}

/// How a drill runs.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// The pool's size, and the number of tasks loading it.
    pub size: usize,
    /// How long the server stays down.
    pub outage: Duration,
    /// How long after the restart the pool may take to be full again before the drill
    /// gives up waiting.
    pub patience: Duration,
}

/// What a drill saw.
#[derive(Debug, Clone)]
pub struct Report {
    /// Every connect the manager was asked for, in order of their start.
    pub attempts: Vec<Attempt>,
    /// When the server was killed and when it was started again, since the drill began.
    pub killed: Duration,
    pub restarted: Duration,
    /// How long after the restart the pool held `size` connections made since it.
    pub back: Option<Duration>,
    /// Whether `size` checkouts held at once each answered a `PING` at the end.
    pub all_usable: bool,
    /// Checkouts during the outage that failed with the ward's refusal, and with anything
    /// else.
    pub refused: u64,
    pub failed: u64,
    /// The slowest and the median of the refused checkouts.
    pub slowest_refusal: Duration,
    pub median_refusal: Duration,
    /// Commands that succeeded, over the whole drill.
    pub served: u64,
}

impl Report {
    /// The connects that started while the server was down.
    pub fn during_outage(&self) -> impl Iterator<Item = &Attempt> {
        self.attempts
            .iter()
            .filter(|a| a.start >= self.killed && a.start < self.restarted)
    }

    /// The most connects that started within any `span`.
    pub fn most_within(&self, span: Duration) -> usize {
        let starts: Vec<Duration> = self.attempts.iter().map(|a| a.start).collect();
        let mut most = 0;
        let mut first = 0;
        for (last, &end) in starts.iter().enumerate() {
            while end - starts[first] >= span {
                first += 1;
            }
            most = most.max(last + 1 - first);
        }
        most
    }

    /// The shortest time from a failed connect's end to the start of the next connect, over
    /// the connects started after a failure with no success between: the backoff's spacing.
    pub fn least_gap_after_failure(&self) -> Option<Duration> {
        let mut least: Option<Duration> = None;
        for attempt in &self.attempts {
            // The latest settle that ended before this connect started.
            let latest = self
                .attempts
                .iter()
                .filter(|other| other.end <= attempt.start)
                .max_by_key(|other| other.end);
            if let Some(failure) = latest.filter(|latest| !latest.ok) {
                let gap = attempt.start - failure.end;
                least = Some(least.map_or(gap, |least| least.min(gap)));
            }
        }
        least
    }
}

/// A deadpool pool of `size` over `manager`, on tokio, whose checkouts, connects and
/// recycles each give up after 2 s: what every drill and fault test loads.
pub fn pool<M: Manager>(manager: M, size: usize) -> Pool<M> {
    Pool::builder(manager)
        .max_size(size)
        .runtime(Runtime::Tokio1)
        .wait_timeout(Some(Duration::from_secs(2)))
        .create_timeout(Some(Duration::from_secs(2)))
        .recycle_timeout(Some(Duration::from_secs(2)))
        .build()
        .expect("a pool with a runtime")
}

/// Runs the drill on `server` with a pool of `manager` (which records into `log`, in time
/// since `origin`); `is_refused` tells a ward's refusal from any other checkout error.
pub async fn run<M>(
    server: &mut Server,
    manager: M,
    log: Log,
    origin: Instant,
    plan: Plan,
    is_refused: fn(&PoolError<M::Error>) -> bool,
) -> Report
where
    M: Manager<Type = redis::aio::MultiplexedConnection> + 'static,
    M::Error: Send,
{
    let pool = pool(manager, plan.size);
    let stop = Arc::new(AtomicBool::new(false));
    let outage = Arc::new(AtomicBool::new(false));
    let served = Arc::new(AtomicU64::new(0));
    let refusals = Arc::new(Mutex::new(Vec::new()));
    let failed = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    for _ in 0..plan.size {
        let (pool, stop, outage) = (pool.clone(), Arc::clone(&stop), Arc::clone(&outage));
        let (served, refusals, failed) = (
            Arc::clone(&served),
            Arc::clone(&refusals),
            Arc::clone(&failed),
        );
        tasks.push(tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let asked = Instant::now();
                match pool.get().await {
                    Ok(mut connection) => {
                        let incr = redis::cmd("INCR")
                            .arg("drill")
                            .query_async::<i64>(&mut *connection)
                            .await;
                        if incr.is_ok() {
                            served.fetch_add(1, Ordering::Relaxed);
                        }
                        // Held a while, so that the load needs the whole pool.
                        tokio::time::sleep(Duration::from_millis(10)).await;
                    }
                    Err(err) if outage.load(Ordering::Relaxed) => {
                        if is_refused(&err) {
                            refusals.lock().unwrap().push(asked.elapsed());
                        } else {
                            failed.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    Err(_) => {}
                }
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        }));
    }
    // Warm up: the pool full, every connection made.
    let full = tokio::time::timeout(Duration::from_secs(10), async {
        while pool.status().size < plan.size {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    assert!(
        full.is_ok(),
        "the pool never filled before the outage: {:?}",
        pool.status()
    );
    tokio::time::sleep(Duration::from_millis(200)).await;

    outage.store(true, Ordering::Relaxed);
    let killed = origin.elapsed();
    server.kill();
    tokio::time::sleep(plan.outage).await;
    // The restart is when the server is started: no connect can succeed before it.
    let restarted = origin.elapsed();
    outage.store(false, Ordering::Relaxed);
    server
        .restart()
        .expect("redis-server starts again on its port");

    // Back: `size` connections made since the restart.
    let made_since = |log: &Log| {
        log.lock()
            .unwrap()
            .iter()
            .filter(|a| a.ok && a.start >= restarted)
            .count()
    };
    let back = tokio::time::timeout(plan.patience, async {
        loop {
            if made_since(&log) >= plan.size && pool.status().size >= plan.size {
                return origin.elapsed() - restarted;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .ok();

    stop.store(true, Ordering::Relaxed);
    for task in tasks {
        let _ = tokio::time::timeout(Duration::from_secs(5), task).await;
    }
    let all_usable = tokio::time::timeout(Duration::from_secs(10), all_answer(&pool, plan.size))
        .await
        .unwrap_or(false);

    let mut refusals = std::mem::take(&mut *refusals.lock().unwrap());
    refusals.sort();
    let mut attempts = log.lock().unwrap().clone();
    attempts.sort_by_key(|a| a.start);
    Report {
        attempts,
        killed,
        restarted,
        back,
        all_usable,
        refused: refusals.len() as u64,
        failed: failed.load(Ordering::Relaxed),
        slowest_refusal: refusals.last().copied().unwrap_or_default(),
        median_refusal: refusals
            .get(refusals.len() / 2)
            .copied()
            .unwrap_or_default(),
        served: served.load(Ordering::Relaxed),
    }
}

/// Whether `size` checkouts held at once each answer a `PING` (the caller bounds the wait).
async fn all_answer<M>(pool: &Pool<M>, size: usize) -> bool
where
    M: Manager<Type = redis::aio::MultiplexedConnection>,
{
    let mut held: Vec<Object<M>> = Vec::new();
    while held.len() < size {
        // A warded pool may refuse a connect for the bucket's refill: ask again shortly.
        match pool.get().await {
            Ok(connection) => held.push(connection),
            Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    }
    for connection in &mut held {
        let pong = redis::cmd("PING")
            .query_async::<String>(&mut **connection)
            .await;
        if pong.as_deref() != Ok("PONG") {
            return false;
        }
    }
    true
}
