//! tower layers for [`ironward`]: the core's policies, fed by the real clock, randomness and
//! CPU reading.
//!
//! Each layer owns the sources its policy reads ([`Clock`], [`Dice`], [`Cpu`]) and hands their
//! readings to the pure `ironward` core on every request; the layers add no policy of their own.
//! They work on axum, hyper and tonic services alike, and around any client `tower::Service`.
//!
//! | module | layer | policy | refusal | HTTP |
//! | --- | --- | --- | --- | --- |
//! | [`breaker`] | [`BreakerLayer`] (client side) | [`ironward::Breaker`]: SRE adaptive throttling | [`BreakerRefused`] | 503 |
//! | [`shed`] | [`ShedLayer`] | [`ironward::Shedder`]: refuse while hot and full, the less critical first | [`ShedRefused`] | 503 |
//! | [`rate_limit`] | [`RateLimitLayer`] | [`ironward::Bucket`], [`ironward::Sliding`] or [`ironward::Period`], global or keyed | [`Limited`] | 429 + `Retry-After`, `RateLimit`, `RateLimit-Policy` |
//! | [`gate`] | [`GateLayer`] | [`ironward::Gate`]: a concurrency limit that never queues | [`GateFull`] | 503 |
//! | [`limiter`] | [`LimiterLayer`] (server or client side) | [`ironward::Limiter`]: an adaptive concurrency limit that follows latency, admitting by criticality, with an optional bounded [`Queue`] | [`LimiterRefused`] | 503 |
//! | [`deadline`] | [`DeadlineLayer`] | [`ironward::Deadline`]: a per-request budget | [`DeadlineExceeded`] | 504 |
//! | [`retry`] | [`HttpRetryLayer`] (client side) | [`ironward::http_retry::Run`]: RFC 9110 retries within a time budget, each attempt under a timeout, an optional [`ironward::Budget`] | [`GaveUp`] when no response; a response carries [`Retried`] | honours `Retry-After` |
//!
//! The layers share four more modules: [`classify`], which results count as failures for the
//! breaker and the shedder and how a call settles the limiter; [`criticality`], where the
//! limiter and the shedder read each request's class; [`cpu`], the CPU reading the shedder
//! runs on; and [`http`], each refusal's conventional response. Every item is also
//! re-exported here, at the crate root.
//!
//! The breaker protects a backend that fails, the shedder this server's CPU, the limiter a
//! backend (or this server) that slows down; [`ironward::Limiter`]'s docs say when to use
//! which.
//!
//! Every refusal is a small error boxed into `tower::BoxError`, so a caller tests it with
//! `err.is::<BreakerRefused>()` and reads the numbers that decided it from the refusal (its
//! `reason()`, the core's own, or a [`Limited`]'s quota and wait): the `Box` is a refusal's
//! one allocation, and nothing is formatted until it is displayed. [`http::status_for`]
//! and [`http::response_for`] map them to their conventional responses, and with the `axum`
//! feature `ironward_tower::axum::handle_error` does it in one line:
//!
//! ```
//! # #[cfg(feature = "axum")] {
//! use std::time::Duration;
//! use axum::{Router, body::Body, error_handling::HandleErrorLayer, routing::get};
//! use http::{Request, StatusCode};
//! use ironward::SHED;
//! use ironward_tower::{Cpu, CpuSampler, DeadlineLayer, GateLayer, Limit};
//! use ironward_tower::{RateLimitLayer, ShedLayer};
//! use tower::{ServiceBuilder, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let cpu = CpuSampler::new();
//! let app: Router = Router::new().route("/", get(|| async { "hello" })).layer(
//!     ServiceBuilder::new()
//!         .layer(HandleErrorLayer::new(ironward_tower::axum::handle_error))
//!         .layer(ShedLayer::new(SHED, Cpu::from(&cpu)))
//!         .layer(RateLimitLayer::by_peer(Limit::bucket(10.0, 20.0), 10_000))
//!         .layer(GateLayer::new(256))
//!         .layer(DeadlineLayer::new(Duration::from_secs(2))),
//! );
//! let response = app.oneshot(Request::new(Body::empty())).await.unwrap();
//! assert_eq!(response.status(), StatusCode::OK);
//! # }
//! # }
//! ```
//!
//! # Shared state
//!
//! A layer holds one core value behind an `Arc`: every service it makes, on every route and
//! connection, and every clone of those, share it, so cloning never multiplies capacity and a
//! limit holds across connections. The lock is a `std::sync::Mutex` held only for the core's
//! decision, never across an await. The gate takes none: its count and limit are one atomic
//! word ([`ironward::SharedGate`]), entered and left by a compare-and-swap.
//!
//! # Live retuning
//!
//! Every layer that holds a core value hands out a tuner ([`BreakerLayer::tuner`],
//! [`ShedLayer::tuner`], [`RateLimitLayer::tuner`], [`GateLayer::tuner`],
//! [`LimiterLayer::tuner`]): one `Arc` clone of
//! the shared state, whose `retune` changes the policy in place for every service and clone
//! at once, on their next request, and keeps the core's history (the breaker's window, the
//! requests in flight, a bucket's tokens, a window's stamps, the holders of a gate), so a
//! configuration reload neither forgets an outage nor hands out a fresh allowance. A rate
//! limit of another kind than the one in force is refused with [`KindMismatch`].
//!
//! # Metrics
//!
//! With the `metrics` feature, every refusing layer counts its decisions through the
//! [`metrics`](https://docs.rs/metrics) facade, to whichever recorder the application installs
//! (a Prometheus or OpenTelemetry exporter); without it nothing is recorded and no dependency
//! is pulled in. Each layer registers its handles once, when it first makes a service
//! (`Layer::layer`), its name then final: a layer renamed with `with_name` leaves no series
//! under `name="default"`; the limiter's series split by criticality register on their first
//! count, so only the classes a service sees appear. A decision then costs an increment on a handle, and nothing at all
//! while no recorder is installed. Names follow the OpenTelemetry
//! conventions: dot-separated, lower case, the unit in braces for a count of things.
//!
//! | name | kind | unit | labels | what |
//! | --- | --- | --- | --- | --- |
//! | `ironward.requests` | counter | `{request}` | `piece`, `name`, `outcome`, `reason` (refused and shadowed only) | calls a layer decided on |
//! | `ironward.breaker.ratio` | gauge | `1` | `name` | the drop fraction the breaker's last refusal computed, in `[0, 1]` |
//! | `ironward.shed.in_flight` | gauge | `{request}` | `name` | calls the shedder admitted and has not yet seen complete, set on each decision and each completion |
//! | `ironward.limiter.limit` | gauge | `{request}` | `name` | the limiter's limit, set when its layer makes a service, after each completion and at each retune |
//! | `ironward.retry.attempts` | counter | `{attempt}` | `name`, `kind` (`first` or `retry`) | attempts [`HttpRetryLayer`] sent, as [`Retried::attempts`] counts them |
//! | `ironward.retry.calls` | counter | `{call}` | `name`, `outcome` (`success` or the stop's label: `not_retryable`, `not_replayable`, `attempts_exhausted`, `budget_exhausted`, `server_delay_exceeds_cap`, `invalid_retry_after`, `invalid_settings`, `invalid_input`, `throttled`, `refused`) | calls [`HttpRetryLayer`] finished, labelled by [`Retried::outcome`] |
//! | `ironward.retry.wait` | histogram | `s` | `name` | each wait [`HttpRetryLayer`] decided before a retry, in seconds |
//!
//! The labels take a small fixed set of values:
//!
//! - `piece`: `breaker`, `shed`, `rate_limit`, `gate`, `limiter` or `deadline`;
//! - `outcome`: `admitted`, `refused`, or `shadowed`: a call a layer in [`Mode::Shadow`]
//!   would have refused and let through (a shadow layer counts no `refused`);
//! - `reason`, on refusals and shadowed calls: `throttled` (breaker), `overloaded`, `cooling`
//!   or `floor` (shed: the [`ShedReason`](ironward::ShedReason)'s heat, or a class held
//!   under the floor a more critical class's refusal raised), `limited` (rate limit), `full`
//!   (gate), `full`, `floor`, `queue` or `expired` (limiter: no room for the class, a class
//!   under the floor, turned away by the queue, or out of time in it), `exceeded` or
//!   `elapsed` (deadline: the time had run out when the request arrived, or it
//!   ran out while the inner service worked on the call, which the enforcing layer cuts and
//!   a shadow one lets finish). A call with a deadline is counted once, when it ends:
//!   `admitted` if it answered in time (a response ready at the deadline is in time) or was
//!   dropped before its deadline, `elapsed` if it was cut or dropped after it;
//! - `criticality`, on the limiter's series only: the request's class, `sheddable`,
//!   `sheddable_concurrent`, `critical` or `critical_plus`;
//! - `name`: the layer's name, `"default"` unless set with [`BreakerLayer::with_name`],
//!   [`ShedLayer::with_name`], [`GateLayer::with_name`], [`LimiterLayer::with_name`],
//!   [`DeadlineLayer::with_name`],
//!   [`HttpRetryLayer::with_name`] or, for
//!   a rate limit, its policy name, [`RateLimitLayer::named`], so that two breakers in one
//!   process are told apart.
//!
//! The breaker's gauge is set on refusals only: an admitted call's drop fraction is not
//! returned by the core, and reading it would scan the window a second time on every call.
//! For the standing throttle now, read [`BreakerLayer::ratio`].
//!
//! Whatever the feature, each refusal is a `tracing` event at the `DEBUG` level (a refusal is
//! an answer, not an error), with the layer's `name`, its `outcome` (`refused` or `shadowed`)
//! and the numbers that decided it as fields.
//!
//! # Shadow mode
//!
//! The breaker, the shedder, the rate limit, the gate and the deadline each take
//! `with_mode(Mode::Shadow)` (and report it with `mode()`): the layer decides exactly as it
//! would enforcing, state changes and all, but lets a call it would refuse through to the
//! inner service, reporting it as `shadowed`, so that a tighter policy can be tried on real
//! traffic before it refuses anyone. A shadow [`DeadlineLayer`] cuts no call: one that runs
//! past its deadline finishes with its own response and is reported when it ends. [`Mode`]
//! says what each layer does with a shadowed call, and where the would-be refusal can be
//! read.
//!
//! # Time in tests
//!
//! The default [`Clock`] is tokio's monotonic clock, so `tokio::time::pause` and `advance` drive
//! every layer deterministically; [`Dice::seeded`] and [`Cpu::scripted`] script the rest.

#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "axum")]
#[cfg_attr(docsrs, doc(cfg(feature = "axum")))]
pub mod axum;
pub mod breaker;
pub mod classify;
pub mod cpu;
pub mod criticality;
pub mod deadline;
pub mod gate;
pub mod http;
pub mod limiter;
mod lock;
mod meter;
mod mode;
pub mod rate_limit;
pub mod retry;
pub mod shed;
mod source;

pub use breaker::{BreakerFuture, BreakerLayer, BreakerRefused, BreakerService, BreakerTuner};
pub use classify::{
    AnyError, Classify, Grade, GrpcFailures, HttpFailures, Overloads, ShedFailures,
};
pub use cpu::{Cpu, CpuDial, CpuSampler};
pub use criticality::{CriticalityHeader, ReadCriticality};
pub use deadline::{
    DeadlineExceeded, DeadlineFuture, DeadlineLayer, DeadlineService, RequestDeadline, grpc_timeout,
};
pub use gate::{GateFull, GateFuture, GateLayer, GateService, GateTuner};
pub use ironward_tokio::{Clock, Dice, LimiterRefusal, QUEUE, Queue, Queued};
pub use limiter::{LimiterFuture, LimiterLayer, LimiterRefused, LimiterService, LimiterTuner};
pub use mode::Mode;
pub use rate_limit::{
    ClientAddr, Headroom, KindMismatch, Limit, Limited, ProxyHeader, RateLimitFuture,
    RateLimitLayer, RateLimitService, RateLimitTuner,
};
pub use retry::{
    ClassifyError, Fault, FinalErrors, GaveUp, HttpRetryFuture, HttpRetryLayer, HttpRetryService,
    Retried, Stop,
};
pub use shed::{ShedFuture, ShedLayer, ShedRefused, ShedService, ShedTuner};

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
