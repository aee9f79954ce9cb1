//! Fleet-wide quotas for [`ironward`]: its [`Period`], [`Bucket`] and [`Sliding`] limiters,
//! one per key, with their state in Redis, so that a quota holds across every process that
//! shares it; and a [`FleetQuotaLayer`] that puts them behind ironward-tower's rate limit.
//!
//! When a service runs on many machines, "a thousand a day per client" must hold for the
//! fleet, not for each machine. go-zero keeps its `PeriodLimit` and `TokenLimiter` in Redis
//! (`core/limit/periodlimit.go`, `tokenlimit.go`); this crate does the same for ironward's
//! limiters, with the caller's clock in microseconds instead of whole seconds, the exact
//! answers of the in-memory types, and go-zero's failover to a local limiter while Redis is
//! away.
//!
//! | type | the in-memory type | answers | keys |
//! | --- | --- | --- | --- |
//! | [`Period`] | `ironward::Period` (go-zero `PeriodLimit`) | [`Usage`](ironward::Usage) | `{name:key}.period` (count, start and latest reading, packed) |
//! | [`Limits`] | `ironward::Limits` over buckets, logs and periods (each an `ironward_tokio::Quota`), all or nothing | [`LimitsReason`](ironward::LimitsReason) or admitted | each limit's as its kind keeps them: `{name:key}.b<i>` and `.b<i>.ts`, `.l<i>` and `.l<i>.ts`, `.p<i>` |
//! | [`Periods`] | `ironward::Limits` over `ironward::Period`s: a [`Limits`] of periods | [`LimitsReason`](ironward::LimitsReason) or admitted | `{name:key}.p0`, `.p1`, ... (one per [`Term`], packed as a period's) |
//! | [`Reservation`] | `ironward::Reservation` of a `Period`, `Bucket` or `Sliding` (their `reserve` and `settle`) | a reservation, or refused | the limiter's |
//! | [`Bucket`] | `ironward::Bucket` (go-zero `TokenLimiter`) | `bool` | `{name:key}.tokens`, `.ts` |
//! | [`Sliding`] | `ironward::Sliding` | `bool` | `{name:key}.log` (costs with a running sum), `.ts` |
//! | [`FleetQuotaLayer`] | `ironward_tower::QuotaLayer` | [`Limited`](ironward_tower::Limited) (429) | those of its limit |
//!
//! Each `take` returns an [`Answer`]: the in-memory type's answer, its `next()` right after
//! (the `Retry-After` of a refusal, with no second round trip), and the [`Source`] that
//! decided. Each `next` is the in-memory type's `next()`, read-only. A cost per request
//! (tokens, bytes) is `Period::take_n` and `next_n`, `Sliding::take_n` and `next_n`, and
//! `Bucket::take`'s `n`, each the core's cost form in one script, with the core's
//! `next_n(now, cost)` in its answer.
//!
//! ```no_run
//! use std::time::{Duration, SystemTime, UNIX_EPOCH};
//! use ironward::Usage;
//! use ironward_redis::{Options, Period, Store};
//!
//! # #[tokio::main]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let store = Store::connect("redis://127.0.0.1/", Options::default()).await?;
//! let limit = Period::new(&store, "login", 5, Duration::from_secs(60));
//! let now = SystemTime::now().duration_since(UNIX_EPOCH)?; // the fleet's clock
//! match limit.take("alice", now).await {
//!     Ok(answer) if answer.value != Usage::Over => { /* serve */ }
//!     Ok(answer) => println!("over the quota; retry after {:?}", answer.next),
//!     Err(err) => println!("refused: {err}"), // Redis too slow: a refusal
//! }
//! # Ok(())
//! # }
//! ```
//!
//! # Tower
//!
//! With the `tower` feature, [`FleetQuotaLayer`] is `ironward_tower::QuotaLayer` with its
//! budgets in Redis: the
//! same [`Quota`](ironward_tokio::Quota), the same [`Limited`](ironward_tower::Limited)
//! refusal with its HTTP fields, so that a service moves from one process to a fleet by
//! changing the layer and nothing else.
//!
//! # Features
//!
//! - `tower` (off by default): the [`FleetQuotaLayer`], with ironward-tower, tower and http;
//!   without it the crate builds on ironward, ironward-tokio and redis alone.
//! - `metrics` (off by default): every decision, failover and round trip is counted through the
//!   [`metrics`](https://docs.rs/metrics) facade ([`_guide::metrics`]).
//!
//! # Guide
//!
//! The [`_guide`] has the long form: [the scripts and keys](_guide::scripts),
//! [batches](_guide::batches), [equivalence with the core](_guide::equivalence),
//! [clocks](_guide::clocks), [failover and its bounds](_guide::failover),
//! [eviction](_guide::eviction), [metrics and events](_guide::metrics) and
//! [edge cases](_guide::edge_cases).

#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod _guide;
mod admit;
mod answer;
mod batch;
mod blocked;
mod bucket;
mod conn;
mod counted;
mod decide;
mod error;
mod group;
mod limits;
mod local;
mod meter;
mod period;
mod periods;
#[cfg(feature = "tower")]
mod rate_limit;
mod reservation;
mod script;
mod sliding;
mod store;
mod term;
mod wire;

pub use admit::OnKey;
pub use answer::Answer;
pub use bucket::Bucket;
pub use error::StoreError;
pub use limits::Limits;
pub use period::Period;
pub use periods::Periods;
#[cfg(feature = "tower")]
#[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
pub use rate_limit::{FleetQuotaFuture, FleetQuotaLayer, FleetQuotaService};
pub use reservation::Reservation;
pub use sliding::Sliding;
pub use store::{OPTIONS, OnTimeout, Options, Source, Stats, Store, Time};
pub use term::Term;

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
