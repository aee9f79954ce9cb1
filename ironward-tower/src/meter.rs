//! What a layer reports of its decisions through the `metrics` facade: the handles, registered
//! once when the layer (or, for the deadline, the service) is made, so that a decision costs
//! an increment on a handle and no lookup by name. Without the `metrics` feature a meter
//! holds the layer's name and nothing else, and every method is empty.
//!
//! The names, units and labels are documented in the crate docs' one table (`# Metrics`).

use std::fmt;

use crate::Mode;

/// The counter of every decision: admitted, refused and shadowed calls, by piece, name and
/// reason.
#[cfg(feature = "metrics")]
const REQUESTS: &str = "ironward.requests";
/// The breaker's drop fraction, as its last refusal computed it.
#[cfg(feature = "metrics")]
const BREAKER_RATIO: &str = "ironward.breaker.ratio";
/// The shedder's calls in flight.
#[cfg(feature = "metrics")]
const SHED_IN_FLIGHT: &str = "ironward.shed.in_flight";

/// The name a layer reports under until it is given one.
pub(crate) const DEFAULT_NAME: &str = "default";

/// One layer's counters: one handle for its admissions and one per reason it refuses for,
/// under `outcome="refused"` or, for a layer in [`Mode::Shadow`], `outcome="shadowed"`.
pub(crate) struct Meter {
    piece: &'static str,
    name: &'static str,
    mode: Mode,
    #[cfg(feature = "metrics")]
    admitted: metrics::Counter,
    #[cfg(feature = "metrics")]
    refused: Box<[metrics::Counter]>,
}

impl Meter {
    /// Registers the counters of the layer `name` of `piece` in `mode`, which refuses for
    /// `reasons` (indexed as [`refused`](Self::refused) reads them).
    pub(crate) fn new(
        piece: &'static str,
        name: &'static str,
        reasons: &'static [&'static str],
        mode: Mode,
    ) -> Self {
        #[cfg(not(feature = "metrics"))]
        let _ = reasons;
        Self {
            piece,
            name,
            mode,
            #[cfg(feature = "metrics")]
            admitted: {
                metrics::describe_counter!(
                    REQUESTS,
                    metrics::Unit::Count,
                    "Calls a layer decided on, admitted, refused or shadowed ({request})"
                );
                metrics::counter!(REQUESTS, "piece" => piece, "name" => name, "outcome" => "admitted")
            },
            #[cfg(feature = "metrics")]
            refused: reasons
                .iter()
                .map(|&reason| {
                    metrics::counter!(
                        REQUESTS,
                        "piece" => piece,
                        "name" => name,
                        "outcome" => mode.refusal(),
                        "reason" => reason,
                    )
                })
                .collect(),
        }
    }

    /// The name the layer reports under.
    pub(crate) fn name(&self) -> &'static str {
        self.name
    }

    /// Whether the layer enforces its refusals or only reports them.
    pub(crate) fn mode(&self) -> Mode {
        self.mode
    }

    /// The `outcome` of the layer's refusals: `"refused"`, or `"shadowed"` in shadow mode.
    pub(crate) fn refusal(&self) -> &'static str {
        self.mode.refusal()
    }

    /// Counts one admitted call.
    pub(crate) fn admitted(&self) {
        #[cfg(feature = "metrics")]
        self.admitted.increment(1);
    }

    /// Counts one call refused (or, in shadow mode, shadowed) for the reason at `reason` in
    /// the list the meter was made with.
    pub(crate) fn refused(&self, reason: usize) {
        #[cfg(feature = "metrics")]
        if let Some(counter) = self.refused.get(reason) {
            counter.increment(1);
        }
        #[cfg(not(feature = "metrics"))]
        let _ = reason;
    }
}

impl fmt::Debug for Meter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Meter")
            .field("piece", &self.piece)
            .field("name", &self.name)
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}

/// One gauge of one layer, set from a number a decision computed anyway.
pub(crate) struct Level {
    #[cfg(feature = "metrics")]
    gauge: metrics::Gauge,
}

impl Level {
    /// Registers the breaker `name`'s drop fraction.
    pub(crate) fn breaker_ratio(name: &'static str) -> Self {
        #[cfg(not(feature = "metrics"))]
        let _ = name;
        Self {
            #[cfg(feature = "metrics")]
            gauge: {
                metrics::describe_gauge!(
                    BREAKER_RATIO,
                    "Fraction of calls the breaker drops, as its last refusal computed it (1)"
                );
                metrics::gauge!(BREAKER_RATIO, "name" => name)
            },
        }
    }

    /// Registers the shedder `name`'s calls in flight.
    pub(crate) fn shed_in_flight(name: &'static str) -> Self {
        #[cfg(not(feature = "metrics"))]
        let _ = name;
        Self {
            #[cfg(feature = "metrics")]
            gauge: {
                metrics::describe_gauge!(
                    SHED_IN_FLIGHT,
                    metrics::Unit::Count,
                    "Calls admitted by the shedder and not yet completed ({request})"
                );
                metrics::gauge!(SHED_IN_FLIGHT, "name" => name)
            },
        }
    }

    /// Sets the gauge to `value`.
    pub(crate) fn set(&self, value: f64) {
        #[cfg(feature = "metrics")]
        self.gauge.set(value);
        #[cfg(not(feature = "metrics"))]
        let _ = value;
    }

    /// Whether anything reads the gauge: with the feature off, nothing, so a caller need
    /// not compute the value.
    pub(crate) const fn is_read() -> bool {
        cfg!(feature = "metrics")
    }
}

impl fmt::Debug for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Level").finish_non_exhaustive()
    }
}

/// The counter of the attempts a retry layer sent, by kind (`first` or `retry`).
#[cfg(feature = "metrics")]
const RETRY_ATTEMPTS: &str = "ironward.retry.attempts";
/// The counter of a retry layer's finished calls, by outcome (`success` or the stop's label).
#[cfg(feature = "metrics")]
const RETRY_CALLS: &str = "ironward.retry.calls";
/// The histogram of the waits a retry layer decided, in seconds.
#[cfg(feature = "metrics")]
const RETRY_WAIT: &str = "ironward.retry.wait";

/// One retry layer's handles: attempts by kind, finished calls by outcome and the waits
/// between attempts, registered once when the layer is made (or renamed).
///
/// The outcome labels are the core's ([`Retried::outcome`](ironward::http_retry::Retried::outcome)):
/// one counter for `success` and one per [`Stop::ALL`](ironward::http_retry::Stop::ALL), in
/// that order.
pub(crate) struct RetryMeter {
    name: &'static str,
    #[cfg(feature = "metrics")]
    first: metrics::Counter,
    #[cfg(feature = "metrics")]
    retry: metrics::Counter,
    #[cfg(feature = "metrics")]
    calls: [metrics::Counter; 1 + ironward::http_retry::Stop::ALL.len()],
    #[cfg(feature = "metrics")]
    wait: metrics::Histogram,
}

impl RetryMeter {
    /// Registers the handles of the retry layer `name`.
    pub(crate) fn new(name: &'static str) -> Self {
        #[cfg(feature = "metrics")]
        {
            use ironward::http_retry::{Retried, Stop};

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
                calls: std::array::from_fn(
                    |i| metrics::counter!(RETRY_CALLS, "name" => name, "outcome" => outcome(i)),
                ),
                wait: metrics::histogram!(RETRY_WAIT, "name" => name),
            }
        }
        #[cfg(not(feature = "metrics"))]
        Self { name }
    }

    /// The name the layer reports under.
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
    pub(crate) fn wait(&self, wait: std::time::Duration) {
        #[cfg(feature = "metrics")]
        self.wait.record(wait.as_secs_f64());
        #[cfg(not(feature = "metrics"))]
        let _ = wait;
    }

    /// Counts one finished call under its outcome.
    pub(crate) fn ended(&self, retried: &ironward::http_retry::Retried) {
        #[cfg(feature = "metrics")]
        {
            use ironward::http_retry::Stop;

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
