//! What a run's outcomes add up to: rates, percentiles, counts and the quota's promise; the
//! rounds of a variant combined; and the JSON `scripts/bench` renders.
//!
//! A variant's rounds combine as counts summed (the promise too, so that the share of it
//! admitted is over every round) and rates and percentiles as their median over the rounds:
//! on this shared machine a burst of load from elsewhere starves the generator now and then,
//! and the median keeps one starved round from standing for the variant, where pooling the
//! rounds' latencies would hand it the 99th percentile.

use std::cmp::Ordering;
use std::io;
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::load::Outcome;

/// A per-peer quota, as both limiters are configured with it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Quota {
    /// A second, per peer.
    pub(crate) rate: f64,
    /// Admitted at once from a fresh peer.
    pub(crate) burst: u32,
}

impl Quota {
    /// The most a peer may be admitted over `span` from its first request:
    /// `burst + ⌊rate · span⌋` (see the target's documentation).
    pub(crate) fn promise(self, span: Duration) -> u64 {
        // Far below 2^53: the product is exact enough, and the cast a plain floor.
        u64::from(self.burst) + (self.rate * span.as_secs_f64()).floor() as u64
    }

    /// The promise summed over the peers, each over its own `spans` entry (a peer with
    /// `None`, none of whose requests arrived, was promised nothing it could take).
    pub(crate) fn promised(self, spans: &[Option<Duration>]) -> u64 {
        spans.iter().flatten().map(|&span| self.promise(span)).sum()
    }
}

/// One variant's run, summed up.
#[derive(Clone, Debug)]
pub(crate) struct Summary {
    pub(crate) name: &'static str,
    /// Requests sent.
    pub(crate) sent: usize,
    /// Requests answered, whatever the status.
    pub(crate) completed: usize,
    /// Answered `200`.
    pub(crate) admitted: usize,
    /// Answered `429`.
    pub(crate) refused: usize,
    /// Answered another status, failed or timed out.
    pub(crate) other: usize,
    /// Sent a second over the run's schedule: the offered load as it was kept.
    pub(crate) offered_rps: f64,
    /// Answered a second, from the run's start to its last response.
    pub(crate) completed_rps: f64,
    /// Percentiles of every answered request's latency.
    pub(crate) p50: Duration,
    pub(crate) p99: Duration,
    /// The 99th percentile of how late a request's task started against its due time.
    pub(crate) lag_p99: Duration,
    /// The server's threads' CPU time per request served, where the system tells it.
    pub(crate) server_cpu: Option<Duration>,
    /// The quota's promise summed over the peers: `None` without a limiter.
    pub(crate) promise: Option<u64>,
}

impl Summary {
    /// `admitted` as a percentage of the promise.
    pub(crate) fn of_promise(&self) -> Option<f64> {
        self.promise
            .map(|promise| 100.0 * self.admitted as f64 / promise as f64)
    }

    /// One line for the terminal.
    pub(crate) fn line(&self) -> String {
        let promise = match (self.promise, self.of_promise()) {
            (Some(promise), Some(share)) => format!(", promise {promise} ({share:.2} %)"),
            _ => String::new(),
        };
        let cpu = self.server_cpu.map_or(0.0, micros);
        format!(
            "e2e/{:<15} {:>5.0} req/s offered {:>5.0} completed  p50 {:>6.0} µs  p99 {:>7.0} µs  \
             lag p99 {:>6.0} µs  server {cpu:.1} µs CPU/req  200: {}  429: {}  other: {}{promise}",
            self.name,
            self.offered_rps,
            self.completed_rps,
            micros(self.p50),
            micros(self.p99),
            micros(self.lag_p99),
            self.admitted,
            self.refused,
            self.other,
        )
    }

    fn to_json(&self) -> Value {
        json!({
            "name": self.name,
            "sent": self.sent,
            "completed": self.completed,
            "admitted": self.admitted,
            "refused": self.refused,
            "other": self.other,
            "offered_rps": self.offered_rps,
            "completed_rps": self.completed_rps,
            "p50_us": micros(self.p50),
            "p99_us": micros(self.p99),
            "lag_p99_us": micros(self.lag_p99),
            "server_cpu_us_per_request": self.server_cpu.map(micros),
            "promise": self.promise,
            "admitted_of_promise_pct": self.of_promise(),
        })
    }
}

fn micros(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}

/// The `p`-th quantile (0 < p ≤ 1) of `sorted` by nearest rank; zero when it is empty.
fn quantile(sorted: &[Duration], p: f64) -> Duration {
    let rank = (p * sorted.len() as f64).ceil() as usize;
    sorted
        .get(rank.saturating_sub(1))
        .copied()
        .unwrap_or_default()
}

/// Sums up a variant's `outcomes`, beside the quota's `promise` (`None` without a limiter)
/// and the server's CPU time per request, both measured on the server's side.
pub(crate) fn summarize(
    name: &'static str,
    outcomes: &[Outcome],
    promise: Option<u64>,
    server_cpu: Option<Duration>,
) -> Summary {
    let answered: Vec<&Outcome> = outcomes.iter().filter(|o| o.status.is_some()).collect();
    let count = |status: u16| outcomes.iter().filter(|o| o.status == Some(status)).count();
    let (admitted, refused) = (count(200), count(429));
    let mut latencies: Vec<Duration> = answered.iter().map(|o| o.latency).collect();
    latencies.sort_unstable();
    let mut lags: Vec<Duration> = outcomes.iter().map(|o| o.lag).collect();
    lags.sort_unstable();
    let first = outcomes.iter().map(|o| o.sent).min().unwrap_or_default();
    let last_sent = outcomes.iter().map(|o| o.sent).max().unwrap_or_default();
    let last_answer = answered
        .iter()
        .map(|o| o.sent + o.latency)
        .max()
        .unwrap_or_default();
    let per_second = |n: usize, over: Duration| {
        if over.is_zero() {
            0.0
        } else {
            n as f64 / over.as_secs_f64()
        }
    };
    Summary {
        name,
        sent: outcomes.len(),
        completed: answered.len(),
        admitted,
        refused,
        other: outcomes.len() - admitted - refused,
        offered_rps: per_second(outcomes.len(), last_sent - first),
        completed_rps: per_second(answered.len(), last_answer),
        p50: quantile(&latencies, 0.50),
        p99: quantile(&latencies, 0.99),
        lag_p99: quantile(&lags, 0.99),
        server_cpu,
        promise,
    }
}

/// A variant's rounds, and their medians and sums.
#[derive(Clone, Debug)]
pub(crate) struct Combined {
    /// Counts and the promise summed over the rounds; rates and percentiles their medians.
    pub(crate) median: Summary,
    pub(crate) rounds: Vec<Summary>,
}

impl Combined {
    /// Combines `rounds`, at least one, all of one variant.
    pub(crate) fn new(rounds: Vec<Summary>) -> Self {
        let first = rounds.first().expect("at least one round");
        let sum = |count: fn(&Summary) -> usize| rounds.iter().map(count).sum();
        let rate = |of: fn(&Summary) -> f64| median(rounds.iter().map(of));
        let time = |of: fn(&Summary) -> Duration| median(rounds.iter().map(of));
        let median = Summary {
            name: first.name,
            sent: sum(|s| s.sent),
            completed: sum(|s| s.completed),
            admitted: sum(|s| s.admitted),
            refused: sum(|s| s.refused),
            other: sum(|s| s.other),
            offered_rps: rate(|s| s.offered_rps),
            completed_rps: rate(|s| s.completed_rps),
            p50: time(|s| s.p50),
            p99: time(|s| s.p99),
            lag_p99: time(|s| s.lag_p99),
            server_cpu: rounds
                .iter()
                .map(|s| s.server_cpu)
                .collect::<Option<Vec<_>>>()
                .map(|cpu| median(cpu.into_iter())),
            promise: rounds.iter().map(|s| s.promise).sum(),
        };
        Self { median, rounds }
    }

    fn to_json(&self) -> Value {
        let mut value = self.median.to_json();
        value["rounds"] = self.rounds.iter().map(Summary::to_json).collect();
        value
    }
}

/// The middle of `values` (the upper of the two middle ones of an even count), which are
/// never NaN.
fn median<T: PartialOrd + Copy>(values: impl Iterator<Item = T>) -> T {
    let mut sorted: Vec<T> = values.collect();
    sorted.sort_by(|a, b| a.partial_cmp(b).unwrap_or(Ordering::Equal));
    sorted[sorted.len() / 2]
}

/// How a run was set up, written beside its summaries.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Setup {
    pub(crate) clients: u32,
    pub(crate) offered: f64,
    pub(crate) rate: f64,
    pub(crate) burst: u32,
    pub(crate) rounds: usize,
    pub(crate) run: Duration,
    pub(crate) cores: usize,
}

/// Writes `setup` and `summaries` to `path` as JSON, its directory made if need be.
pub(crate) fn write(path: &Path, setup: &Setup, summaries: &[Combined]) -> io::Result<()> {
    let document = json!({
        "clients": setup.clients,
        "offered_per_client": setup.offered,
        "quota_rate": setup.rate,
        "quota_burst": setup.burst,
        "rounds": setup.rounds,
        "run_seconds": setup.run.as_secs_f64(),
        "cores": setup.cores,
        "variants": summaries.iter().map(Combined::to_json).collect::<Vec<_>>(),
    });
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let text = serde_json::to_string_pretty(&document).map_err(io::Error::other)?;
    std::fs::write(path, text + "\n")
}
