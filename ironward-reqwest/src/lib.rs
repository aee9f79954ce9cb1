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
//! fail, and a client circuit breaker ([`SharedBreaker`], Google SRE adaptive throttling),
//! which refuses a growing fraction of attempts.
//!
//! | item | what it is |
//! | --- | --- |
//! | [`RetryMiddleware`] | the middleware, configured by the core's [`Settings`](ironward::http_retry::Settings) |
//! | [`SharedBreaker`] | a breaker several middlewares share, with its clock and dice |
//! | [`Retried`] | the core's record, in every response's extensions: attempts, waits, and why it stopped |
//! | [`Stop`] | the core's reason to stop: a [`StopReason`](ironward::http_retry::StopReason), the budget or the breaker |
//! | [`GaveUp`] | the error when the call ended without a response |
//! | [`IDEMPOTENCY_KEY`] | the header that marks a request as deduplicated by the server |
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
//! In a test, a manual clock runs every wait at once and exactly:
//!
//! ```
//! use std::time::Duration;
//! use ironward::http_retry::{Settings, Stop, StopReason};
//! use ironward_reqwest::{Clock, Dice, GaveUp, RetryMiddleware};
//! use reqwest_middleware::ClientBuilder;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let (clock, _hand) = Clock::manual(Duration::ZERO);
//! let retry = RetryMiddleware::new(Settings::default())
//!     .with_clock(clock.clone())
//!     .with_dice(Dice::from_fn(|| 1.0)); // no jitter: 200, 400 and 800 ms
//! let client = ClientBuilder::new(reqwest::Client::new()).with(retry).build();
//! let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
//! let err = client.get(format!("http://{free}/")).send().await.unwrap_err();
//! let gave_up = ironward_reqwest::gave_up(&err).unwrap();
//! assert_eq!(gave_up.stop(), Stop::Decided(StopReason::AttemptsExhausted));
//! assert_eq!(gave_up.retried().waited, Duration::from_millis(1400));
//! assert_eq!(clock.now(), Duration::from_millis(1400));
//! # }
//! ```
//!
//! # Deadlines
//!
//! Each attempt runs inside `tokio::time::timeout` for what is left of the time budget (or the
//! [attempt timeout](RetryMiddleware::with_attempt_timeout), when shorter), so a call never
//! ends later than its `total_budget`, even on a reqwest client with no timeout of its own. An
//! attempt the budget cuts short ends the call with a [`GaveUp`] whose stop is
//! `Stop::Decided(StopReason::BudgetExhausted)` and that has no source error. On a client
//! without a timeout, set an attempt timeout, so that one hung attempt does not eat the whole
//! budget and leave no time to retry.
//!
//! # Metrics
//!
//! With the `metrics` feature, the middleware and the breaker count what they do through the
//! [`metrics`](https://docs.rs/metrics) facade, to whichever recorder the application installs
//! (a Prometheus or OpenTelemetry exporter); without it nothing is recorded and no dependency
//! is pulled in. Each registers its handles once, on first use (the middleware's first
//! attempt, the breaker's first decision), its name then final: a middleware or a breaker
//! renamed with [`RetryMiddleware::with_name`] or [`SharedBreaker::with_name`] leaves no
//! series under `name="default"`. An attempt then costs an increment on a handle. The names, units and labels are `ironward-tower`'s, and the stop
//! labels are the core's ([`Stop::as_str`], [`Retried::outcome`]), so a call counts the same
//! through either edge.
//!
//! | name | kind | unit | labels | what |
//! | --- | --- | --- | --- | --- |
//! | `ironward.retry.attempts` | counter | `{attempt}` | `name`, `kind` (`first` or `retry`) | attempts the middleware sent, as [`Retried::attempts`] counts them (an attempt the breaker refuses is not sent) |
//! | `ironward.retry.calls` | counter | `{call}` | `name`, `outcome` (`success` or the stop's label) | calls the middleware finished, labelled by [`Retried::outcome`] |
//! | `ironward.retry.wait` | histogram | `s` | `name` | each wait the middleware decided before a retry, in seconds |
//! | `ironward.requests` | counter | `{request}` | `piece` (`breaker`), `name`, `outcome` (`admitted` or `refused`), `reason` (`throttled`, refused only) | attempts the [`SharedBreaker`] decided on |
//! | `ironward.breaker.ratio` | gauge | `1` | `name` | the drop fraction the breaker's last refusal computed, in `[0, 1]` |
//!
//! The `outcome` of a call is `success`, or one of `not_retryable`, `not_replayable`,
//! `attempts_exhausted`, `budget_exhausted`, `server_delay_exceeds_cap`,
//! `invalid_retry_after`, `invalid_settings`, `invalid_input` (the rules' stops),
//! `throttled` (the retry budget) or `refused` (the breaker). Every label is registered with
//! the middleware's first attempt, at zero. A call whose future is dropped before it ends counts its
//! attempts but no outcome.
//!
//! Whatever the feature, each retry is a `tracing` event at `DEBUG` with the middleware's
//! `name`, the failed `attempt`, the `wait`, the `status` and the `reason`; giving up is one
//! with the `attempts`, the time `waited`, the `stop`'s label and the `reason` as a phrase; a
//! breaker refusal is one with the numbers that decided it. None is an error: a refusal to
//! retry is an answer.
//!
//! ```
//! use std::time::Duration;
//! use ironward::http_retry::Settings;
//! use ironward_reqwest::RetryMiddleware;
//!
//! // Two policies in one process, told apart by the `name` label.
//! let search = RetryMiddleware::new(Settings { max_retries: 1, ..Settings::default() })
//!     .with_attempt_timeout(Duration::from_millis(300))
//!     .with_name("search");
//! let reports = RetryMiddleware::default().with_name("reports");
//! assert_eq!((search.name(), reports.name()), ("search", "reports"));
//! ```
//!
//! # Edge cases
//!
//! - **Streaming bodies** cannot be copied (`Request::try_clone` fails), so such a request is
//!   sent once and a failure stops with `NotReplayable`, even a refused connection.
//! - **Idempotency keys** vouch only when present and not blank
//!   ([`vouches`](ironward::http_retry::vouches)): an empty `Idempotency-Key` does not make a
//!   POST replay-safe.
//! - **Retry-After** fields are handed to the core as raw bytes: one that is not UTF-8 is
//!   malformed (`InvalidRetryAfter`), like any other malformed value; two fields, even equal
//!   ones, are ambiguous and stop too.
//! - **Transport errors** are decided as a 503 without a server delay; only a connect failure
//!   may be retried for a method that is not idempotent and not vouched for.
//! - **The wall clock** (for HTTP-dates) is read once per failed attempt; one set before 1970
//!   reads as 1970. Clock skew between client and server shifts an HTTP-date's delay.
//! - **A clock that steps back** is read by the core as the latest reading seen.
//! - **Waiting** holds the failed response, unread, until the retry is sent.
//! - **Counts** saturate: attempts at `u32::MAX`, the summed wait at `Duration::MAX`.
//! - **Invalid settings** retry nothing: every failure stops with `InvalidSettings` (and a
//!   zero `total_budget` leaves even the first attempt no time: it is cut short at once).
//! - **Poisoned locks** (a panic elsewhere while a budget or breaker was held) are used as
//!   they are: neither can be left half-updated.

#![forbid(unsafe_code)]

mod breaker;
mod call;
mod classify;
mod error;
mod meter;
mod middleware;

pub use breaker::SharedBreaker;
pub use error::gave_up;
pub use ironward::http_retry::GaveUp;
pub use ironward::http_retry::{Retried, Stop};
pub use ironward_tokio::{Clock, Dice};
pub use middleware::{IDEMPOTENCY_KEY, RetryMiddleware};

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
