//! gRPC retries and hedging by proposal A6 ("gRPC Retry Design") for tonic clients, as a
//! tower layer.
//!
//! [`GrpcRetryLayer`] reads the gRPC service config (its JSON, or an
//! [`ironward::grpc::ServiceConfig`]) and retries each call by its method's `retryPolicy`:
//! A6's backoff or the server's `grpc-retry-pushback-ms`, `grpc-previous-rpc-attempts` on each
//! retry, the call's deadline from `grpc-timeout` (the waits never pass it), and the channel's
//! `retryThrottling`; or hedges it by its `hedgingPolicy`, a hedge every `hedgingDelay` until
//! one commits, the others cancelled. Every decision is the core's
//! ([`ironward::grpc::RetryPlan`], [`ironward::grpc::HedgingPlan`]); this crate sends, sleeps
//! on a [`Clock`] and draws from [`Dice`], both injectable for tests.
//!
//! The [`retry`] module says what one call does, step by step.
//!
//! # Where this differs from grpc-go
//!
//! The decisions are grpc-go's (`stream.go`), with the differences the core lists
//! ([`ironward::grpc`]). The layer adds these, each where A6 is silent or a tower layer
//! cannot do what grpc-go's transport does:
//!
//! - **The request body is read whole before the first attempt** (up to the retry buffer),
//!   where grpc-go sends each message as it comes and keeps a copy. A call with a retry policy
//!   whose client stream waits for a response before it ends would wait for ever: give
//!   bidirectional streaming methods no retry policy.
//! - **Past the retry buffer the call is sent once**, committed before it starts; grpc-go
//!   commits when its buffer overflows, which may be after an attempt has failed and been
//!   retried.
//! - **Transparent retries** (an attempt the server never saw, resent without counting) are
//!   the transport's: tonic's `Channel` does not report them, so a refused connection is
//!   an `UNAVAILABLE` attempt, counted and retried by the policy.
//! - **A response with a non-200 HTTP status and no `grpc-status`** has ordinary headers and
//!   commits the call, where grpc-go maps the HTTP status to a code it may retry.
//! - **Hedging** follows A6 alone, as grpc-go implements none (the core's
//!   [`HedgingPlan`](ironward::grpc::HedgingPlan) lists its readings where A6 is silent); a
//!   loser is cancelled by dropping its response future, which for a tonic `Channel` resets
//!   its HTTP/2 stream.
//! - **An attempt is not cut at the deadline by this layer**: its `grpc-timeout` says the time
//!   left, which the server and tonic's `Channel` enforce.
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

pub mod retry;
mod timeout;

pub use ironward_tokio::{Clock, Dice, Hand};
pub use retry::GrpcRetryLayer;

/// The README's examples, compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
