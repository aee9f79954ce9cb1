//! What the limiters and the store report through the `metrics` facade: the handles,
//! registered once when a limiter (or a store) is made, so that a decision costs an increment
//! on a handle and no lookup by name. Without the `metrics` feature a meter holds the
//! limiter's piece and name, for the `tracing` events, and every method is empty.
//!
//! The names, units and labels are documented in the guide's [metrics](crate::_guide::metrics).

use std::fmt;
use std::time::Duration;

use ironward::Usage;
use ironward_tokio::meter::Decisions;

use crate::{Answer, Source, StoreError};

/// The counter of switches from Redis to the local fallback.
#[cfg(feature = "metrics")]
const FAILOVERS: &str = "ironward.redis.failovers";
/// The histogram of stretches on the local fallback, recorded as each one ends.
#[cfg(feature = "metrics")]
const FALLBACK_DURATION: &str = "ironward.redis.fallback.duration";
/// The histogram of script round trips, by piece, name and outcome.
#[cfg(feature = "metrics")]
const DECISION_DURATION: &str = "ironward.redis.decision.duration";

/// Which kind of limiter decided: the `piece` label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Piece {
    /// A [`Period`](crate::Period) of its own.
    Period,
    /// A [`Bucket`](crate::Bucket) of its own.
    Bucket,
    /// A [`Sliding`](crate::Sliding) log of its own.
    Sliding,
    /// A [`Limits`](crate::Limits): several limits of one key at once.
    Limits,
    /// The limiter inside a [`FleetQuotaLayer`](crate::FleetQuotaLayer), whatever its kind,
    /// under ironward-tower's rate limit's piece.
    #[cfg(feature = "tower")]
    RateLimit,
}

impl Piece {
    /// The `piece` label's value.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Self::Period => "redis_period",
            Self::Bucket => "redis_bucket",
            Self::Sliding => "redis_sliding",
            Self::Limits => "redis_limits",
            #[cfg(feature = "tower")]
            Self::RateLimit => "rate_limit",
        }
    }
}

/// The `source` label's value: which store decided.
pub(crate) fn source_label(source: Source) -> &'static str {
    match source {
        Source::Redis => "redis",
        Source::Local => "local",
    }
}

/// The reasons a limiter refuses for, as the `reason` label gives them, by source: Redis
/// refuses over the quota (`limited`), for no answer in time (`timeout`) or for a reply no
/// script gives (`bad_reply`) or an error about the key's data (`key_error`); the local
/// fallback only over its quota. Indexed by the constants below.
const REDIS_REASONS: &[&str] = &["limited", "timeout", "bad_reply", "key_error"];
const LOCAL_REASONS: &[&str] = &["limited"];
/// The index of `limited` in both lists.
#[cfg(feature = "metrics")]
const LIMITED: usize = 0;
/// The index of `timeout` in [`REDIS_REASONS`].
#[cfg(feature = "metrics")]
const TIMEOUT: usize = 1;
/// The index of `bad_reply` in [`REDIS_REASONS`].
#[cfg(feature = "metrics")]
const BAD_REPLY: usize = 2;
/// The index of `key_error` in [`REDIS_REASONS`].
#[cfg(feature = "metrics")]
const KEY_ERROR: usize = 3;

/// One limiter's handles: its decisions by source and outcome (the edges' shared
/// `ironward.requests` handles, one set per source), its refusals without an answer, and its
/// round trips to Redis.
pub(crate) struct Meter {
    piece: Piece,
    /// Decided by Redis, then by the local fallback.
    decisions: [Decisions; 2],
    /// Round trips that brought back a reply that decoded.
    #[cfg(feature = "metrics")]
    ok: metrics::Histogram,
    /// Round trips that failed: an error, a timeout, or a reply that did not decode.
    #[cfg(feature = "metrics")]
    error: metrics::Histogram,
}

impl Meter {
    /// Registers the handles of the limiter `name` (as the keys read it) of `piece`.
    /// A limiter's name is final when it is made, so its handles are registered here.
    pub(crate) fn new(piece: Piece, name: &str) -> Self {
        let decisions = [
            (Source::Redis, REDIS_REASONS),
            (Source::Local, LOCAL_REASONS),
        ]
        .map(|(source, reasons)| {
            let decisions = Decisions::new(piece.label(), name.to_owned(), "refused", reasons)
                .with_source(source_label(source));
            decisions.register();
            decisions
        });
        Self {
            piece,
            decisions,
            #[cfg(feature = "metrics")]
            ok: {
                metrics::describe_histogram!(
                    DECISION_DURATION,
                    metrics::Unit::Seconds,
                    "Round trip of one script call to Redis, from sending it to its reply, \
                     error or timeout (s)"
                );
                round_trips(piece, name, "ok")
            },
            #[cfg(feature = "metrics")]
            error: round_trips(piece, name, "error"),
        }
    }

    /// The `piece` label's value.
    pub(crate) fn piece(&self) -> &'static str {
        self.piece.label()
    }

    /// The name the limiter reports under: its keys' name.
    pub(crate) fn name(&self) -> &str {
        self.decisions[0].name()
    }

    /// Counts what a `take` came to: admitted or not by the store its answer names, or
    /// refused without an answer for the error's reason.
    pub(crate) fn count<T: Admits>(&self, decided: &Result<Answer<T>, StoreError>) {
        #[cfg(feature = "metrics")]
        match decided {
            Ok(answer) if answer.value.admits() => self.decisions[slot(answer.source)].admitted(),
            Ok(answer) => self.decisions[slot(answer.source)].refused(LIMITED),
            Err(StoreError::Timeout) => self.decisions[slot(Source::Redis)].refused(TIMEOUT),
            Err(StoreError::Reply { .. }) => self.decisions[slot(Source::Redis)].refused(BAD_REPLY),
            Err(StoreError::Key { .. }) => self.decisions[slot(Source::Redis)].refused(KEY_ERROR),
        }
        #[cfg(not(feature = "metrics"))]
        let _ = decided;
    }

    /// Records one round trip to Redis, started at `watch`, that came to a decoded reply
    /// (`ok`) or not.
    pub(crate) fn round_trip(&self, watch: Stopwatch, ok: bool) {
        #[cfg(feature = "metrics")]
        if ok { &self.ok } else { &self.error }.record(watch.started.elapsed());
        #[cfg(not(feature = "metrics"))]
        let _ = (watch, ok);
    }
}

impl fmt::Debug for Meter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Meter")
            .field("piece", &self.piece)
            .field("name", &self.name())
            .finish_non_exhaustive()
    }
}

/// A limiter's answer, read as admitted or not.
pub(crate) trait Admits {
    /// Whether the event was admitted.
    fn admits(&self) -> bool;
}

impl Admits for Usage {
    fn admits(&self) -> bool {
        *self != Usage::Over
    }
}

impl Admits for bool {
    fn admits(&self) -> bool {
        *self
    }
}

/// The index of `source` in a meter's arrays.
#[cfg(feature = "metrics")]
fn slot(source: Source) -> usize {
    match source {
        Source::Redis => 0,
        Source::Local => 1,
    }
}

/// The `ironward.redis.decision.duration` handle of one outcome.
#[cfg(feature = "metrics")]
fn round_trips(piece: Piece, name: &str, outcome: &'static str) -> metrics::Histogram {
    metrics::histogram!(
        DECISION_DURATION,
        "piece" => piece.label(),
        "name" => name.to_owned(),
        "outcome" => outcome,
    )
}

/// When a round trip started, on tokio's clock (the one the timeouts run on); nothing at
/// all without the `metrics` feature, so an unread round trip reads no clock.
pub(crate) struct Stopwatch {
    #[cfg(feature = "metrics")]
    started: tokio::time::Instant,
}

impl Stopwatch {
    /// A stopwatch started now.
    pub(crate) fn start() -> Self {
        Self {
            #[cfg(feature = "metrics")]
            started: tokio::time::Instant::now(),
        }
    }
}

/// A store's handles: its failovers, and the stretches it spent on the fallback.
pub(crate) struct StoreMeter {
    #[cfg(feature = "metrics")]
    failovers: metrics::Counter,
    #[cfg(feature = "metrics")]
    fallback: metrics::Histogram,
}

impl StoreMeter {
    /// Registers a store's handles. A store has no name: the handles of every store in a
    /// process are one series, the process's.
    pub(crate) fn new() -> Self {
        Self {
            #[cfg(feature = "metrics")]
            failovers: {
                metrics::describe_counter!(
                    FAILOVERS,
                    metrics::Unit::Count,
                    "Switches of a store from Redis to its local fallback ({failover})"
                );
                metrics::counter!(FAILOVERS)
            },
            #[cfg(feature = "metrics")]
            fallback: {
                metrics::describe_histogram!(
                    FALLBACK_DURATION,
                    metrics::Unit::Seconds,
                    "Time a store spent on its local fallback, from the failover to the \
                     PING Redis answered, recorded when it ends (s)"
                );
                metrics::histogram!(FALLBACK_DURATION)
            },
        }
    }

    /// Counts one switch to the fallback.
    pub(crate) fn failed_over(&self) {
        #[cfg(feature = "metrics")]
        self.failovers.increment(1);
    }

    /// Records a stretch on the fallback that lasted `lasted` and has just ended.
    pub(crate) fn recovered(&self, lasted: Duration) {
        #[cfg(feature = "metrics")]
        self.fallback.record(lasted);
        #[cfg(not(feature = "metrics"))]
        let _ = lasted;
    }
}

impl fmt::Debug for StoreMeter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoreMeter").finish_non_exhaustive()
    }
}
