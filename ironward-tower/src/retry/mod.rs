//! Retrying HTTP clients: [`HttpRetryLayer`], thin glue over the core's retry engine
//! [`ironward::http_retry::Run`].
//!
//! A client that retries has to answer, after each failed attempt, whether the request may go
//! again, after how long, and whether the time left allows it, and it has to hold each attempt
//! to what is left of the call's time budget. The core's [`Run`](ironward::http_retry::Run)
//! answers all of that from readings passed in: the rules of the MoonBit package `http_retry`
//! (RFC 9110 §9.2.2 idempotent methods, §10.2.3 `Retry-After`), full-jitter exponential
//! backoff, and gRPC A6 retry throttling through a shared [`ironward::SharedBudget`]. This layer
//! owns no retry rule: it reads the clocks and the dice, calls the inner service, and maps the
//! answers to tower's types, so that it retries exactly as `ironward-reqwest` does on the same
//! inputs, and leaves the same [`Retried`] record.
//!
//! It wraps any `Service<http::Request<B>, Response = http::Response<_>> + Clone` whose body
//! `B` is `Clone`: hyper-util's legacy `Client` with `Full<Bytes>` or `String` bodies, a
//! `service_fn`, another layer.
//!
//! # One call
//!
//! 1. When the call starts, the monotonic [`Clock`](crate::Clock) is read and a `Run` begins,
//!    told the method, that the body can be sent again (it is `Clone`), and whether the
//!    request is replay-safe: the core's [`vouches`](ironward::http_retry::vouches) on the
//!    idempotency header's value (`Idempotency-Key` unless
//!    [`with_idempotency_header`](HttpRetryLayer::with_idempotency_header) says otherwise).
//! 2. Before every attempt, the clock is read (for the first, the reading of step 1 serves)
//!    and `Run::attempt` says how
//!    long the attempt may take: what is left of the total budget, or the
//!    [attempt timeout](HttpRetryLayer::with_attempt_timeout) when that is shorter. The attempt
//!    is `tokio::time::timeout(that, inner.call(request))`.
//! 3. When its result is known, the clock is read again, and a failed attempt (a status of 400
//!    or more, an error, a timeout) rolls the [`Dice`](crate::Dice) once; a success rolls
//!    nothing. A response goes to `Run::response` with its status and its raw `Retry-After`
//!    field values (`headers.get_all(RETRY_AFTER)`, as bytes: a value that is not UTF-8 is
//!    malformed); an error to `Run::error` with the [`Fault`] its classifier answers; a
//!    timeout to `Run::timed_out` (each in its `_shared` form, so that a retry budget, if
//!    any, is told and asked without a lock).
//! 4. A wait is `clock.sleep(wait)`. On waking, step 2 is the check the rules ask for: the
//!    budget must still hold the request reserve (a loaded runtime may oversleep). Then the
//!    inner service's `poll_ready` is driven, within the attempt's timeout, and the next
//!    attempt sent: a copy of the whole request, headers, extensions and body.
//! 5. When the run stops, the call ends with the last attempt's outcome. A response, success
//!    or not, is returned with the call's [`Retried`] in its extensions: the attempts, the
//!    waits, and why it stopped ([`Stop`]). An error or a timeout is returned as a
//!    [`GaveUp`] (the core's, which ironward-reqwest returns too), boxed into
//!    `tower::BoxError`: `err.downcast_ref::<GaveUp>()` finds it, with the same record.
//!
//! A failed response is kept, unread, while the layer waits to retry it, so that it is still
//! what the call returns if the check after waking abandons the retry; its connection stays
//! busy until the retry is sent. Waits are capped by `max_delay`.
//!
//! # Deadlines
//!
//! A call never ends later than its `total_budget`: every attempt, its readiness included, is
//! cut off at what is left of the budget, and a wait is taken only when it and the next
//! attempt's reserve fit in what is left. An attempt cut off by the budget ends the call with
//! [`StopReason::BudgetExhausted`](ironward::http_retry::StopReason::BudgetExhausted); one cut
//! off by the attempt timeout may have reached the server, so it is a [`Fault::Sent`],
//! retried when the request is replay-safe.
//!
//! When the inner client has no timeout of its own (hyper-util's legacy `Client` sets none on
//! a request, only on connecting if asked), set
//! [`with_attempt_timeout`](HttpRetryLayer::with_attempt_timeout): without it, a server that
//! accepts the connection and never answers holds the first attempt for the whole budget,
//! and the call ends with no retry at all.
//!
//! The attempt timeouts are tokio timers, so `tokio::time::pause` drives them; the budget and
//! the waits are on the layer's clock, tokio's monotonic one by default. A
//! [`Clock::manual`](crate::Clock::manual) clock makes every wait exact and instant: a sleep on
//! it moves it forward instead of waiting.
//!
//! # Errors of the inner service
//!
//! By default ([`FinalErrors`]) no error is retried. A classifier given to
//! [`with_errors`](HttpRetryLayer::with_errors) says which errors left the request unsent
//! ([`Fault::Unsent`], retried for any method) or possibly sent ([`Fault::Sent`], retried only
//! when replay-safe); the core decides them as a `503` without `Retry-After`.
//!
//! # Observability
//!
//! Each retry is a `tracing` event at the debug level with the layer's `name`, the `method`,
//! the `uri`, the `attempt` that failed (1 for the first), the `wait`, and why: the `status`
//! (none for an error or a timeout) and the `reason` (the status, the error, or the timeout).
//! Each stop is one with the `name`, the `method`, the `uri`, the `attempts`, the time
//! `waited`, the `stop`'s label ([`Stop::as_str`]) and the `reason` as a phrase. A stop is not
//! an error, so neither is logged as one; the [`Retried`] on the response, or in the
//! [`GaveUp`], says the same to the caller. `ironward-reqwest`'s middleware logs the same
//! events with the same fields.
//!
//! With the `metrics` feature, the layer counts every attempt it sends
//! (`ironward.retry.attempts`, `kind` `first` or `retry`), every call it finishes
//! (`ironward.retry.calls`, `outcome` [`Retried::outcome`]: `success` or the stop's label) and
//! records every wait it decides (`ironward.retry.wait`, in seconds), under the
//! [name](HttpRetryLayer::with_name) it was given; see the guide's [metrics](crate::_guide::metrics). The
//! attempts counted are the record's: their sum over kinds is the sum of
//! [`Retried::attempts`]. A call whose future is dropped before it ends counts its attempts
//! but no outcome.
//!
//! # Examples
//!
//! A backend that answers `429` with `Retry-After: 2`, then `200`, on a manual clock: the
//! server's two seconds outweigh the 200 ms backoff, and are slept in no time.
//!
//! ```
//! use std::sync::Arc;
//! use std::sync::atomic::{AtomicU32, Ordering};
//! use std::time::Duration;
//! use http::{Request, Response, StatusCode};
//! use ironward_tower::retry::{HttpRetryLayer, Retried};
//! use ironward_tower::{Clock, Dice};
//! use tower::{ServiceBuilder, ServiceExt, service_fn};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let calls = Arc::new(AtomicU32::new(0));
//! let counter = Arc::clone(&calls);
//! let backend = service_fn(move |_: Request<String>| {
//!     let first = counter.fetch_add(1, Ordering::Relaxed) == 0;
//!     async move {
//!         let response = match first {
//!             true => Response::builder().status(429).header("retry-after", "2"),
//!             false => Response::builder(),
//!         };
//!         response.body(String::from("done"))
//!     }
//! });
//! let (clock, _hand) = Clock::manual(Duration::ZERO);
//! let layer = HttpRetryLayer::default()
//!     .with_clock(clock.clone())
//!     .with_dice(Dice::from_fn(|| 1.0))
//!     .with_attempt_timeout(Duration::from_secs(10));
//! let client = ServiceBuilder::new().layer(layer).service(backend);
//!
//! let request = Request::get("http://backend/items").body(String::new()).unwrap();
//! let response = client.oneshot(request).await.unwrap();
//! assert_eq!(response.status(), StatusCode::OK);
//! assert_eq!(calls.load(Ordering::Relaxed), 2);
//! assert_eq!(clock.now(), Duration::from_secs(2));
//! assert_eq!(
//!     response.extensions().get::<Retried>(),
//!     Some(&Retried { attempts: 2, waited: Duration::from_secs(2), stop: None })
//! );
//! # }
//! ```

mod error;
mod future;
mod layer;
mod service;

pub use error::{ClassifyError, FinalErrors};
pub use future::HttpRetryFuture;
pub use ironward::http_retry::GaveUp;
pub use ironward::http_retry::{Fault, Retried, Stop};
pub use layer::HttpRetryLayer;
pub use service::HttpRetryService;

pub(crate) use future::{Ended, Last, copy, finish, judge, reading, stopped, waiting};
pub(crate) use layer::Config;
pub(crate) use service::begin;
