//! The retrying clients' handles: [`Retries`] for the HTTP edges, [`GrpcRetries`] for gRPC's,
//! under the same names and labels.

use std::fmt;
#[cfg(feature = "metrics")]
use std::sync::OnceLock;
use std::time::Duration;

use ironward::grpc::Stop as GrpcStop;
use ironward::http_retry::{Retried, Stop, StopReason};

#[cfg(doc)]
use super::Decisions;
#[cfg(feature = "metrics")]
use super::{RETRY_ATTEMPTS, RETRY_CALLS, RETRY_WAIT};

/// One retrying client's handles: attempts by kind, finished calls by outcome and the waits
/// between attempts.
///
/// The outcome labels are the core's ([`Retried::outcome`]): `success`, or the label of the
/// `Stop` that ended the call, so every edge that retries
/// counts alike.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward::http_retry::Retried;
/// use ironward_tokio::meter::Retries;
///
/// let retries = Retries::new("payments");
/// retries.attempt(1);
/// retries.wait(Duration::from_millis(100));
/// retries.attempt(2);
/// retries.ended(&Retried::default());
/// assert_eq!(retries.name(), "payments");
/// ```
pub struct Retries {
    name: &'static str,
    #[cfg(feature = "metrics")]
    handles: OnceLock<RetryHandles>,
}

/// The registered handles of a [`Retries`].
#[cfg(feature = "metrics")]
struct RetryHandles {
    first: metrics::Counter,
    retry: metrics::Counter,
    /// `success`, then one per [`Stop::ALL`], in that order.
    calls: [metrics::Counter; 1 + Stop::ALL.len()],
    wait: metrics::Histogram,
}

impl Retries {
    /// The handles of the retrying client `name`. Nothing is registered yet.
    pub fn new(name: &'static str) -> Self {
        Self {
            name,
            #[cfg(feature = "metrics")]
            handles: OnceLock::new(),
        }
    }

    /// Registers the handles now, if they are not yet; see [`Decisions::register`].
    pub fn register(&self) {
        #[cfg(feature = "metrics")]
        self.handles();
    }

    /// The `name` label.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Counts the attempt numbered `number` (1 for the first), as the run counted it.
    pub fn attempt(&self, number: u32) {
        #[cfg(feature = "metrics")]
        match number {
            1 => self.handles().first.increment(1),
            _ => self.handles().retry.increment(1),
        }
        #[cfg(not(feature = "metrics"))]
        let _ = number;
    }

    /// Records a wait decided before a retry.
    pub fn wait(&self, wait: Duration) {
        #[cfg(feature = "metrics")]
        self.handles().wait.record(wait.as_secs_f64());
        #[cfg(not(feature = "metrics"))]
        let _ = wait;
    }

    /// Counts one finished call under its outcome.
    pub fn ended(&self, retried: &Retried) {
        #[cfg(feature = "metrics")]
        {
            let index = match retried.stop {
                None => Some(0),
                Some(stop) => Stop::ALL.iter().position(|&s| s == stop).map(|i| i + 1),
            };
            if let Some(counter) = index.and_then(|i| self.handles().calls.get(i)) {
                counter.increment(1);
            }
        }
        #[cfg(not(feature = "metrics"))]
        let _ = retried;
    }

    /// The handles, registered on first use.
    #[cfg(feature = "metrics")]
    fn handles(&self) -> &RetryHandles {
        self.handles.get_or_init(|| {
            describe_retries();
            let name = self.name;
            let outcome = |i: usize| match i.checked_sub(1) {
                None => Retried::default().outcome(),
                Some(stop) => Stop::ALL[stop].as_str(),
            };
            RetryHandles {
                first: metrics::counter!(RETRY_ATTEMPTS, "name" => name, "kind" => "first"),
                retry: metrics::counter!(RETRY_ATTEMPTS, "name" => name, "kind" => "retry"),
                calls: std::array::from_fn(
                    |i| metrics::counter!(RETRY_CALLS, "name" => name, "outcome" => outcome(i)),
                ),
                wait: metrics::histogram!(RETRY_WAIT, "name" => name),
            }
        })
    }
}

impl fmt::Debug for Retries {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Retries")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// Describes the three retry metrics, for [`Retries`] and [`GrpcRetries`] alike.
#[cfg(feature = "metrics")]
fn describe_retries() {
    metrics::describe_counter!(
        RETRY_ATTEMPTS,
        metrics::Unit::Count,
        "Attempts a retrying client sent, the first and each retry ({attempt})"
    );
    metrics::describe_counter!(
        RETRY_CALLS,
        metrics::Unit::Count,
        "Calls a retrying client finished, by how they ended ({call})"
    );
    metrics::describe_histogram!(
        RETRY_WAIT,
        metrics::Unit::Seconds,
        "Waits a retrying client decided before a retry (s)"
    );
}

/// Every gRPC stop, in the order [`GrpcRetries`] registers their series.
#[cfg(feature = "metrics")]
const GRPC_STOPS: [GrpcStop; 6] = [
    GrpcStop::NotRetryable,
    GrpcStop::AttemptsSpent,
    GrpcStop::Throttled,
    GrpcStop::Pushback,
    GrpcStop::Committed,
    GrpcStop::Deadline,
];

/// One gRPC retrying or hedging client's handles, under [`Retries`]' names and labels:
/// attempts by kind (`first`, `retry`, or `hedge` for a hedged call's attempts after its
/// first), finished calls by outcome, and the waits decided before a retry.
///
/// The outcome of a call is `success`, or the label [`outcome`](Self::outcome) gives the
/// gRPC A6 [`Stop`](ironward::grpc::Stop) that ended it; a stop that means what an HTTP
/// stop means is labelled alike (`not_retryable`, `attempts_exhausted`, `throttled`), so one
/// query reads the HTTP and the gRPC edges.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward::grpc::Stop;
/// use ironward_tokio::meter::GrpcRetries;
///
/// let retries = GrpcRetries::new("payments");
/// retries.attempt(1);
/// retries.wait(Duration::from_millis(100));
/// retries.attempt(2);
/// retries.ended(Some(Stop::AttemptsSpent));
/// assert_eq!(GrpcRetries::outcome(Some(Stop::AttemptsSpent)), "attempts_exhausted");
/// assert_eq!(GrpcRetries::outcome(None), "success");
/// assert_eq!(retries.name(), "payments");
/// ```
pub struct GrpcRetries {
    name: &'static str,
    #[cfg(feature = "metrics")]
    handles: OnceLock<GrpcRetryHandles>,
}

/// The registered handles of a [`GrpcRetries`].
#[cfg(feature = "metrics")]
struct GrpcRetryHandles {
    first: metrics::Counter,
    retry: metrics::Counter,
    hedge: metrics::Counter,
    /// `success`, then one per [`GRPC_STOPS`], in that order.
    calls: [metrics::Counter; 1 + GRPC_STOPS.len()],
    wait: metrics::Histogram,
}

impl GrpcRetries {
    /// The handles of the gRPC client `name`. Nothing is registered yet.
    pub fn new(name: &'static str) -> Self {
        Self {
            name,
            #[cfg(feature = "metrics")]
            handles: OnceLock::new(),
        }
    }

    /// The `outcome` label of a call that ended for `stop`, `success` for `None`:
    /// `not_retryable`, `attempts_exhausted`, `throttled`, `pushback`, `committed` or
    /// `deadline`. A label both edges count under is the HTTP edge's own, taken from
    /// [`Retried::outcome`] and [`Stop::as_str`], so
    /// that the two cannot drift apart.
    pub fn outcome(stop: Option<GrpcStop>) -> &'static str {
        match stop {
            None => Retried::default().outcome(),
            Some(GrpcStop::NotRetryable) => StopReason::NotRetryable.as_str(),
            Some(GrpcStop::AttemptsSpent) => StopReason::AttemptsExhausted.as_str(),
            Some(GrpcStop::Throttled) => Stop::Throttled.as_str(),
            Some(GrpcStop::Pushback) => "pushback",
            Some(GrpcStop::Committed) => "committed",
            Some(GrpcStop::Deadline) => "deadline",
        }
    }

    /// Registers the handles now, if they are not yet; see [`Decisions::register`].
    pub fn register(&self) {
        #[cfg(feature = "metrics")]
        self.handles();
    }

    /// The `name` label.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Counts the attempt numbered `number` of a retried call (1 for the first).
    pub fn attempt(&self, number: u32) {
        #[cfg(feature = "metrics")]
        match number {
            1 => self.handles().first.increment(1),
            _ => self.handles().retry.increment(1),
        }
        #[cfg(not(feature = "metrics"))]
        let _ = number;
    }

    /// Counts one hedge: an attempt of a hedged call after its first.
    pub fn hedge(&self) {
        #[cfg(feature = "metrics")]
        self.handles().hedge.increment(1);
    }

    /// Records a wait decided before a retry.
    pub fn wait(&self, wait: Duration) {
        #[cfg(feature = "metrics")]
        self.handles().wait.record(wait.as_secs_f64());
        #[cfg(not(feature = "metrics"))]
        let _ = wait;
    }

    /// Counts one finished call: a success for `None`, else under its stop's label.
    pub fn ended(&self, stop: Option<GrpcStop>) {
        #[cfg(feature = "metrics")]
        {
            let index = match stop {
                None => Some(0),
                Some(stop) => GRPC_STOPS.iter().position(|&s| s == stop).map(|i| i + 1),
            };
            if let Some(counter) = index.and_then(|i| self.handles().calls.get(i)) {
                counter.increment(1);
            }
        }
        #[cfg(not(feature = "metrics"))]
        let _ = stop;
    }

    /// The handles, registered on first use.
    #[cfg(feature = "metrics")]
    fn handles(&self) -> &GrpcRetryHandles {
        self.handles.get_or_init(|| {
            describe_retries();
            let name = self.name;
            let outcome = |i: usize| match i.checked_sub(1) {
                None => Self::outcome(None),
                Some(stop) => Self::outcome(Some(GRPC_STOPS[stop])),
            };
            GrpcRetryHandles {
                first: metrics::counter!(RETRY_ATTEMPTS, "name" => name, "kind" => "first"),
                retry: metrics::counter!(RETRY_ATTEMPTS, "name" => name, "kind" => "retry"),
                hedge: metrics::counter!(RETRY_ATTEMPTS, "name" => name, "kind" => "hedge"),
                calls: std::array::from_fn(
                    |i| metrics::counter!(RETRY_CALLS, "name" => name, "outcome" => outcome(i)),
                ),
                wait: metrics::histogram!(RETRY_WAIT, "name" => name),
            }
        })
    }
}

impl fmt::Debug for GrpcRetries {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GrpcRetries")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}
