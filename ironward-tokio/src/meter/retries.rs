//! The retrying clients' handles: one [`Retries`] for every edge that retries, HTTP or gRPC,
//! under the same names and labels.

use std::fmt;
use std::marker::PhantomData;
#[cfg(feature = "metrics")]
use std::sync::OnceLock;
use std::time::Duration;

use ironward::grpc::Halt as GrpcStop;
use ironward::http_retry::{Retried, Stop, StopReason};
use ironward::retry::Cause;

#[cfg(doc)]
use super::Decisions;
#[cfg(feature = "metrics")]
use super::{RETRY_ATTEMPTS, RETRY_CALLS, RETRY_WAIT};

/// The reasons a retrying client's calls end for, which [`Retries`] counts them by: the HTTP
/// edges' [`Stop`], gRPC A6's [`ironward::grpc::Halt`] and the core engine's [`Cause`] (the
/// front door's `call::Retry`).
pub trait Stops: Copy + PartialEq + Send + Sync + 'static {
    /// Every stop, in the order their series are registered.
    const ALL: &'static [Self];
    /// Whether the client hedges, so that `kind="hedge"` is one of its series.
    const HEDGES: bool;
    /// The `outcome` label of a call that ended for this stop.
    fn label(self) -> &'static str;
}

impl Stops for Stop {
    const ALL: &'static [Self] = &Stop::ALL;
    const HEDGES: bool = false;

    fn label(self) -> &'static str {
        self.as_str()
    }
}

/// The core retry engine's own stops, as `ironward_tokio::call::Retry` ends for them: each
/// labelled as the HTTP stop it becomes ([`Cause::as_str`](ironward::retry::Cause::as_str)),
/// so one query reads every retrying edge.
impl Stops for Cause {
    const ALL: &'static [Self] = &Cause::ALL;
    const HEDGES: bool = false;

    fn label(self) -> &'static str {
        self.as_str()
    }
}

/// A gRPC stop that means what an HTTP stop means is labelled alike (`not_retryable`,
/// `attempts_exhausted`, `throttled`), taken from the HTTP stop itself so that the two
/// cannot drift apart: one query reads both edges.
impl Stops for GrpcStop {
    const ALL: &'static [Self] = &[
        GrpcStop::NotRetryable,
        GrpcStop::AttemptsSpent,
        GrpcStop::Throttled,
        GrpcStop::Pushback,
        GrpcStop::Committed,
        GrpcStop::Deadline,
    ];
    const HEDGES: bool = true;

    fn label(self) -> &'static str {
        match self {
            GrpcStop::NotRetryable => StopReason::NotRetryable.as_str(),
            GrpcStop::AttemptsSpent => StopReason::AttemptsExhausted.as_str(),
            GrpcStop::Throttled => Stop::Throttled.as_str(),
            GrpcStop::Pushback => "pushback",
            GrpcStop::Committed => "committed",
            GrpcStop::Deadline => "deadline",
        }
    }
}

/// One retrying client's handles: attempts by kind (`first`, `retry`, and for a gRPC client
/// `hedge`, a hedged call's attempts after its first), finished calls by outcome and the
/// waits decided before a retry.
///
/// `S` is what its calls end for: the HTTP edges' [`Stop`] (the default) or gRPC A6's
/// [`ironward::grpc::Halt`]. The outcome label is `success`, or the stop's
/// [`label`](Stops::label), so every edge that retries counts alike.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward::grpc;
/// use ironward::http_retry::Stop;
/// use ironward_tokio::meter::Retries;
///
/// let retries: Retries = Retries::new("payments");
/// retries.attempt(1);
/// retries.wait(Duration::from_millis(100));
/// retries.attempt(2);
/// retries.ended(None);
/// assert_eq!(retries.name(), "payments");
/// assert_eq!(Retries::<Stop>::outcome(Some(Stop::Throttled)), "throttled");
///
/// let grpc = Retries::<grpc::Halt>::new("payments");
/// grpc.hedge();
/// grpc.ended(Some(grpc::Halt::AttemptsSpent));
/// assert_eq!(Retries::outcome(Some(grpc::Halt::AttemptsSpent)), "attempts_exhausted");
/// assert_eq!(Retries::<grpc::Halt>::outcome(None), "success");
/// ```
pub struct Retries<S = Stop> {
    name: &'static str,
    #[cfg(feature = "metrics")]
    handles: OnceLock<Handles>,
    stops: PhantomData<fn(S)>,
}

/// The registered handles of a [`Retries`].
#[cfg(feature = "metrics")]
struct Handles {
    first: metrics::Counter,
    retry: metrics::Counter,
    /// Registered only for a client that hedges.
    hedge: Option<metrics::Counter>,
    /// `success`, then one per stop of [`Stops::ALL`], in that order.
    calls: Box<[metrics::Counter]>,
    wait: metrics::Histogram,
}

impl<S: Stops> Retries<S> {
    /// The handles of the retrying client `name`. Nothing is registered yet.
    pub fn new(name: &'static str) -> Self {
        Self {
            name,
            #[cfg(feature = "metrics")]
            handles: OnceLock::new(),
            stops: PhantomData,
        }
    }

    /// The `outcome` label of a call that ended for `stop`, `success` for `None`.
    pub fn outcome(stop: Option<S>) -> &'static str {
        stop.map_or(Retried::default().outcome(), Stops::label)
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

    /// Counts one hedge: an attempt of a hedged call after its first. Nothing for a client
    /// that does not hedge.
    pub fn hedge(&self) {
        #[cfg(feature = "metrics")]
        if let Some(hedge) = &self.handles().hedge {
            hedge.increment(1);
        }
    }

    /// Records a wait decided before a retry.
    pub fn wait(&self, wait: Duration) {
        #[cfg(feature = "metrics")]
        self.handles().wait.record(wait.as_secs_f64());
        #[cfg(not(feature = "metrics"))]
        let _ = wait;
    }

    /// Counts one finished call: a success for `None`, else under its stop's label.
    pub fn ended(&self, stop: Option<S>) {
        #[cfg(feature = "metrics")]
        {
            let index = match stop {
                None => Some(0),
                Some(stop) => S::ALL.iter().position(|&s| s == stop).map(|i| i + 1),
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
    fn handles(&self) -> &Handles {
        self.handles.get_or_init(|| {
            describe_retries();
            let name = self.name;
            let outcomes = std::iter::once(None).chain(S::ALL.iter().copied().map(Some));
            Handles {
                first: metrics::counter!(RETRY_ATTEMPTS, "name" => name, "kind" => "first"),
                retry: metrics::counter!(RETRY_ATTEMPTS, "name" => name, "kind" => "retry"),
                hedge: S::HEDGES
                    .then(|| metrics::counter!(RETRY_ATTEMPTS, "name" => name, "kind" => "hedge")),
                calls: outcomes
                    .map(|stop| {
                        let outcome = Self::outcome(stop);
                        metrics::counter!(RETRY_CALLS, "name" => name, "outcome" => outcome)
                    })
                    .collect(),
                wait: metrics::histogram!(RETRY_WAIT, "name" => name),
            }
        })
    }
}

impl<S> fmt::Debug for Retries<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Retries")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// Describes the three retry metrics.
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
