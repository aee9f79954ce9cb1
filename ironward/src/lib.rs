//! Resilience without I/O: a probabilistic circuit breaker, adaptive load shedding, quotas, a
//! concurrency gate, backoff with jitter, deadlines, rolling windows and HTTP retry decisions.
//!
//! Every decision is a function of what the caller passes in: the clock reading, the random
//! draw, the CPU reading. Nothing here reads a clock, draws a random number, allocates after
//! construction, or performs I/O, so an hour of traffic becomes a loop over `now`, every
//! sequence is reproducible in a test, and the same policy runs in a unit test, a simulator or
//! a server.
//!
//! # The pieces
//!
//! | type | answers | reference |
//! | --- | --- | --- |
//! | [`SreBreaker`] ([`Sre`]) | whether to call a backend that has been failing | Google SRE book eq. 21-1; go-zero `core/breaker/googlebreaker.go` |
//! | [`ClassicBreaker`] ([`Classic`]) | the same, as a switch: closed, open, half-open, with each change of state a value | resilience4j `CircuitBreakerStateMachine`; failsafe-go; Polly |
//! | [`Shedder`] ([`Shed`]) | whether this server should take on another call | go-zero `core/load/adaptiveshedder.go` |
//! | [`Bucket`] ([`SharedBucket`]) | whether a call is within a rate at its cost (fractional tokens), and when one would be; a cost reserved now and settled later ([`Reservation`]); shared by `&` across threads without a lock | token bucket; GCRA |
//! | [`Sliding`] | whether it is within a quota over any window-long stretch, at a cost in units (`take_n`), reserved and settled later | exact sliding-window log |
//! | [`Period`] ([`SharedPeriod`]) | the same quota per fixed period, at a cost in units (`take_n`), reserved and settled later; shared by `&` across threads without a lock | go-zero `core/limit/periodlimit.go` |
//! | [`Limits`] ([`Limit`], [`Reservations`]) | whether several limits (requests and tokens, a minute and a day) all admit a request, taking from every one or none | all-or-nothing over the three above |
//! | [`Gate`] ([`SharedGate`]) | whether there is room right now; shared by `&` across threads without a lock | concurrency limit |
//! | [`Limiter`] ([`limit`]) | how many calls may be in flight, following the backend's latency, and who is refused first | Netflix concurrency-limits: `AIMDLimit`, `VegasLimit`, `Gradient2Limit`, `WindowedLimit`; failsafe-go's adaptive limiter |
//! | [`Criticality`] ([`Shares`]) | which calls the shedder and the limiter refuse first under overload | Google SRE book, "Handling Overload" |
//! | [`Backoff`] ([`Jitter`]) | how long to wait before a retry, and whether to retry | gRPC A6; AWS "Exponential Backoff and Jitter" |
//! | [`Budget`] ([`SharedBudget`]) | whether a retry may be made while calls are failing; shared by `&` across threads without a lock | gRPC A6 retry throttling |
//! | [`Ward`] ([`Reconnect`]) | whether a connection pool may open a connection now (a breaker, a bucket and a backoff in front of it), and hand out another | MoonBit `moonward`; gRPC connection backoff |
//! | [`Deadline`] | how much of a time budget is left | go-zero and gRPC timeouts |
//! | [`Window`] ([`Tally`], [`Total`]) | the rolling window under the breaker and the shedder | go-zero `core/collection/rollingwindow.go` |
//! | [`retry`] ([`retry::Engine`]) | after a failed attempt of any operation, whether and when to try again: attempts, backoff, time budget, a server's wait, retry budget, and the record of the call | gRPC A6; AWS "Exponential Backoff and Jitter"; RFC 9110 §10.2.3 |
//! | [`http_retry`] | whether and when to retry a failed HTTP response | RFC 9110 |
//! | [`grpc`] | whether and when to retry or hedge a gRPC call, and the service config's policies | gRPC A6; grpc-go `stream.go`, `service_config.go` |
//! | [`latency`] ([`latency::Recent`], [`latency::Tail`]) | how long to wait before hedging a call: a percentile of recent latencies, bounded | Dean and Barroso, "The Tail at Scale" |
//! | [`chaos`] ([`chaos::Injector`]) | which fault to inject into a call on purpose, replayable from a seed | Polly's Simmy; tower-resilience's chaos layer |
//!
//! # Time, chance and load are passed in
//!
//! `now: Duration` is what the caller's monotonic clock reads, `roll` / `random: f64` a draw
//! from `[0, 1)` the caller makes, and `cpu: u32` CPU use in thousandths
//! ([`_guide::inputs`] says why and how):
//!
//! ```
//! use core::time::Duration;
//! use ironward::{SreBreaker, SRE};
//!
//! let mut breaker = SreBreaker::new(SRE, Duration::ZERO);
//! let now = Duration::from_millis(20); // the caller's clock
//! let roll = 0.42; // the caller's draw
//! let permit = breaker.allow(now, roll).expect("a fresh breaker refuses nothing");
//! breaker.pass(permit, now + Duration::from_millis(5));
//! assert_eq!(breaker.ratio(now), 0.0);
//! ```
//!
//! A refusal is an answer, not an error, and each decision has a `check` beside it that says
//! why ([`_guide::refusals`]); every piece that keeps state takes a new policy live with
//! `retune` ([`_guide::retune`]); and no operation panics, for any input
//! ([`_guide::edge_cases`]). The [`_guide`] has the long form of each piece, the HTTP and gRPC
//! retry decisions, and where each piece follows or departs from its reference.
//!
//! # Features
//!
//! - `serde` (off by default): `Serialize` and `Deserialize` for the policy records
//!   ([`Sre`], [`Shed`], [`Shares`], [`Criticality`], [`Backoff`], [`Jitter`],
//!   [`Reconnect`], [`Checkouts`], [`Adaptive`] and the limit module's [`limit::Algorithm`], [`limit::Aimd`],
//!   [`limit::Vegas`], [`limit::Gradient2`], [`limit::Little`], [`limit::Failsafe`],
//!   [`limit::Scale`], [`limit::Decrease`], [`limit::Sampling`] and [`limit::Latency`],
//!   [`http_retry::Settings`], [`chaos::Chaos`]), with durations
//!   as humane strings such as `"100ms"` or `"10s"`; `ironward::humane` reads and writes
//!   them for a record of the caller's own (`#[serde(with = "ironward::humane")]`).

#![no_std]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

extern crate alloc;

mod backoff;
mod breaker;
mod bucket;
mod budget;
pub mod chaos;
pub mod classic;
pub mod clock;
mod criticality;
mod deadline;
mod gate;
mod internal;
pub mod limit;
mod limits;
mod period;
mod reservation;
mod shedder;
mod sliding;
mod splitmix;
mod ward;
mod window;

pub use backoff::{BACKOFF, Backoff, Jitter};
pub use breaker::{CircuitBreaker, SRE, Sre, SreBreaker, SrePermit, SreReason, SreThrottle};
#[cfg(target_has_atomic = "64")]
pub use bucket::SharedBucket;
pub use bucket::{Bucket, BucketReason};
#[cfg(target_has_atomic = "64")]
pub use budget::SharedBudget;
pub use budget::{Budget, BudgetReason};
pub use classic::{CLASSIC, Classic, ClassicBreaker, ClassicPermit, ClassicReason, POLLY};
pub use criticality::{Criticality, SHARES, Shares, UnknownCriticality};
pub use deadline::Deadline;
#[cfg(target_has_atomic = "64")]
pub use gate::SharedGate;
pub use gate::{Gate, GateReason};
pub use limit::{ADAPTIVE, Adaptive, Grant, Limiter, LimiterReason, Partitions, Settle};
pub use limits::{Limit, Limits, LimitsReason, Reservations};
pub use period::{Period, QuotaReason, Usage};
#[cfg(target_has_atomic = "64")]
pub use period::{PeriodLeft, SharedPeriod};
pub use reservation::Reservation;
pub use shedder::{SHED, Shed, ShedReason, Shedder, Ticket};
pub use sliding::Sliding;
pub use splitmix::SplitMix64;
pub use ward::{
    BackoffReason, CheckoutRefusal, Checkouts, ConnectPermit, RECONNECT, RECONNECT_CLASSIC,
    Reconnect, Refusal, Slot, Ward, WardPiece,
};
pub use window::{Outcome, Tally, Total, Window};

pub mod _guide;
pub mod grpc;
/// Durations as humane strings for serde, the form every policy record's durations take:
/// one whole number and its largest exact unit written (`"100ms"`, `"90s"`), and parts such
/// as `"1m30s"`, `"1.5s"` or `"1h 30m"` read, exactly or not at all (no rounding, no sign,
/// no overflow). `#[serde(with = "ironward::humane")]` puts the same form on a `Duration`
/// of your own.
///
/// ```
/// # use core::time::Duration;
/// #[derive(serde::Deserialize)]
/// struct Timeout(#[serde(with = "ironward::humane")] Duration);
///
/// let Timeout(read) = serde_json::from_str(r#""1m30s""#).unwrap();
/// assert_eq!(read, Duration::from_secs(90));
/// assert!(serde_json::from_str::<Timeout>(r#""1.5ns""#).is_err());
/// ```
#[cfg(feature = "serde")]
#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
pub mod humane {
    pub use crate::internal::humane::{deserialize, serialize};
}
pub mod http_retry;
pub mod latency;
pub mod retry;

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
