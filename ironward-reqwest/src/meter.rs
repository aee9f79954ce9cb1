//! What the middleware and the breaker report through the `metrics` facade: the handles,
//! registered once when each is made (or renamed), so that an attempt or a call costs an
//! increment on a handle and no lookup by name. Without the `metrics` feature a meter holds
//! its name and nothing else, and every method is empty.
//!
//! The names, units and labels are documented in the crate docs' table (`# Metrics`), and are
//! `ironward-tower`'s: the stop labels come from the core, so the two edges count alike.

use std::fmt;
use std::time::Duration;

use ironward::http_retry::Retried;
#[cfg(feature = "metrics")]
use ironward::http_retry::Stop;

/// The counter of the attempts a retrying client sent, by kind (`first` or `retry`).
#[cfg(feature = "metrics")]
const RETRY_ATTEMPTS: &str = "ironward.retry.attempts";
/// The counter of a retrying client's finished calls, by outcome.
#[cfg(feature = "metrics")]
const RETRY_CALLS: &str = "ironward.retry.calls";
/// The histogram of the waits a retrying client decided, in seconds.
#[cfg(feature = "metrics")]
const RETRY_WAIT: &str = "ironward.retry.wait";
/// The counter of every decision of a guard, as `ironward-tower`'s layers count theirs.
#[cfg(feature = "metrics")]
const REQUESTS: &str = "ironward.requests";
/// The breaker's drop fraction, as its last refusal computed it.
#[cfg(feature = "metrics")]
const BREAKER_RATIO: &str = "ironward.breaker.ratio";

/// The name a middleware or a breaker reports under until it is given one.
pub(crate) const DEFAULT_NAME: &str = "default";

/// One middleware's handles: attempts by kind, finished calls by outcome (`success`, then one
/// per [`Stop::ALL`], labelled by the core's [`Retried::outcome`]) and the waits.
pub(crate) struct RetryMeter {
    name: &'static str,
    #[cfg(feature = "metrics")]
    first: metrics::Counter,
    #[cfg(feature = "metrics")]
    retry: metrics::Counter,
    #[cfg(feature = "metrics")]
    calls: [metrics::Counter; 1 + Stop::ALL.len()],
    #[cfg(feature = "metrics")]
    wait: metrics::Histogram,
}

impl RetryMeter {
    /// Registers the handles of the middleware `name`.
    pub(crate) fn new(name: &'static str) -> Self {
        #[cfg(feature = "metrics")]
        {
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
            let outcome = |i: usize| match i.checked_sub(1) {
                None => Retried::default().outcome(),
                Some(stop) => Stop::ALL[stop].as_str(),
            };
            Self {
                name,
                first: metrics::counter!(RETRY_ATTEMPTS, "name" => name, "kind" => "first"),
                retry: metrics::counter!(RETRY_ATTEMPTS, "name" => name, "kind" => "retry"),
                calls: std::array::from_fn(|i| {
                    metrics::counter!(RETRY_CALLS, "name" => name, "outcome" => outcome(i))
                }),
                wait: metrics::histogram!(RETRY_WAIT, "name" => name),
            }
        }
        #[cfg(not(feature = "metrics"))]
        Self { name }
    }

    /// The name the middleware reports under.
    pub(crate) fn name(&self) -> &'static str {
        self.name
    }

    /// Counts the attempt numbered `number` (1 for the first), as the run counted it.
    pub(crate) fn attempt(&self, number: u32) {
        #[cfg(feature = "metrics")]
        match number {
            1 => self.first.increment(1),
            _ => self.retry.increment(1),
        }
        #[cfg(not(feature = "metrics"))]
        let _ = number;
    }

    /// Records a wait decided before a retry.
    pub(crate) fn wait(&self, wait: Duration) {
        #[cfg(feature = "metrics")]
        self.wait.record(wait.as_secs_f64());
        #[cfg(not(feature = "metrics"))]
        let _ = wait;
    }

    /// Counts one finished call under its outcome.
    pub(crate) fn ended(&self, retried: &Retried) {
        #[cfg(feature = "metrics")]
        {
            let index = match retried.stop {
                None => Some(0),
                Some(stop) => Stop::ALL.iter().position(|&s| s == stop).map(|i| i + 1),
            };
            if let Some(counter) = index.and_then(|i| self.calls.get(i)) {
                counter.increment(1);
            }
        }
        #[cfg(not(feature = "metrics"))]
        let _ = retried;
    }
}

impl fmt::Debug for RetryMeter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RetryMeter")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// One breaker's handles, under `ironward-tower`'s breaker labels: `piece="breaker"`, its
/// `name`, `outcome` `admitted` or `refused` (`reason="throttled"`), and its drop fraction.
pub(crate) struct BreakerMeter {
    name: &'static str,
    #[cfg(feature = "metrics")]
    admitted: metrics::Counter,
    #[cfg(feature = "metrics")]
    refused: metrics::Counter,
    #[cfg(feature = "metrics")]
    ratio: metrics::Gauge,
}

impl BreakerMeter {
    /// Registers the handles of the breaker `name`.
    pub(crate) fn new(name: &'static str) -> Self {
        #[cfg(feature = "metrics")]
        {
            metrics::describe_counter!(
                REQUESTS,
                metrics::Unit::Count,
                "Calls a layer decided on, admitted, refused or shadowed ({request})"
            );
            metrics::describe_gauge!(
                BREAKER_RATIO,
                "Fraction of calls the breaker drops, as its last refusal computed it (1)"
            );
            Self {
                name,
                admitted: metrics::counter!(
                    REQUESTS, "piece" => "breaker", "name" => name, "outcome" => "admitted"
                ),
                refused: metrics::counter!(
                    REQUESTS,
                    "piece" => "breaker",
                    "name" => name,
                    "outcome" => "refused",
                    "reason" => "throttled",
                ),
                ratio: metrics::gauge!(BREAKER_RATIO, "name" => name),
            }
        }
        #[cfg(not(feature = "metrics"))]
        Self { name }
    }

    /// The name the breaker reports under.
    pub(crate) fn name(&self) -> &'static str {
        self.name
    }

    /// Counts one attempt the breaker let through.
    pub(crate) fn admitted(&self) {
        #[cfg(feature = "metrics")]
        self.admitted.increment(1);
    }

    /// Counts one attempt the breaker refused, at the drop fraction `drop` it computed.
    pub(crate) fn refused(&self, drop: f64) {
        #[cfg(feature = "metrics")]
        {
            self.refused.increment(1);
            self.ratio.set(drop);
        }
        #[cfg(not(feature = "metrics"))]
        let _ = drop;
    }
}

impl fmt::Debug for BreakerMeter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BreakerMeter")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}
