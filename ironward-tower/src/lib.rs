//! tower layers for [`ironward`]: the core's policies, fed by the real clock, randomness and
//! CPU reading.
//!
//! Each layer owns the sources its policy reads ([`Clock`], [`Dice`], [`Cpu`]) and hands their
//! readings to the pure `ironward` core on every request; the layers add no policy of their own.
//! They work on axum, hyper and tonic services alike, and around any client `tower::Service`.
//!
//! | layer | policy | refusal | HTTP |
//! | --- | --- | --- | --- |
//! | [`BreakerLayer`] (client side) | [`ironward::Breaker`]: SRE adaptive throttling | [`BreakerRefused`] | 503 |
//! | [`ShedLayer`] | [`ironward::Shedder`]: refuse while hot and full | [`ShedRefused`] | 503 |
//! | [`RateLimitLayer`] | [`ironward::Bucket`], [`ironward::Sliding`] or [`ironward::Period`], global or keyed | [`Limited`] | 429 + `Retry-After`, `RateLimit`, `RateLimit-Policy` |
//! | [`GateLayer`] | [`ironward::Gate`]: a concurrency limit that never queues | [`GateFull`] | 503 |
//! | [`DeadlineLayer`] | [`ironward::Deadline`]: a per-request budget | [`DeadlineExceeded`] | 504 |
//! | [`HttpRetry`] (client side; a `tower::retry::Policy`) | [`ironward::http_retry`] decisions, an optional [`ironward::Budget`] | none: the response carries [`Attempts`] | honours `Retry-After` |
//!
//! Every refusal is a small error boxed into `tower::BoxError`, so a caller tests it with
//! `err.is::<BreakerRefused>()`; the zero-sized ones cost no allocation. [`http::status_for`]
//! and [`http::response_for`] map them to their conventional responses, and with the `axum`
//! feature `axum::handle_error` does it in one line:
//!
//! ```
//! # #[cfg(feature = "axum")] {
//! use std::time::Duration;
//! use axum::{Router, error_handling::HandleErrorLayer, routing::get};
//! use ironward::SHED;
//! use ironward_tower::{Cpu, CpuSampler, DeadlineLayer, GateLayer, Limit, RateLimitLayer, ShedLayer};
//! use tower::ServiceBuilder;
//!
//! let cpu = CpuSampler::new();
//! let app: Router = Router::new().route("/", get(|| async { "hello" })).layer(
//!     ServiceBuilder::new()
//!         .layer(HandleErrorLayer::new(ironward_tower::axum::handle_error))
//!         .layer(ShedLayer::new(SHED, Cpu::from(&cpu)))
//!         .layer(RateLimitLayer::by_peer(Limit::bucket(10.0, 20.0), 10_000))
//!         .layer(GateLayer::new(256))
//!         .layer(DeadlineLayer::new(Duration::from_secs(2))),
//! );
//! # }
//! ```
//!
//! # Shared state
//!
//! A layer holds one core value behind an `Arc`: every service it makes, on every route and
//! connection, and every clone of those, share it, so cloning never multiplies capacity and a
//! limit holds across connections. The lock is a `std::sync::Mutex` held only for the core's
//! decision, never across an await.
//!
//! # Time in tests
//!
//! The default [`Clock`] is tokio's monotonic clock, so `tokio::time::pause` and `advance` drive
//! every layer deterministically; [`Dice::seeded`] and [`Cpu::scripted`] script the rest.

#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod lock;
mod source;

pub use ironward_tokio::{Clock, Dice};
pub use source::{Cpu, CpuDial};

// -- breaker, shedder, CPU sampler, classifiers (helper T1) --

mod breaker;
mod classify;
mod cpu;
mod shed;

pub use breaker::{BreakerFuture, BreakerLayer, BreakerRefused, BreakerService};
pub use classify::{AnyError, Classify, GrpcFailures, HttpFailures, ShedFailures};
pub use cpu::CpuSampler;
pub use shed::{ShedFuture, ShedLayer, ShedRefused, ShedService};

// -- rate limits (helper T2) --

mod rate_limit;

pub use rate_limit::{Limit, Limited, RateLimitFuture, RateLimitLayer, RateLimitService};

// -- gate, deadline, HTTP mapping (helper T3) --

#[cfg(feature = "axum")]
#[cfg_attr(docsrs, doc(cfg(feature = "axum")))]
pub mod axum;
mod deadline;
mod gate;
pub mod http;

pub use deadline::{
    DeadlineExceeded, DeadlineFuture, DeadlineLayer, DeadlineService, RequestDeadline, grpc_timeout,
};
pub use gate::{GateFull, GateFuture, GateLayer, GateService};

// -- HTTP retry policy (issue 5) --

mod retry;

pub use retry::{Attempts, Fault, FinalErrors, HttpRetry, RetryStop};

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
