//! What the limiters and the store report through the `metrics` facade: the handles,
//! registered once when a limiter (or a store) is made, so that a decision costs an increment
//! on a handle and no lookup by name. Without the `metrics` feature a meter holds the
//! limiter's piece and name, for the `tracing` events, and every method is empty.
//!
//! The names, units and labels are documented in the crate docs' one table (`# Metrics`).

use std::fmt;
use std::time::Duration;

use ironward::Quota;

use crate::{Answer, Error, Mode};

/// The counter of every decision, by piece, name, source, outcome and reason: the name
/// ironward-tower's layers count under, so one query sees both.
#[cfg(feature = "metrics")]
const REQUESTS: &str = "ironward.requests";
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
    /// The limiter inside a [`RateLimitLayer`](crate::RateLimitLayer), whatever its kind,
    /// under ironward-tower's rate limit's piece.
    RateLimit,
}

impl Piece {
    /// The `piece` label's value.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Self::Period => "redis_period",
            Self::Bucket => "redis_bucket",
            Self::Sliding => "redis_sliding",
            Self::RateLimit => "rate_limit",
        }
    }
}

/// The `source` label's value: which store decided.
pub(crate) fn source(mode: Mode) -> &'static str {
    match mode {
        Mode::Redis => "redis",
        Mode::Local => "local",
    }
}

/// The `reason` of a call refused because Redis gave no answer in time.
#[cfg(feature = "metrics")]
const TIMEOUT: &str = "timeout";
/// The `reason` of a call refused because Redis gave a reply no script gives.
#[cfg(feature = "metrics")]
const BAD_REPLY: &str = "bad_reply";

/// One limiter's handles: its decisions by source and outcome, its refusals without an
/// answer, and its round trips to Redis.
pub(crate) struct Meter {
    piece: Piece,
    name: Box<str>,
    /// Admitted, by source: Redis, then local.
    #[cfg(feature = "metrics")]
    admitted: [metrics::Counter; 2],
    /// Refused over the quota, by source: Redis, then local.
    #[cfg(feature = "metrics")]
    limited: [metrics::Counter; 2],
    /// Refused because Redis did not answer in time.
    #[cfg(feature = "metrics")]
    timeout: metrics::Counter,
    /// Refused because Redis's reply was none a script gives.
    #[cfg(feature = "metrics")]
    bad_reply: metrics::Counter,
    /// Round trips that brought back a reply that decoded.
    #[cfg(feature = "metrics")]
    ok: metrics::Histogram,
    /// Round trips that failed: an error, a timeout, or a reply that did not decode.
    #[cfg(feature = "metrics")]
    error: metrics::Histogram,
}

impl Meter {
    /// Registers the handles of the limiter `name` (as the keys read it) of `piece`.
    pub(crate) fn new(piece: Piece, name: &str) -> Self {
        Self {
            piece,
            name: name.into(),
            #[cfg(feature = "metrics")]
            admitted: {
                describe_requests();
                [Mode::Redis, Mode::Local].map(|mode| requests(piece, name, mode, "admitted", None))
            },
            #[cfg(feature = "metrics")]
            limited: [Mode::Redis, Mode::Local]
                .map(|mode| requests(piece, name, mode, "refused", Some("limited"))),
            #[cfg(feature = "metrics")]
            timeout: requests(piece, name, Mode::Redis, "refused", Some(TIMEOUT)),
            #[cfg(feature = "metrics")]
            bad_reply: requests(piece, name, Mode::Redis, "refused", Some(BAD_REPLY)),
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
        &self.name
    }

    /// Counts what a `take` came to: admitted or not by the store its answer names, or
    /// refused without an answer for the error's reason.
    pub(crate) fn count<T: Admits>(&self, decided: &Result<Answer<T>, Error>) {
        #[cfg(feature = "metrics")]
        match decided {
            Ok(answer) if answer.value.admits() => self.admitted[slot(answer.mode)].increment(1),
            Ok(answer) => self.limited[slot(answer.mode)].increment(1),
            Err(Error::Timeout) => self.timeout.increment(1),
            Err(Error::Reply { .. }) => self.bad_reply.increment(1),
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
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// A limiter's answer, read as admitted or not.
pub(crate) trait Admits {
    /// Whether the event was admitted.
    fn admits(&self) -> bool;
}

impl Admits for Quota {
    fn admits(&self) -> bool {
        *self != Quota::Over
    }
}

impl Admits for bool {
    fn admits(&self) -> bool {
        *self
    }
}

/// The index of `mode` in a meter's arrays.
#[cfg(feature = "metrics")]
fn slot(mode: Mode) -> usize {
    match mode {
        Mode::Redis => 0,
        Mode::Local => 1,
    }
}

#[cfg(feature = "metrics")]
fn describe_requests() {
    metrics::describe_counter!(
        REQUESTS,
        metrics::Unit::Count,
        "Calls a limiter decided on, admitted or refused ({request})"
    );
}

/// The `ironward.requests` handle of one label set.
#[cfg(feature = "metrics")]
fn requests(
    piece: Piece,
    name: &str,
    mode: Mode,
    outcome: &'static str,
    reason: Option<&'static str>,
) -> metrics::Counter {
    let mut labels = vec![
        metrics::Label::from_static_parts("piece", piece.label()),
        metrics::Label::new("name", name.to_owned()),
        metrics::Label::from_static_parts("source", source(mode)),
        metrics::Label::from_static_parts("outcome", outcome),
    ];
    if let Some(reason) = reason {
        labels.push(metrics::Label::from_static_parts("reason", reason));
    }
    metrics::counter!(REQUESTS, labels)
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
