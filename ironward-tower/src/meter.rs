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
