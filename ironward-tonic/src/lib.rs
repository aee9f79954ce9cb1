//! gRPC retries and hedging by proposal A6 ("gRPC Retry Design") for tonic clients, as a
//! tower layer.
//!
//! [`GrpcRetryLayer`] reads the gRPC service config (its JSON, or an
//! [`ironward::grpc::ServiceConfig`]) and retries each call by its method's `retryPolicy`:
//! A6's backoff or the server's `grpc-retry-pushback-ms`, `grpc-previous-rpc-attempts` on each
//! retry, the call's deadline from `grpc-timeout` (the waits never pass it, and the call is
//! cut there with `DEADLINE_EXCEEDED`), and the channel's
//! `retryThrottling`; or hedges it by its `hedgingPolicy`, a hedge every `hedgingDelay` until
//! one commits, the others cancelled. Every decision is the core's
//! ([`ironward::grpc::RetryPlan`], [`ironward::grpc::HedgingPlan`]); this crate sends, sleeps
//! on a [`Clock`] and draws from [`Dice`], both injectable for tests.
//!
//! The [`retry`] module says what one call does, step by step.
//!
//! # Layers
//!
//! | layer | where | what it does |
//! | --- | --- | --- |
//! | [`GrpcRetryLayer`] | around a client's `Channel` | retries or hedges each call by its method's policy in the service config (gRPC A6) |
//! | [`GrpcChaosLayer`] | around a client's `Channel`, or on a server (`Server::builder().layer(...)`) | injects a chaos policy's faults ([`ironward::chaos`]): a status at once, a delay, a call that never answers, an answer replaced by a status; seeded, it replays call by call |
//!
//! Put the chaos layer inside the retry layer to see the retries at work: each attempt is a
//! call of its own to the chaos layer, drawn its own fault ([`_guide::chaos`]).
//!
//! # Examples
//!
//! ```
//! use std::time::Duration;
//! use http::{Request, Response};
//! use ironward_tonic::{Clock, Dice, GrpcRetryLayer};
//! use tower::{Layer, ServiceExt, service_fn};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! // A server whose first answer is a trailers-only UNAVAILABLE with a 500 ms pushback.
//! let calls = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
//! let seen = calls.clone();
//! let server = service_fn(move |request: Request<tonic::body::Body>| {
//!     let n = seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
//!     let previous = request.headers().get("grpc-previous-rpc-attempts").cloned();
//!     async move {
//!         let response = match n {
//!             0 => Response::builder().header("grpc-status", "14")
//!                 .header("grpc-retry-pushback-ms", "500"),
//!             _ => Response::builder().header("previous", previous.unwrap()),
//!         };
//!         response.body(tonic::body::Body::empty())
//!     }
//! });
//! let (clock, _) = Clock::manual(Duration::ZERO);
//! let layer = GrpcRetryLayer::from_json(r#"{"methodConfig": [{"name": [{"service": "pkg.S"}],
//!     "retryPolicy": {"maxAttempts": 2, "initialBackoff": "1s", "maxBackoff": "1s",
//!     "backoffMultiplier": 1, "retryableStatusCodes": ["UNAVAILABLE"]}}]}"#)
//!     .unwrap()
//!     .with_clock(clock.clone())
//!     .with_dice(Dice::from_fn(|| 0.5));
//! let request = Request::builder().uri("/pkg.S/M").body(tonic::body::Body::empty()).unwrap();
//! let response = layer.layer(server).oneshot(request).await.unwrap();
//! assert_eq!(response.headers()["previous"], "1");
//! assert_eq!(clock.now(), Duration::from_millis(500), "the pushback, not the backoff");
//! # }
//! ```
//!
//! # Features
//!
//! - `metrics` (off by default): every attempt, finished call and wait, through the
//!   [`metrics`](https://docs.rs/metrics) facade ([`_guide::metrics`]).
//!
//! # Guide
//!
//! The [`_guide`] has the long form: [where this differs from grpc-go](_guide::differences),
//! [metrics and events](_guide::metrics) and [chaos](_guide::chaos). `cargo run -p ironward-tonic --example flaky` runs a
//! server and a client in one process.

pub mod _guide;
pub mod chaos;
pub mod retry;
mod timeout;

pub use chaos::GrpcChaosLayer;
pub use ironward_tokio::{Clock, Dice, Hand};
pub use retry::GrpcRetryLayer;

/// The README's examples, compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
