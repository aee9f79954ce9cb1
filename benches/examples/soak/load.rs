//! The soak's clients: reqwest behind `ironward-reqwest`'s retry middleware, one shared retry
//! budget, an open-loop schedule, and tallies kept in atomics (nothing kept per request, so
//! that the clients' own memory stays flat however long the run).
//!
//! The schedule is the benches' open loop (`benches/benches/e2e/load.rs`): each client's
//! `n`-th call is due at `first + n · interval` and leaves at its time whether or not the ones
//! before have returned, each in a task of its own, so a slow server meets the same offered
//! load rather than a politely slower one. Each client sends from an address of its own
//! (127.0.0.2, 127.0.0.3, ...), a peer of its own to the server's quota by peer.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use http::Extensions;
use ironward::SharedBudget;
use ironward::http_retry::Settings;
use ironward_reqwest::{Retried, RetryMiddleware};
use ironward_tower::chaos::CHAOS_HEADER;
use reqwest_middleware::{ClientBuilder, ClientWithMiddleware, Middleware, Next};
use tokio::time::Instant;

/// The name the retry middleware reports under.
pub(crate) const RETRY_NAME: &str = "soak";

/// Status codes tallied one by one; any other lands in the last slot.
const STATUSES: usize = 600;

/// The retry settings every client shares: the core's defaults (3 retries, 200 ms doubling)
/// within a 10 s time budget, so that a call ends well inside the drain's wait.
pub(crate) fn settings() -> Settings {
    Settings {
        total_budget: Duration::from_secs(10),
        ..Settings::default()
    }
}

/// A count for each status code.
pub(crate) struct ByStatus(Box<[AtomicU64]>);

impl ByStatus {
    fn new() -> Self {
        Self((0..=STATUSES).map(|_| AtomicU64::new(0)).collect())
    }

    fn add(&self, status: u16) {
        let slot = usize::from(status).min(STATUSES);
        self.0[slot].fetch_add(1, Ordering::Relaxed);
    }

    /// The count of `status`.
    pub(crate) fn get(&self, status: u16) -> u64 {
        self.0[usize::from(status).min(STATUSES)].load(Ordering::Relaxed)
    }

    /// Every count.
    pub(crate) fn total(&self) -> u64 {
        self.0.iter().map(|n| n.load(Ordering::Relaxed)).sum()
    }

    /// The statuses seen, with their counts, as `200=123 503=4`.
    pub(crate) fn line(&self) -> String {
        let mut out = String::new();
        for (status, count) in self.0.iter().enumerate() {
            let count = count.load(Ordering::Relaxed);
            if count > 0 {
                if !out.is_empty() {
                    out.push(' ');
                }
                out.push_str(&format!("{status}={count}"));
            }
        }
        if out.is_empty() { "-".into() } else { out }
    }
}

/// What the clients saw, added up across all of them.
pub(crate) struct Tally {
    /// Calls started.
    pub(crate) sent: AtomicU64,
    /// Calls finished, with a response or without.
    pub(crate) done: AtomicU64,
    /// Each call's final response, by status.
    pub(crate) calls: ByStatus,
    /// Calls that ended without a response (a transport failure or the budget).
    pub(crate) failed: AtomicU64,
    /// Every attempt on the wire, by status: what the server answered, one by one.
    pub(crate) attempts: ByStatus,
    /// Attempts that got no response.
    pub(crate) attempt_errors: AtomicU64,
    /// Attempts answered with the chaos header `error`, `replace` (the rest of the header's
    /// values are never answered with).
    pub(crate) chaos_error: AtomicU64,
    pub(crate) chaos_replace: AtomicU64,
    /// Retries, added up from every call's `Retried` record.
    pub(crate) retries: AtomicU64,
    /// Attempts, added up from every call's `Retried` record.
    pub(crate) recorded_attempts: AtomicU64,
    /// Calls whose record says they went past the retry settings: more attempts than allowed,
    /// or more waited than the time budget.
    pub(crate) over_budget: AtomicU64,
    /// Calls stopped by the shared retry budget (`Stop::Throttled`).
    pub(crate) throttled: AtomicU64,
    /// Calls with no `Retried` record at all (the middleware always leaves one).
    pub(crate) unrecorded: AtomicU64,
}

impl Tally {
    pub(crate) fn new() -> Self {
        Self {
            sent: AtomicU64::new(0),
            done: AtomicU64::new(0),
            calls: ByStatus::new(),
            failed: AtomicU64::new(0),
            attempts: ByStatus::new(),
            attempt_errors: AtomicU64::new(0),
            chaos_error: AtomicU64::new(0),
            chaos_replace: AtomicU64::new(0),
            retries: AtomicU64::new(0),
            recorded_attempts: AtomicU64::new(0),
            over_budget: AtomicU64::new(0),
            throttled: AtomicU64::new(0),
            unrecorded: AtomicU64::new(0),
        }
    }

    /// Calls started and not yet finished.
    pub(crate) fn in_flight(&self) -> u64 {
        let done = self.done.load(Ordering::SeqCst);
        self.sent.load(Ordering::SeqCst).saturating_sub(done)
    }

    /// Books one call's `Retried` record, checked against `settings`.
    fn record(&self, retried: Option<&Retried>, settings: &Settings) {
        let Some(retried) = retried else {
            self.unrecorded.fetch_add(1, Ordering::Relaxed);
            return;
        };
        self.retries
            .fetch_add(u64::from(retried.retries()), Ordering::Relaxed);
        self.recorded_attempts
            .fetch_add(u64::from(retried.attempts), Ordering::Relaxed);
        if retried.retries() > settings.max_retries || retried.waited > settings.total_budget {
            self.over_budget.fetch_add(1, Ordering::Relaxed);
        }
        if retried.outcome() == "throttled" {
            self.throttled.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Below the retry middleware: tallies every attempt as it comes back, so that the clients'
/// view of the wire can be held against the server's counters attempt for attempt.
struct Wire(Arc<Tally>);

#[async_trait::async_trait]
impl Middleware for Wire {
    async fn handle(
        &self,
        req: reqwest::Request,
        extensions: &mut Extensions,
        next: Next<'_>,
    ) -> reqwest_middleware::Result<reqwest::Response> {
        let result = next.run(req, extensions).await;
        match &result {
            Ok(response) => {
                self.0.attempts.add(response.status().as_u16());
                match response.headers().get(CHAOS_HEADER).map(|v| v.as_bytes()) {
                    Some(b"error") => self.0.chaos_error.fetch_add(1, Ordering::Relaxed),
                    Some(b"replace") => self.0.chaos_replace.fetch_add(1, Ordering::Relaxed),
                    _ => 0,
                };
            }
            Err(_) => {
                self.0.attempt_errors.fetch_add(1, Ordering::Relaxed);
            }
        }
        result
    }
}

/// The load: where, how many clients, how fast, how long.
pub(crate) struct Plan {
    pub(crate) target: SocketAddr,
    pub(crate) clients: u32,
    /// Calls a second, all clients together.
    pub(crate) rate: f64,
    pub(crate) run: Duration,
}

/// One client: reqwest from `from`, the retry middleware over the shared `budget`, and the
/// wire tally below it.
fn client(
    from: IpAddr,
    budget: &Arc<SharedBudget>,
    tally: &Arc<Tally>,
) -> Result<ClientWithMiddleware, reqwest::Error> {
    let inner = reqwest::Client::builder()
        .local_address(from)
        // Longer than any attempt the server lets run (its deadline), so that every attempt
        // is answered by the server, never cut by the client.
        .timeout(Duration::from_secs(30))
        .build()?;
    let retry = RetryMiddleware::new(settings())
        .with_budget(Arc::clone(budget))
        .with_name(RETRY_NAME);
    Ok(ClientBuilder::new(inner)
        .with(retry)
        .with(Wire(Arc::clone(tally)))
        .build())
}

/// Runs `plan` to its end: every call is due before `plan.run` is over; those still in flight
/// then are the caller's to wait for ([`Tally::in_flight`]).
pub(crate) async fn run(
    plan: &Plan,
    budget: &Arc<SharedBudget>,
    tally: &Arc<Tally>,
) -> Result<(), reqwest::Error> {
    let url = format!("http://{}/hello", plan.target);
    let per_client = plan.rate / f64::from(plan.clients);
    let interval = Duration::from_secs_f64(1.0 / per_client);
    let start = Instant::now() + Duration::from_millis(20);
    let end = start + plan.run;
    let mut offered = tokio::task::JoinSet::new();
    for i in 0..plan.clients {
        // 127.0.0.2 and up: 127.0.0.1 is the server's.
        let from = IpAddr::V4(Ipv4Addr::from(u32::from(Ipv4Addr::LOCALHOST) + 1 + i));
        let client = client(from, budget, tally)?;
        // Spread the clients over one interval rather than send all of them at once.
        let first = start + interval.mul_f64(f64::from(i) / f64::from(plan.clients));
        let (url, tally) = (url.clone(), Arc::clone(tally));
        offered.spawn(offer(client, url, tally, first, interval, end));
    }
    while let Some(finished) = offered.join_next().await {
        finished.expect("a client's schedule");
    }
    Ok(())
}

/// One client's calls, one at each due time from `first` on before `end`, each in a task of
/// its own.
async fn offer(
    client: ClientWithMiddleware,
    url: String,
    tally: Arc<Tally>,
    first: Instant,
    interval: Duration,
    end: Instant,
) {
    let settings = settings();
    for n in 0u32.. {
        let due = first + interval * n;
        if due >= end {
            break;
        }
        if due > Instant::now() {
            tokio::time::sleep_until(due).await;
        }
        let (client, url, tally) = (client.clone(), url.clone(), Arc::clone(&tally));
        tally.sent.fetch_add(1, Ordering::SeqCst);
        tokio::spawn(async move {
            match client.get(&url).send().await {
                Ok(response) => {
                    tally.calls.add(response.status().as_u16());
                    tally.record(response.extensions().get::<Retried>(), &settings);
                    // Read to the end, so that the connection goes back to the pool.
                    let _ = response.bytes().await;
                }
                Err(err) => {
                    tally.failed.fetch_add(1, Ordering::Relaxed);
                    let gave_up = ironward_reqwest::gave_up(&err);
                    tally.record(gave_up.map(|g| g.retried()).as_ref(), &settings);
                }
            }
            tally.done.fetch_add(1, Ordering::SeqCst);
        });
    }
}
