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
//! - **The deadline is cut on tokio's timer**, whatever clock the layer reads, where grpc-go
//!   cuts on its context's; the call then ends with `DEADLINE_EXCEEDED`, as in grpc-go (the
//!   [`retry`] module's "The deadline").
//! - **A malformed `grpc-timeout` from the caller fails the call** with `INTERNAL` before it
//!   is sent, the answer grpc-go's server gives it; grpc-go's client forwards none ("The
//!   caller's `grpc-timeout`").
//!
//! # Metrics
//!
//! With the `metrics` feature, the layer counts what it does through the
//! [`metrics`](https://docs.rs/metrics) facade, to whichever recorder the application installs
//! (a Prometheus or OpenTelemetry exporter); without it nothing is recorded and no dependency
//! is pulled in. It registers its handles once, when it first makes a service
//! (`Layer::layer`), its name then final: a layer renamed with
//! [`GrpcRetryLayer::with_name`] leaves no series under `name="default"`. An attempt then
//! costs an increment on a handle. The names, units and labels are those of
//! `ironward-tower`'s and `ironward-reqwest`'s retries
//! ([`ironward_tokio::meter::GrpcRetries`]), so one query reads the HTTP and the gRPC edges.
//!
//! | name | kind | unit | labels | what |
//! | --- | --- | --- | --- | --- |
//! | `ironward.retry.attempts` | counter | `{attempt}` | `name`, `kind` (`first`, `retry` or `hedge`) | attempts the layer sent: a call's first, each retry of a retry policy, each hedge after a hedged call's first |
//! | `ironward.retry.calls` | counter | `{call}` | `name`, `outcome` (`success` or the stop's label) | calls the layer finished, by how they ended |
//! | `ironward.retry.wait` | histogram | `s` | `name` | each wait the layer decided before a retry (the backoff or the pushback), in seconds |
//!
//! The `outcome` of a call is `success` (its status `OK`), or the label of the gRPC
//! [`Stop`](ironward::grpc::Stop) that ended it: `not_retryable` (a code the policy does not
//! retry, or a hedging policy's fatal code), `attempts_exhausted` (`maxAttempts` made),
//! `throttled` (the channel's `retryThrottling`), `pushback` (the server said stop),
//! `committed` (its response headers came, or its body was past the retry buffer, and its
//! status was not `OK`) or `deadline` (the next attempt would start past the deadline, or the
//! deadline passed and the layer cut the call, its body's included). A
//! call committed by its response headers is counted when its body's trailers come, `success`
//! or `committed`; one whose body is dropped before them, like a call whose future is dropped
//! before it ends, counts its attempts but no outcome. A method without a retry or hedging
//! policy is not a retried call: the layer sends it once and counts nothing. A hedged call's
//! attempts overlap, so it records no wait. Every label is registered when the layer makes its
//! first service, at zero.
//!
//! Whatever the feature, each retry is a `tracing` event at `DEBUG`, "retrying request", with
//! the layer's `name`, the failed `attempt` (1 for the first), the `wait`, the `status` (the
//! code's number) and the `reason` (its name, `UNAVAILABLE`); each hedge is one, "hedging
//! request", with its `attempt` (2 for the first hedge) and the time `elapsed` since the call
//! began; a call that stops without succeeding is one, "not retrying", with the `attempts`,
//! the time `waited`, the last `status`, the `stop`'s label and the `reason` as a phrase. None
//! is an error: a refusal to retry is an answer.
//!
//! ```
//! use ironward_tonic::GrpcRetryLayer;
//!
//! // Two channels in one process, told apart by the `name` label.
//! let json = r#"{"methodConfig": [{"name": [{}], "retryPolicy": {"maxAttempts": 3,
//!     "initialBackoff": "0.1s", "maxBackoff": "1s", "backoffMultiplier": 2,
//!     "retryableStatusCodes": ["UNAVAILABLE"]}}]}"#;
//! let payments = GrpcRetryLayer::from_json(json)?.with_name("payments");
//! let search = GrpcRetryLayer::from_json(json)?.with_name("search");
//! assert_eq!((payments.name(), search.name()), ("payments", "search"));
//! # Ok::<(), serde_json::Error>(())
//! ```
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
