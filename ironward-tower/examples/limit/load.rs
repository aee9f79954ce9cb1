//! The backend and the load of the `limit` example, which the test `limit_http` runs too: a
//! handler that serves at most 200 requests a second however many are in flight, an axum
//! server for it on a free loopback port, and closed-loop connections counting each second.

#![allow(dead_code, unreachable_pub)]

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::http::StatusCode;
use axum::routing::get;
use ironward_tower::{LimiterLayer, ProtectLayer};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// The work of one request: alone, it is answered in 5 ms.
pub const WORK: Duration = Duration::from_millis(5);

/// The most the backend serves: one request's [`WORK`] at a time, 200 a second.
pub const CAPACITY: f64 = 200.0;

/// A router whose `/` sleeps [`WORK`] × the requests in flight at its arrival, itself
/// included: processor sharing on one core, approximated. A request that arrives to `n` in
/// flight waits as long as it would if the `n` kept sharing the core until it finished, so
/// that at any steady concurrency `n` each takes `n × 5 ms` and the backend serves 200 a
/// second; true processor sharing would also slow it for the requests arriving after it.
/// Behind `limiter`, when given, whose refusals are 503s.
pub fn app(limiter: Option<LimiterLayer>) -> Router {
    let flying = Arc::new(AtomicU32::new(0));
    let handler = move || {
        let flying = Arc::clone(&flying);
        async move {
            let n = flying.fetch_add(1, Ordering::Relaxed) + 1;
            tokio::time::sleep(WORK * n).await;
            flying.fetch_sub(1, Ordering::Relaxed);
            "done"
        }
    };
    let app = Router::new().route("/", get(handler));
    match limiter {
        Some(limiter) => app.layer(ProtectLayer::new().limiter(limiter)),
        None => app,
    }
}

/// A server running an app on 127.0.0.1, stopped when dropped.
pub struct Server {
    pub addr: SocketAddr,
    task: JoinHandle<()>,
}

impl Server {
    /// Binds a free loopback port and serves `app` on it.
    pub async fn start(app: Router) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(Self { addr, task })
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// What one second of load saw: the limit read at its end, the answers completed in it.
#[derive(Debug, Clone, Copy)]
pub struct Second {
    pub limit: Option<u32>,
    pub ok: u64,
    pub refused: u64,
    /// Neither a 200 nor a 503: another status, a timeout, a connection error.
    pub failed: u64,
    /// The 99th percentile latency of the second's successes, if it had any.
    pub p99: Option<Duration>,
}

/// The counts of the current second, which the connections add to.
#[derive(Default)]
struct Tally {
    ok: AtomicU64,
    refused: AtomicU64,
    failed: AtomicU64,
    latencies: Mutex<Vec<Duration>>,
}

impl Tally {
    /// The second's counts, starting the next from zero.
    fn take(&self, limit: Option<u32>) -> Second {
        let mut latencies = std::mem::take(&mut *self.latencies.lock().expect("latencies"));
        latencies.sort_unstable();
        let p99 = latencies.get((latencies.len() * 99).div_ceil(100).saturating_sub(1));
        Second {
            limit,
            ok: self.ok.swap(0, Ordering::Relaxed),
            refused: self.refused.swap(0, Ordering::Relaxed),
            failed: self.failed.swap(0, Ordering::Relaxed),
            p99: p99.copied(),
        }
    }
}

/// Runs `connections` closed-loop connections against `addr` for `seconds`: each sends its
/// next request as soon as the last is answered, a refusal included. Calls `each` with every
/// second's counts and `limit()` as the second ends, and returns them all; every request is
/// bounded by a 10 s timeout, and the connections are awaited at most that long after.
pub async fn run(
    addr: SocketAddr,
    connections: usize,
    seconds: u32,
    limit: impl Fn() -> Option<u32>,
    mut each: impl FnMut(&Second),
) -> Vec<Second> {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .connect_timeout(Duration::from_secs(2))
        .build()
        .expect("a client without TLS builds");
    let url = format!("http://{addr}/");
    let tally = Arc::new(Tally::default());
    let start = tokio::time::Instant::now();
    let end = start + Duration::from_secs(seconds.into());
    let mut loops: Vec<_> = (0..connections)
        .map(|_| {
            let (client, url, tally) = (client.clone(), url.clone(), Arc::clone(&tally));
            tokio::spawn(async move {
                while tokio::time::Instant::now() < end {
                    let sent = Instant::now();
                    let status = match client.get(&url).send().await {
                        Ok(response) => {
                            let status = response.status();
                            response.bytes().await.map(|_| status).ok()
                        }
                        Err(_) => None,
                    };
                    match status {
                        Some(StatusCode::OK) => {
                            let took = sent.elapsed();
                            tally.latencies.lock().expect("latencies").push(took);
                            tally.ok.fetch_add(1, Ordering::Relaxed);
                        }
                        Some(StatusCode::SERVICE_UNAVAILABLE) => {
                            tally.refused.fetch_add(1, Ordering::Relaxed);
                        }
                        _ => {
                            tally.failed.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
            })
        })
        .collect();
    let mut seconds_seen = Vec::new();
    for s in 1..=seconds {
        tokio::time::sleep_until(start + Duration::from_secs(s.into())).await;
        let second = tally.take(limit());
        each(&second);
        seconds_seen.push(second);
    }
    let finished = tokio::time::timeout(Duration::from_secs(11), async {
        for connection in &mut loops {
            let _ = connection.await;
        }
    })
    .await;
    if finished.is_err() {
        loops.iter().for_each(JoinHandle::abort);
    }
    seconds_seen
}
