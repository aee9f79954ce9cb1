//! reqwest middleware for [`ironward`]: retries that honour `Retry-After`, never replay an
//! unsafe request, fit a time budget, and back off together when a backend is failing.
//!
//! [`RetryMiddleware`] is a [`reqwest_middleware::Middleware`] that asks the pure decisions of
//! [`ironward::http_retry`] after each failed attempt, feeding them the real clocks, fresh
//! jitter and the response's raw `Retry-After` fields, and waits with tokio. It optionally
//! consults two guards shared across calls and clients: a retry budget ([`ironward::Budget`],
//! gRPC A6 retry throttling), which stops retries while most attempts fail, and a client
//! circuit breaker ([`SharedBreaker`], Google SRE adaptive throttling), which refuses a
//! growing fraction of attempts.
//!
//! | item | what it is |
//! | --- | --- |
//! | [`RetryMiddleware`] | the middleware, configured by the core's [`Settings`](ironward::http_retry::Settings) |
//! | [`SharedBreaker`] | a breaker several middlewares share, with its clock and dice |
//! | [`Retried`] | in every response's extensions: attempts, waits, and why it stopped |
//! | [`Stop`] | why it stopped: the core's [`StopReason`](ironward::http_retry::StopReason), the budget or the breaker |
//! | [`GaveUp`] | the error when the call ended without a response |
//! | [`IDEMPOTENCY_KEY`] | the header that marks a request as deduplicated by the server |
//! | [`Dice`], [`Clock`] | the randomness and the clock, from `ironward-tokio`, scriptable in tests |
//!
//! # Examples
//!
//! ```no_run
//! use ironward::http_retry::{Settings, StopReason};
//! use ironward_reqwest::{Retried, RetryMiddleware, Stop};
//! use reqwest_middleware::ClientBuilder;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), reqwest_middleware::Error> {
//! let client = ClientBuilder::new(reqwest::Client::new())
//!     .with(RetryMiddleware::new(Settings { max_retries: 2, ..Settings::default() }))
//!     .build();
//! // A POST is retried only with an idempotency key the server honours.
//! let response = client
//!     .post("http://127.0.0.1:8080/payments")
//!     .header("idempotency-key", "order-1337")
//!     .body(r#"{"amount": 100}"#)
//!     .send()
//!     .await?;
//! let retried = response.extensions().get::<Retried>().copied().unwrap();
//! if retried.stop == Some(Stop::Decision(StopReason::AttemptsExhausted)) {
//!     eprintln!("still {} after {} attempts", response.status(), retried.attempts);
//! }
//! # Ok(())
//! # }
//! ```
//!
//! # Edge cases
//!
//! - **Streaming bodies** cannot be copied (`Request::try_clone` fails), so such a request is
//!   sent once and a failure stops with `NotReplayable`, even a refused connection.
//! - **Retry-After** fields that are not UTF-8 read as malformed (`InvalidRetryAfter`), like
//!   any other malformed value; two fields, even equal ones, are ambiguous and stop too.
//! - **Transport errors** are judged as a 503 without a server delay; only a connect failure
//!   may be retried for a method that is not idempotent and not vouched for.
//! - **The wall clock** (for HTTP-dates) is read once per decision; one set before 1970 reads
//!   as 1970. Clock skew between client and server shifts an HTTP-date's delay.
//! - **Waiting** holds the failed response, unread, until the retry is sent.
//! - **Counts** saturate: attempts at `u32::MAX`, the summed wait at `Duration::MAX`.
//! - **Invalid settings** retry nothing: every failed response stops with
//!   `InvalidSettings`.
//! - **Poisoned locks** (a panic elsewhere while a budget or breaker was held) are used as
//!   they are: neither can be left half-updated.

#![forbid(unsafe_code)]

mod breaker;
mod classify;
mod error;
mod middleware;
mod retried;

pub use breaker::SharedBreaker;
pub use error::GaveUp;
pub use ironward_tokio::{Clock, Dice};
pub use middleware::{IDEMPOTENCY_KEY, RetryMiddleware};
pub use retried::{Retried, Stop};

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
