//! The metric handles the edges share: plumbing for `ironward-tower`, `ironward-reqwest` and
//! `ironward-redis`, not something an application needs to use.
//!
//! Each edge counts its decisions under the same names and labels, so one dashboard query sees
//! every layer, middleware and limiter in a process; the names, units and descriptions are
//! written here once, and each edge's `# Metrics` table documents what it reports:
//!
//! | metric | kind | labels | handle |
//! | --- | --- | --- | --- |
//! | `ironward.requests` | counter | `piece`, `name`, (`source`), `outcome`, (`reason`), (`criticality`) | [`Decisions`] |
//! | `ironward.breaker.ratio` | gauge (fraction) | `name` | [`Level::breaker_ratio`] |
//! | `ironward.breaker.state` | gauge (state number: closed 0, open 1, half-open 2, disabled 3, forced open 4, metrics only 5) | `name` | [`States`] |
//! | `ironward.breaker.transitions` | counter | `name`, `from`, `to` | [`States`] |
//! | `ironward.shed.in_flight` | gauge (requests) | `name` | [`Level::shed_in_flight`] |
//! | `ironward.limiter.limit` | gauge (requests) | `name` | [`Level::limiter_limit`] |
//! | `ironward.retry.attempts` | counter | `name`, `kind` (`first`, `retry`, gRPC's `hedge`) | [`Retries`] |
//! | `ironward.retry.calls` | counter | `name`, `outcome` | [`Retries`] |
//! | `ironward.retry.wait` | histogram (seconds) | `name` | [`Retries`] |
//! | `ironward.config.reloads` | counter | `outcome` (`applied`, `refused`) | [`Reloads`] |
//! | `ironward.chaos.injected` | counter | `name`, `fault` (`error`, `latency`, `abort`, `replace`), `shadow` (`true`, `false`) | [`Injections`] |
//!
//! **Registered once, when the name is final.** A handle is registered with the installed
//! `metrics` recorder the first time it is asked to count (or when
//! [`register`](Decisions::register) is called, which an edge does when its name can no longer
//! change: a tower layer when it makes a service, a Redis limiter when it is made), and kept in
//! a `OnceLock`. A layer that is made and then renamed therefore leaves no series under the
//! name it started with, and a decision costs one load of the `OnceLock` and an increment on a
//! handle, never a lookup by name.
//!
//! **A series split by class shows once it counts.** `register` shows a piece's few series
//! at zero (its admissions and one per reason), so that a dashboard sees the label set and a
//! rate sees the first count. A piece split by criticality
//! ([`by_criticality`](Decisions::by_criticality), the adaptive limiter) would show four
//! times as many, 20 for the limiter's four reasons, nearly all of them zeros that no request
//! ever counts; each of those is registered when it first counts, and `register` registers
//! none of them.
//!
//! **Free without the `metrics` feature.** Without this crate's `metrics` feature (which each
//! edge's own `metrics` feature turns on) the types are still here, holding their labels for
//! the edges' `tracing` events, and every method that counts is empty; there is no `metrics`
//! dependency at all.
//!
//! # Examples
//!
//! A rate limit's decisions, counted under `piece="rate_limit"`, `name="api"`:
//!
//! ```
//! use ironward_tokio::meter::Decisions;
//!
//! let decisions = Decisions::new("rate_limit", "api", "refused", &["limited"]);
//! decisions.register();
//! decisions.admitted();
//! decisions.refused(0);
//! assert_eq!(decisions.name(), "api");
//! assert_eq!(decisions.refusal(), "refused");
//! ```

use std::borrow::Cow;
use std::fmt;
#[cfg(feature = "metrics")]
use std::sync::OnceLock;

use ironward::Criticality;

/// The counter of every decision: admitted, refused and shadowed calls.
#[cfg(feature = "metrics")]
const REQUESTS: &str = "ironward.requests";
/// The breaker's drop fraction, as its last refusal computed it.
#[cfg(feature = "metrics")]
const BREAKER_RATIO: &str = "ironward.breaker.ratio";
/// A stateful breaker's state, as resilience4j numbers it.
#[cfg(feature = "metrics")]
const BREAKER_STATE: &str = "ironward.breaker.state";
/// The counter of a stateful breaker's changes of state, by the state left and entered.
#[cfg(feature = "metrics")]
const BREAKER_TRANSITIONS: &str = "ironward.breaker.transitions";
/// The shedder's calls in flight.
#[cfg(feature = "metrics")]
const SHED_IN_FLIGHT: &str = "ironward.shed.in_flight";
/// An adaptive limiter's limit.
#[cfg(feature = "metrics")]
const LIMITER_LIMIT: &str = "ironward.limiter.limit";
/// The counter of the attempts a retrying client sent, by kind (`first` or `retry`).
#[cfg(feature = "metrics")]
const RETRY_ATTEMPTS: &str = "ironward.retry.attempts";
/// The counter of a retrying client's finished calls, by outcome.
#[cfg(feature = "metrics")]
const RETRY_CALLS: &str = "ironward.retry.calls";
/// The histogram of the waits a retrying client decided, in seconds.
#[cfg(feature = "metrics")]
const RETRY_WAIT: &str = "ironward.retry.wait";

/// The name a layer, a middleware or a breaker reports under until it is given one.
pub const DEFAULT_NAME: &str = "default";

/// One deciding piece's `ironward.requests` handles: one for its admissions and one per
/// reason it refuses for.
///
/// The series are labelled `piece`, `name`, `source` (only where one was given with
/// [`with_source`](Self::with_source), as a Redis limiter says which store decided),
/// `outcome` (`admitted`, or the refusal's: `refused`, or `shadowed` for a layer that only
/// reports), for a refusal, `reason`, and, for a piece that admits by class (made
/// [`by_criticality`](Self::by_criticality)), `criticality`: one of
/// [`Criticality::name`]'s four.
///
/// Each series is registered once, on its first count; [`register`](Self::register)
/// registers a piece's unsplit series ahead of that, and none of a split one's.
///
/// # Examples
///
/// A shedder that refuses for two reasons, in shadow mode:
///
/// ```
/// use ironward_tokio::meter::Decisions;
///
/// let decisions = Decisions::new("shed", "api", "shadowed", &["overloaded", "cooling"]);
/// decisions.refused(1); // registers `reason="cooling"`, then counts one there
/// decisions.refused(7); // no such reason: nothing is counted
/// assert_eq!(decisions.piece(), "shed");
/// ```
pub struct Decisions {
    piece: &'static str,
    name: Cow<'static, str>,
    source: Option<&'static str>,
    refusal: &'static str,
    /// Whether every series is split by class.
    classed: bool,
    #[cfg(feature = "metrics")]
    reasons: &'static [&'static str],
    /// One handle per series, each registered on its first use: the admitted, one per class
    /// (or one), then the refused, one per reason and class, the classes of a reason side by
    /// side.
    #[cfg(feature = "metrics")]
    series: Box<[OnceLock<metrics::Counter>]>,
}

impl Decisions {
    /// The handles of `piece`'s `name`, whose refusals are counted under the outcome
    /// `refusal` for `reasons` (indexed as [`refused`](Self::refused) reads them). Nothing is
    /// registered yet.
    pub fn new(
        piece: &'static str,
        name: impl Into<Cow<'static, str>>,
        refusal: &'static str,
        reasons: &'static [&'static str],
    ) -> Self {
        #[cfg(not(feature = "metrics"))]
        let _ = reasons;
        Self {
            piece,
            name: name.into(),
            source: None,
            refusal,
            classed: false,
            #[cfg(feature = "metrics")]
            reasons,
            #[cfg(feature = "metrics")]
            series: unregistered(1 + reasons.len()),
        }
    }

    /// The same handles with a `source` label (the store that decided).
    #[must_use]
    pub fn with_source(self, source: &'static str) -> Self {
        Self {
            source: Some(source),
            ..self
        }
    }

    /// The same handles split by the class of each call: every series gains a `criticality`
    /// label, and [`admitted_as`](Self::admitted_as) and [`refused_as`](Self::refused_as)
    /// count under it (the plain [`admitted`](Self::admitted) and
    /// [`refused`](Self::refused) under `critical`, the default class). Each of these series
    /// is registered when it first counts, never by [`register`](Self::register): the
    /// classes times the reasons are many series, most of which never count.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::Criticality;
    /// use ironward_tokio::meter::Decisions;
    ///
    /// let decisions = Decisions::new("limiter", "api", "refused", &["full"]).by_criticality();
    /// decisions.register(); // registers nothing
    /// decisions.admitted_as(Criticality::Sheddable);
    /// decisions.refused_as(0, Criticality::CriticalPlus);
    /// ```
    #[must_use]
    pub fn by_criticality(self) -> Self {
        Self {
            classed: true,
            #[cfg(feature = "metrics")]
            series: unregistered(Criticality::ALL.len() * (1 + self.reasons.len())),
            ..self
        }
    }

    /// Registers the handles now, if they are not yet: once the name is final, so that every
    /// series shows (at zero) before the first decision. A set split by class
    /// ([`by_criticality`](Self::by_criticality)) registers none here: each of its series
    /// shows on its first count.
    pub fn register(&self) {
        #[cfg(feature = "metrics")]
        if !self.classed {
            for index in 0..self.series.len() {
                self.counter(index);
            }
        }
    }

    /// The `piece` label.
    pub fn piece(&self) -> &'static str {
        self.piece
    }

    /// The `name` label.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The `outcome` label of a refusal: `"refused"`, or `"shadowed"`.
    pub fn refusal(&self) -> &'static str {
        self.refusal
    }

    /// Counts one admitted call.
    #[inline]
    pub fn admitted(&self) {
        self.admitted_as(Criticality::Critical);
    }

    /// Counts one admitted call of class `criticality`, under its `criticality` label if the
    /// handles are split by class.
    #[inline]
    pub fn admitted_as(&self, criticality: Criticality) {
        #[cfg(feature = "metrics")]
        if let Some(counter) = self.counter(self.slot(criticality)) {
            counter.increment(1);
        }
        #[cfg(not(feature = "metrics"))]
        let _ = criticality;
    }

    /// Counts one call refused for the reason at `reason` in the list the handles were made
    /// with; nothing for an index past its end.
    #[inline]
    pub fn refused(&self, reason: usize) {
        self.refused_as(reason, Criticality::Critical);
    }

    /// Counts one call of class `criticality` refused for the reason at `reason`, under its
    /// `criticality` label if the handles are split by class; nothing for an index past the
    /// list's end.
    #[inline]
    pub fn refused_as(&self, reason: usize, criticality: Criticality) {
        #[cfg(feature = "metrics")]
        if let Some(counter) = self
            .refused_index(reason, criticality)
            .and_then(|i| self.counter(i))
        {
            counter.increment(1);
        }
        #[cfg(not(feature = "metrics"))]
        let _ = (reason, criticality);
    }

    /// How many classes each series is split into: 4, or 1.
    #[cfg(feature = "metrics")]
    fn classes(&self) -> usize {
        if self.classed {
            Criticality::ALL.len()
        } else {
            1
        }
    }

    /// Where a call of `criticality` is counted among a series' classes: the index of its
    /// admitted series.
    #[cfg(feature = "metrics")]
    fn slot(&self, criticality: Criticality) -> usize {
        if self.classed { criticality.rank() } else { 0 }
    }

    /// The index of the series of a call of `criticality` refused for the reason at
    /// `reason`; `None` past the list's end.
    #[cfg(feature = "metrics")]
    fn refused_index(&self, reason: usize, criticality: Criticality) -> Option<usize> {
        let classes = self.classes();
        (reason < self.reasons.len()).then(|| classes * (1 + reason) + self.slot(criticality))
    }

    /// The handle of the series at `index` (see `series`), registered on first use; `None`
    /// past the end.
    #[cfg(feature = "metrics")]
    #[inline]
    fn counter(&self, index: usize) -> Option<&metrics::Counter> {
        let cell = self.series.get(index)?;
        Some(cell.get_or_init(|| self.register_series(index)))
    }

    /// Registers the series at `index`: the cold half of [`counter`](Self::counter).
    #[cfg(feature = "metrics")]
    #[cold]
    fn register_series(&self, index: usize) -> metrics::Counter {
        metrics::describe_counter!(
            REQUESTS,
            metrics::Unit::Count,
            "Calls a layer or a limiter decided on, admitted, refused or shadowed ({request})"
        );
        let classes = self.classes();
        let (outcome, reason) = match index / classes {
            0 => ("admitted", None),
            n => (self.refusal, Some(self.reasons[n - 1])),
        };
        let mut labels = vec![
            metrics::Label::from_static_parts("piece", self.piece),
            metrics::Label::new("name", self.name.clone()),
        ];
        if let Some(source) = self.source {
            labels.push(metrics::Label::from_static_parts("source", source));
        }
        labels.push(metrics::Label::from_static_parts("outcome", outcome));
        if let Some(reason) = reason {
            labels.push(metrics::Label::from_static_parts("reason", reason));
        }
        if self.classed {
            let class = Criticality::ALL[index % classes];
            labels.push(metrics::Label::from_static_parts(
                "criticality",
                class.name(),
            ));
        }
        metrics::counter!(REQUESTS, labels)
    }
}

/// `n` handles, none registered.
#[cfg(feature = "metrics")]
fn unregistered(n: usize) -> Box<[OnceLock<metrics::Counter>]> {
    (0..n).map(|_| OnceLock::new()).collect()
}

impl fmt::Debug for Decisions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Decisions")
            .field("piece", &self.piece)
            .field("name", &self.name)
            .field("source", &self.source)
            .field("refusal", &self.refusal)
            .field("classed", &self.classed)
            .finish_non_exhaustive()
    }
}

/// Which gauge a [`Level`] sets.
#[derive(Debug, Clone, Copy)]
enum Gauge {
    BreakerRatio,
    ShedInFlight,
    LimiterLimit,
}

/// One gauge of one piece, labelled `name`, set from a number a decision computed anyway.
///
/// # Examples
///
/// ```
/// use ironward_tokio::meter::Level;
///
/// let ratio = Level::breaker_ratio("payments");
/// if Level::is_read() {
///     ratio.set(0.25);
/// }
/// ```
pub struct Level {
    gauge: Gauge,
    name: &'static str,
    #[cfg(feature = "metrics")]
    handle: OnceLock<metrics::Gauge>,
}

impl Level {
    /// The breaker `name`'s drop fraction (`ironward.breaker.ratio`), as its last refusal
    /// computed it. Nothing is registered yet.
    pub fn breaker_ratio(name: &'static str) -> Self {
        Self::new(Gauge::BreakerRatio, name)
    }

    /// The shedder `name`'s calls in flight (`ironward.shed.in_flight`). Nothing is
    /// registered yet.
    pub fn shed_in_flight(name: &'static str) -> Self {
        Self::new(Gauge::ShedInFlight, name)
    }

    /// The adaptive limiter `name`'s limit (`ironward.limiter.limit`): how many calls it lets
    /// in flight at once now. Nothing is registered yet.
    pub fn limiter_limit(name: &'static str) -> Self {
        Self::new(Gauge::LimiterLimit, name)
    }

    fn new(gauge: Gauge, name: &'static str) -> Self {
        Self {
            gauge,
            name,
            #[cfg(feature = "metrics")]
            handle: OnceLock::new(),
        }
    }

    /// Registers the gauge now, if it is not yet; see [`Decisions::register`].
    pub fn register(&self) {
        #[cfg(feature = "metrics")]
        self.handle();
    }

    /// Sets the gauge to `value`.
    #[inline]
    pub fn set(&self, value: f64) {
        #[cfg(feature = "metrics")]
        self.handle().set(value);
        #[cfg(not(feature = "metrics"))]
        let _ = value;
    }

    /// Whether anything reads the gauge: with the `metrics` feature off, nothing, so a caller
    /// need not compute the value.
    pub const fn is_read() -> bool {
        cfg!(feature = "metrics")
    }

    /// The gauge, registered on first use.
    #[cfg(feature = "metrics")]
    #[inline]
    fn handle(&self) -> &metrics::Gauge {
        self.handle.get_or_init(|| match self.gauge {
            Gauge::BreakerRatio => {
                metrics::describe_gauge!(
                    BREAKER_RATIO,
                    "Fraction of calls the breaker drops, as its last refusal computed it (1)"
                );
                metrics::gauge!(BREAKER_RATIO, "name" => self.name)
            }
            Gauge::ShedInFlight => {
                metrics::describe_gauge!(
                    SHED_IN_FLIGHT,
                    metrics::Unit::Count,
                    "Calls admitted by the shedder and not yet completed ({request})"
                );
                metrics::gauge!(SHED_IN_FLIGHT, "name" => self.name)
            }
            Gauge::LimiterLimit => {
                metrics::describe_gauge!(
                    LIMITER_LIMIT,
                    metrics::Unit::Count,
                    "Calls the adaptive limiter lets in flight at once, as its latest sample set it ({request})"
                );
                metrics::gauge!(LIMITER_LIMIT, "name" => self.name)
            }
        })
    }
}

impl fmt::Debug for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Level")
            .field("gauge", &self.gauge)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

mod injections;
mod reloads;
mod retries;
mod states;
#[cfg(all(test, feature = "metrics"))]
pub(crate) mod tests;

pub use injections::Injections;
pub use reloads::Reloads;
pub use retries::{Retries, Stops};
pub use states::States;
