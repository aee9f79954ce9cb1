//! reqwest middleware for [`ironward`]: retries that honour `Retry-After`, never replay an
//! unsafe request, fit a time budget that holds, and back off together when a backend is
//! failing.
//!
//! [`RetryMiddleware`] is a [`reqwest_middleware::Middleware`] over the core's retry engine,
//! [`ironward::http_retry::Run`] (a port of the MoonBit package `http_retry`; RFC 9110 for
//! idempotent methods and `Retry-After`). The run decides every attempt; the middleware feeds
//! it what only reqwest knows (the method, whether the body can be copied, the idempotency
//! header, how an error left the request, the raw `Retry-After` fields), the clocks and fresh
//! jitter, cuts each attempt short when the budget runs out, and sleeps with tokio. It
//! optionally consults two guards shared across calls and clients: a retry budget
//! ([`ironward::Budget`], gRPC A6 retry throttling), which stops retries while most attempts
//! fail, and a client circuit breaker ([`ClientBreaker`], Google SRE adaptive throttling),
//! which refuses a growing fraction of attempts.
//!
//! | item | what it is |
//! | --- | --- |
//! | [`RetryMiddleware`] | the middleware, configured by the core's [`Settings`](ironward::http_retry::Settings) |
//! | [`ClientBreaker`] | a breaker several middlewares share, with its clock and dice |
//! | [`Retried`] | the core's record, in every response's extensions: attempts, waits, and why it stopped |
//! | [`Stop`] | the core's reason to stop: a [`StopReason`](ironward::http_retry::StopReason), the budget or the breaker |
//! | [`GaveUp`] | the error when the call ended without a response |
//! | [`IDEMPOTENCY_KEY`] | the header that marks a request as deduplicated by the server |
//! | [`ChaosMiddleware`] | chaos: the faults a [`SharedChaos`] decides (a made-up error, a latency, an abort, a replaced response) injected into each request, after the retry in the chain so that the retry sees them; [`CHAOS_HEADER`] marks a made-up response, [`ChaosAborted`] an aborted request's error |
//! | [`SharedChaos`] | the core's chaos policy shared between clients and tasks, from `ironward-tokio`: each request numbered as it arrives, so a seeded run replays |
//! | [`Dice`], [`Clock`] | the randomness and the clocks, from `ironward-tokio`, scriptable in tests |
//!
//! [`Retried`] and [`Stop`] are re-exported from [`ironward::http_retry`]: `ironward-tower`'s
//! HTTP retry layer leaves the same record, so code that reads it works with either client.
//!
//! # Examples
//!
//! ```no_run
//! use std::time::Duration;
//! use ironward::http_retry::{Settings, StopReason};
//! use ironward_reqwest::{Retried, RetryMiddleware, Stop};
//! use reqwest_middleware::ClientBuilder;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), reqwest_middleware::Error> {
//! let settings = Settings { max_retries: 2, total_budget: Duration::from_secs(10), ..Settings::default() };
//! let retry = RetryMiddleware::new(settings).with_attempt_timeout(Duration::from_secs(3));
//! let client = ClientBuilder::new(reqwest::Client::new()).with(retry).build();
//! // A POST is retried only with an idempotency key the server honours.
//! let response = client
//!     .post("http://127.0.0.1:8080/payments")
//!     .header("idempotency-key", "order-1337")
//!     .body(r#"{"amount": 100}"#)
//!     .send()
//!     .await?;
//! let retried = response.extensions().get::<Retried>().copied().unwrap();
//! if retried.stop == Some(Stop::Decided(StopReason::AttemptsExhausted)) {
//!     eprintln!("still {} after {} attempts", response.status(), retried.attempts);
//! }
//! # Ok(())
//! # }
//! ```
//!
//! # Features
//!
//! - `metrics` (off by default): every attempt, finished call and wait, and the breaker's
//!   decisions, through the [`metrics`](https://docs.rs/metrics) facade ([`_guide::metrics`]).
//!
//! # Guide
//!
//! The [`_guide`] has the long form: [deadlines](_guide::deadlines),
//! [time in tests](_guide::testing), [metrics and events](_guide::metrics) and
//! [edge cases](_guide::edge_cases). `cargo run -p ironward-reqwest --example client` runs the
//! middleware against a flaky local server.

#![forbid(unsafe_code)]

pub mod _guide;
mod breaker;
mod call;
mod chaos;
mod classify;
mod error;
mod meter;
mod middleware;

pub use breaker::ClientBreaker;
pub use chaos::{CHAOS_HEADER, ChaosAborted, ChaosMiddleware};
pub use error::gave_up;
pub use ironward::http_retry::GaveUp;
pub use ironward::http_retry::{Retried, Stop};
pub use ironward_tokio::{Clock, Dice, SharedChaos};
pub use middleware::{IDEMPOTENCY_KEY, RetryMiddleware};

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
