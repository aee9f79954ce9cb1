//! tower layers for [`ironward`]: the core's policies, fed by the real clock, randomness and
//! CPU reading.
//!
//! Each layer owns the sources its policy reads ([`Clock`], [`Dice`], [`Cpu`]) and hands their
//! readings to the pure `ironward` core on every request; the layers add no policy of their own.
//! They work on axum, hyper and tonic services alike, and around any client `tower::Service`.
//!
//! | module | layer | policy | refusal | HTTP |
//! | --- | --- | --- | --- | --- |
//! | [`breaker`] | [`BreakerLayer`] (client side) | [`ironward::SreBreaker`]: SRE adaptive throttling, or [`ironward::ClassicBreaker`]: closed, open, half-open, picked by the policy | [`BreakerRefused`] | 503, with `Retry-After` while a classic breaker is open |
//! | [`shed`] | [`ShedLayer`] | [`ironward::Shedder`]: refuse while hot and full, the less critical first | [`ShedRefused`] | 503 |
//! | [`rate_limit`] | [`QuotaLayer`] | [`ironward::Bucket`], [`ironward::Sliding`] or [`ironward::Period`], global or keyed | [`Limited`] | 429 + `Retry-After`, `RateLimit`, `RateLimit-Policy` |
//! | [`gate`] | [`GateLayer`] | [`ironward::Gate`]: a concurrency limit that never queues | [`GateFull`] | 503 |
//! | [`limiter`] | [`LimiterLayer`] (server or client side) | [`ironward::Limiter`]: an adaptive concurrency limit that follows latency, admitting by criticality, with an optional bounded [`Queue`] | [`LimiterRefused`] | 503 |
//! | [`deadline`] | [`DeadlineLayer`] | [`ironward::Deadline`]: a per-request budget | [`DeadlineExceeded`] | 504 |
//! | [`protect`] | [`ProtectLayer`] (server side, `axum`) | the shedder, the rate limit, the limiter or the gate, and the deadline, each optional, in [one order](protect#the-order) | none: answered itself | each piece's |
//! | [`client`] | [`ClientLayer`] (client side) | the deadline, the retry, the breaker and the limiter, each optional, in [one order](client#the-order) | each piece's, boxed | |
//! | [`retry`] | [`HttpRetryLayer`] (client side) | [`ironward::http_retry::Run`]: RFC 9110 retries within a time budget, each attempt under a timeout, an optional [`ironward::Budget`] | [`GaveUp`] when no response; a response carries [`Retried`] | honours `Retry-After` |
//! | [`chaos`] | [`ChaosLayer`] (server or client side) | [`ironward::chaos::Injector`]: faults injected on purpose (an error, a latency, an abort, a replaced response), replayable from a seed | none: an injected error is answered, by default 503 | 503 or 500 with `x-ironward-chaos` |
//!
//! The layers share four more modules: [`classify`], which results count as failures for the
//! breaker and the shedder and how a call settles the limiter; [`criticality`], where the
//! limiter and the shedder read each request's class; [`cpu`], the CPU reading the shedder
//! runs on; and [`http`], each refusal's conventional response. Every item is also
//! re-exported here, at the crate root.
//!
//! The breaker protects a backend that fails, the shedder this server's CPU, the limiter a
//! backend (or this server) that slows down; [`ironward::Limiter`]'s docs say which when.
//!
//! Every refusal is a small error boxed into `tower::BoxError`, so a caller tests it with
//! `err.is::<BreakerRefused>()` and reads the numbers that decided it from the refusal (its
//! `reason()`, the core's own, or a [`Limited`]'s quota and wait): the `Box` is a refusal's
//! one allocation, and nothing is formatted until it is displayed. [`http::status_for`]
//! and [`http::response_for`] map them to their conventional responses, and with the `axum`
//! feature `ironward_tower::axum::handle_error` does it in one line. On an axum server,
//! [`ProtectLayer`] takes the server-side layers as one layer that answers its refusals with
//! that same function, decides the shedder, the rate limit and the limiter on one clock
//! reading, runs each request in one future, and puts them in
//! [the order](protect#the-order) whose reasons its docs give:
//!
//! ```
//! # #[cfg(feature = "axum")] {
//! use std::time::Duration;
//! use axum::{Router, body::Body, routing::get};
//! use http::{Request, StatusCode};
//! use ironward::SHED;
//! use ironward_tower::{Cpu, CpuSampler, DeadlineLayer, GateLayer, ProtectLayer, Quota};
//! use ironward_tower::{QuotaLayer, ShedLayer};
//! use tower::ServiceExt;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let cpu = CpuSampler::new();
//! let app: Router = Router::new().route("/", get(|| async { "hello" })).layer(
//!     ProtectLayer::new()
//!         .shed(ShedLayer::new(SHED, Cpu::from(&cpu)))
//!         .quota(QuotaLayer::by_peer(Quota::bucket(10.0, 20.0), 10_000))
//!         .gate(GateLayer::new(256))
//!         .deadline(DeadlineLayer::new(Duration::from_secs(2))),
//! );
//! let response = app.oneshot(Request::new(Body::empty())).await.unwrap();
//! assert_eq!(response.status(), StatusCode::OK);
//! # }
//! # }
//! ```
//!
//! # Features
//!
//! - `axum` (off by default): [`axum::handle_error`], each refusal's response in an axum app,
//!   and [`ProtectLayer`], the server stack as one layer.
//! - `config` (off by default, implies `axum`): [`config`], both stacks from a file, reloaded live.
//! - `metrics` (off by default): every refusing layer, [`HttpRetryLayer`] and [`ChaosLayer`]
//!   count their decisions through the [`metrics`](https://docs.rs/metrics) facade ([`_guide::metrics`]).
//!
//! # Guide
//!
//! The [`_guide`] has the long form: [shared state](_guide::shared_state),
//! [live retuning](_guide::retuning), [metrics and events](_guide::metrics),
//! [shadow mode](_guide::shadow), [clocks in tests](_guide::clocks), the
//! [adaptive limiter](_guide::limiter) and [what a client is told](_guide::wire).

#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod _guide;
#[cfg(feature = "axum")]
#[cfg_attr(docsrs, doc(cfg(feature = "axum")))]
pub mod axum;
pub mod breaker;
pub mod chaos;
pub mod classify;
pub mod client;
#[cfg(feature = "config")]
#[cfg_attr(docsrs, doc(cfg(feature = "config")))]
pub mod config;
pub mod cpu;
pub mod criticality;
pub mod deadline;
pub mod gate;
mod head;
pub mod http;
pub mod limiter;
mod lock;
mod meter;
#[cfg(feature = "axum")]
#[cfg_attr(docsrs, doc(cfg(feature = "axum")))]
pub mod protect;
pub mod rate_limit;
pub mod retry;
pub mod shed;
mod source;
mod tuner;

pub use breaker::{BreakerFuture, BreakerLayer, BreakerRefused, BreakerService};
pub use chaos::{CHAOS_HEADER, ChaosAnswer, ChaosFuture, ChaosLayer, ChaosService, PlainAnswer};
pub use classify::{
    Answer, AnyError, Classify, Failing, Grade, GrpcFailures, HttpFailures, Overloads, ShedFailures,
};
pub use client::{ClientFuture, ClientLayer, ClientService};
pub use cpu::{Cpu, CpuDial, CpuSampler};
pub use criticality::{CriticalityHeader, ReadCriticality};
pub use deadline::{
    DeadlineExceeded, DeadlineFuture, DeadlineLayer, DeadlineService, RequestDeadline, grpc_timeout,
};
pub use gate::{GateFull, GateFuture, GateLayer, GateService};
pub use ironward_tokio::{Clock, Dice, LimiterRefusal, Mode, QUEUE, Queue, Queued};
pub use limiter::{LimiterFuture, LimiterLayer, LimiterRefused, LimiterService};
#[cfg(feature = "axum")]
pub use protect::{ProtectFuture, ProtectLayer, ProtectService};
pub use rate_limit::{
    ClientAddr, Headroom, KindMismatch, Limited, ProxyHeader, Quota, QuotaFuture, QuotaLayer,
    QuotaService, QuotaTuner,
};
pub use retry::{
    ClassifyError, Fault, FinalErrors, GaveUp, HttpRetryFuture, HttpRetryLayer, HttpRetryService,
    Retried, Stop,
};
pub use shed::{ShedFuture, ShedLayer, ShedRefused, ShedService};
pub use tuner::Tuner;

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
