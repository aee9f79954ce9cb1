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
//! | `ironward.shed.in_flight` | gauge (requests) | `name` | [`Level::shed_in_flight`] |
//! | `ironward.limiter.limit` | gauge (requests) | `name` | [`Level::limiter_limit`] |
//! | `ironward.retry.attempts` | counter | `name`, `kind` (`first`, `retry`) | [`Retries`] |
//! | `ironward.retry.calls` | counter | `name`, `outcome` | [`Retries`] |
//! | `ironward.retry.wait` | histogram (seconds) | `name` | [`Retries`] |
//! | `ironward.retry.attempts` | counter | `name`, `kind` (`first`, `retry`, `hedge`) | [`GrpcRetries`] |
//! | `ironward.retry.calls` | counter | `name`, `outcome` | [`GrpcRetries`] |
//! | `ironward.retry.wait` | histogram (seconds) | `name` | [`GrpcRetries`] |
//!
//! **Registered once, when the name is final.** A handle set is registered with the
//! installed `metrics` recorder the first time it is asked to count (or when
//! [`register`](Decisions::register) is called, which an edge does when its name can no longer
//! change: a tower layer when it makes a service, a Redis limiter when it is made), and kept in
//! a `OnceLock`. A layer that is made and then renamed therefore leaves no series under the
//! name it started with, and a decision costs one load of the `OnceLock` and an increment on a
//! handle, never a lookup by name.
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
use std::time::Duration;

use ironward::Criticality;
use ironward::grpc::Stop as GrpcStop;
use ironward::http_retry::{Retried, Stop, StopReason};

/// The counter of every decision: admitted, refused and shadowed calls.
#[cfg(feature = "metrics")]
const REQUESTS: &str = "ironward.requests";
/// The breaker's drop fraction, as its last refusal computed it.
#[cfg(feature = "metrics")]
const BREAKER_RATIO: &str = "ironward.breaker.ratio";
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
/// # Examples
///
/// A shedder that refuses for two reasons, in shadow mode:
///
/// ```
/// use ironward_tokio::meter::Decisions;
///
/// let decisions = Decisions::new("shed", "api", "shadowed", &["overloaded", "cooling"]);
/// decisions.refused(1); // registers the handles, then counts one `reason="cooling"`
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
    #[cfg(feature = "metrics")]
    handles: OnceLock<DecisionHandles>,
}

/// The registered handles of a [`Decisions`]: one admitted counter per class (or one), and
/// one refused counter per reason and class, the classes of a reason side by side.
#[cfg(feature = "metrics")]
struct DecisionHandles {
    admitted: Box<[metrics::Counter]>,
    refused: Box<[metrics::Counter]>,
}

/// Where one call of a [`Decisions`] is counted when it ends: as admitted, or as refused for
/// the one reason it was made for ([`Decisions::ending`]).
#[derive(Clone)]
pub struct Ending {
    #[cfg(feature = "metrics")]
    admitted: metrics::Counter,
    #[cfg(feature = "metrics")]
    refused: metrics::Counter,
}

impl Ending {
    /// Counts the call as admitted.
    pub fn admitted(&self) {
        #[cfg(feature = "metrics")]
        self.admitted.increment(1);
    }

    /// Counts the call as refused for its reason.
    pub fn refused(&self) {
        #[cfg(feature = "metrics")]
        self.refused.increment(1);
    }
}

impl fmt::Debug for Ending {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ending").finish_non_exhaustive()
    }
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
            handles: OnceLock::new(),
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
    /// [`refused`](Self::refused) under `critical`, the default class).
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::Criticality;
    /// use ironward_tokio::meter::Decisions;
    ///
    /// let decisions = Decisions::new("limiter", "api", "refused", &["full"]).by_criticality();
    /// decisions.admitted_as(Criticality::Sheddable);
    /// decisions.refused_as(0, Criticality::CriticalPlus);
    /// ```
    #[must_use]
    pub fn by_criticality(self) -> Self {
        Self {
            classed: true,
            ..self
        }
    }

    /// Registers the handles now, if they are not yet: once the name is final, so that every
    /// series shows (at zero) before the first decision.
    pub fn register(&self) {
        #[cfg(feature = "metrics")]
        self.handles();
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
    pub fn admitted(&self) {
        self.admitted_as(Criticality::Critical);
    }

    /// Counts one admitted call of class `criticality`, under its `criticality` label if the
    /// handles are split by class.
    pub fn admitted_as(&self, criticality: Criticality) {
        #[cfg(feature = "metrics")]
        if let Some(counter) = self.handles().admitted.get(self.slot(criticality)) {
            counter.increment(1);
        }
        #[cfg(not(feature = "metrics"))]
        let _ = criticality;
    }

    /// Counts one call refused for the reason at `reason` in the list the handles were made
    /// with; nothing for an index past its end.
    pub fn refused(&self, reason: usize) {
        self.refused_as(reason, Criticality::Critical);
    }

    /// Counts one call of class `criticality` refused for the reason at `reason`, under its
    /// `criticality` label if the handles are split by class; nothing for an index past the
    /// list's end.
    pub fn refused_as(&self, reason: usize, criticality: Criticality) {
        #[cfg(feature = "metrics")]
        {
            let index = reason
                .checked_mul(self.classes())
                .and_then(|first| first.checked_add(self.slot(criticality)));
            if let Some(counter) = index.and_then(|i| self.handles().refused.get(i)) {
                counter.increment(1);
            }
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

    /// Where a call of `criticality` is counted among a series' classes.
    #[cfg(feature = "metrics")]
    fn slot(&self, criticality: Criticality) -> usize {
        if self.classed { criticality.rank() } else { 0 }
    }

    /// The two counters a call decided now but counted when it ends may land on: admitted,
    /// or refused for the reason at `reason` (nothing, for an index past the list's end).
    ///
    /// A future that counts its call when it ends keeps this rather than a reference to the
    /// layer's handles: while the recorder hands out no-op handles, and without the `metrics`
    /// feature, it is free to make and to drop; with counting handles it costs two reference
    /// counts.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward_tokio::meter::Decisions;
    ///
    /// let decisions = Decisions::new("deadline", "api", "refused", &["exceeded", "elapsed"]);
    /// let ending = decisions.ending(1);
    /// // Later, when the call ends: counted once, as admitted or as `reason="elapsed"`.
    /// ending.refused();
    /// ```
    pub fn ending(&self, reason: usize) -> Ending {
        #[cfg(feature = "metrics")]
        {
            let handles = self.handles();
            let slot = self.slot(Criticality::Critical);
            let at = |counters: &[metrics::Counter], index: Option<usize>| {
                index
                    .and_then(|i| counters.get(i))
                    .cloned()
                    .unwrap_or_else(metrics::Counter::noop)
            };
            let refused = reason
                .checked_mul(self.classes())
                .and_then(|first| first.checked_add(slot));
            Ending {
                admitted: at(&handles.admitted, Some(slot)),
                refused: at(&handles.refused, refused),
            }
        }
        #[cfg(not(feature = "metrics"))]
        {
            let _ = reason;
            Ending {}
        }
    }

    /// The handles, registered on first use.
    #[cfg(feature = "metrics")]
    fn handles(&self) -> &DecisionHandles {
        self.handles.get_or_init(|| {
            metrics::describe_counter!(
                REQUESTS,
                metrics::Unit::Count,
                "Calls a layer or a limiter decided on, admitted, refused or shadowed ({request})"
            );
            let series = |outcome: &'static str,
                          reason: Option<&'static str>,
                          class: Option<Criticality>| {
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
                if let Some(class) = class {
                    labels.push(metrics::Label::from_static_parts(
                        "criticality",
                        class.name(),
                    ));
                }
                metrics::counter!(REQUESTS, labels)
            };
            let classes: Vec<Option<Criticality>> = if self.classed {
                Criticality::ALL.into_iter().map(Some).collect()
            } else {
                vec![None]
            };
            DecisionHandles {
                admitted: classes
                    .iter()
                    .map(|&class| series("admitted", None, class))
                    .collect(),
                refused: self
                    .reasons
                    .iter()
                    .flat_map(|&reason| {
                        classes
                            .iter()
                            .map(move |&class| series(self.refusal, Some(reason), class))
                    })
                    .collect(),
            }
        })
    }
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

#[cfg(all(test, feature = "metrics"))]
mod tests {
    use metrics_util::debugging::{DebugValue, DebuggingRecorder};

    use super::{Decisions, GrpcRetries, Level, Retries};

    /// The series a recorder holds, as `name{labels}` and the counter's value or 0.
    fn series(recorder: &DebuggingRecorder) -> Vec<(String, u64)> {
        let mut all: Vec<_> = recorder
            .snapshotter()
            .snapshot()
            .into_vec()
            .into_iter()
            .map(|(key, _, _, value)| {
                let key = key.key();
                let labels: Vec<_> = key
                    .labels()
                    .map(|l| format!("{}={}", l.key(), l.value()))
                    .collect();
                let count = match value {
                    DebugValue::Counter(n) => n,
                    _ => 0,
                };
                (format!("{}{{{}}}", key.name(), labels.join(",")), count)
            })
            .collect();
        all.sort();
        all
    }

    #[test]
    fn nothing_is_registered_until_the_handles_are_first_used() {
        let recorder = DebuggingRecorder::new();
        let seen = metrics::with_local_recorder(&recorder, || {
            let decisions = Decisions::new("breaker", "default", "refused", &["throttled"]);
            let ratio = Level::breaker_ratio("default");
            let retries = Retries::new("default");
            let before = series(&recorder);
            drop((decisions, ratio, retries));
            before
        });
        assert_eq!(seen, vec![]);
        assert_eq!(series(&recorder), vec![]);
    }

    #[test]
    fn registering_shows_every_series_at_zero_once() {
        let recorder = DebuggingRecorder::new();
        metrics::with_local_recorder(&recorder, || {
            let decisions =
                Decisions::new("redis_period", String::from("api"), "refused", &["limited"])
                    .with_source("redis");
            decisions.register();
            decisions.register();
            decisions.refused(0);
            decisions.refused(1);
        });
        assert_eq!(
            series(&recorder),
            vec![
                (
                    "ironward.requests{piece=redis_period,name=api,source=redis,outcome=admitted}"
                        .to_owned(),
                    0
                ),
                (
                    "ironward.requests{piece=redis_period,name=api,source=redis,outcome=refused,reason=limited}"
                        .to_owned(),
                    1
                ),
            ]
        );
    }

    #[test]
    fn handles_split_by_class_count_each_class_apart() {
        use ironward::Criticality;
        let recorder = DebuggingRecorder::new();
        metrics::with_local_recorder(&recorder, || {
            let decisions =
                Decisions::new("limiter", "api", "refused", &["full", "floor"]).by_criticality();
            decisions.admitted_as(Criticality::Sheddable);
            decisions.admitted(); // as critical
            decisions.refused_as(1, Criticality::SheddableConcurrent);
            decisions.refused_as(1, Criticality::SheddableConcurrent);
            decisions.refused_as(2, Criticality::Critical); // no such reason
            Level::limiter_limit("api").set(17.0);
        });
        let seen = series(&recorder);
        // Four admitted series and eight refused, every one registered.
        assert_eq!(seen.len(), 4 + 8 + 1, "{seen:?}");
        let count = |key: &str| seen.iter().find(|(k, _)| k == key).map(|(_, n)| *n);
        assert_eq!(
            count(
                "ironward.requests{piece=limiter,name=api,outcome=admitted,criticality=sheddable}"
            ),
            Some(1)
        );
        assert_eq!(
            count(
                "ironward.requests{piece=limiter,name=api,outcome=admitted,criticality=critical}"
            ),
            Some(1)
        );
        assert_eq!(
            count(
                "ironward.requests{piece=limiter,name=api,outcome=refused,reason=floor,criticality=sheddable_concurrent}"
            ),
            Some(2)
        );
        assert_eq!(
            count(
                "ironward.requests{piece=limiter,name=api,outcome=refused,reason=full,criticality=critical_plus}"
            ),
            Some(0)
        );
        assert!(
            seen.iter()
                .any(|(k, _)| k == "ironward.limiter.limit{name=api}")
        );
    }

    #[test]
    fn a_retry_counts_under_the_cores_outcome_labels() {
        let recorder = DebuggingRecorder::new();
        metrics::with_local_recorder(&recorder, || {
            let retries = Retries::new("api");
            retries.attempt(1);
            retries.attempt(2);
            retries.ended(&ironward::http_retry::Retried::default());
        });
        let seen = series(&recorder);
        assert!(seen.contains(&("ironward.retry.attempts{name=api,kind=first}".to_owned(), 1)));
        assert!(seen.contains(&("ironward.retry.attempts{name=api,kind=retry}".to_owned(), 1)));
        assert!(seen.contains(&(
            "ironward.retry.calls{name=api,outcome=success}".to_owned(),
            1
        )));
    }

    #[test]
    fn a_grpc_call_counts_hedges_and_every_stop_label() {
        let recorder = DebuggingRecorder::new();
        metrics::with_local_recorder(&recorder, || {
            let retries = GrpcRetries::new("api");
            retries.register();
            retries.attempt(1);
            retries.hedge();
            retries.hedge();
            retries.ended(Some(ironward::grpc::Stop::Deadline));
        });
        let seen = series(&recorder);
        // Three kinds, a success and six stops, and the wait histogram.
        assert_eq!(seen.len(), 3 + 7 + 1, "{seen:?}");
        assert!(seen.contains(&("ironward.retry.attempts{name=api,kind=hedge}".to_owned(), 2)));
        assert!(seen.contains(&(
            "ironward.retry.calls{name=api,outcome=deadline}".to_owned(),
            1
        )));
        assert!(seen.contains(&(
            "ironward.retry.calls{name=api,outcome=committed}".to_owned(),
            0
        )));
    }
}
