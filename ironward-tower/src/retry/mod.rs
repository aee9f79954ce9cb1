//! Retrying HTTP clients: [`HttpRetry`], a `tower::retry::Policy` over
//! [`ironward::http_retry`].
//!
//! The core decides whether a failed response may be retried and after how long; this
//! module feeds it from a real client. [`HttpRetry`] goes into tower's own `Retry` middleware
//! (`ServiceBuilder::retry`), so it wraps anything that is a
//! `Service<http::Request<B>, Response = http::Response<_>>` and whose body `B` is `Clone`:
//! hyper-util's legacy `Client` with `Full<Bytes>` bodies, a tonic-free `service_fn`, another
//! layer. It adds no decision of its own:
//!
//! - which statuses, which methods, how many retries, what backoff and how long in all are
//!   [`ironward::http_retry::decide_response`]'s rules, with the response's raw `Retry-After`
//!   fields, the time since the first attempt on a [`Clock`](crate::Clock), the wall clock,
//!   and a jitter sample from [`Dice`](crate::Dice);
//! - an `Idempotency-Key` header makes a non-idempotent request replay-safe;
//! - an optional shared [`ironward::Budget`] throttles retries while a backend fails (gRPC
//!   A6), never first attempts;
//! - the response handed back carries an [`Attempts`]: how many times the request was sent
//!   and why it was not sent again ([`RetryStop`]);
//! - errors of the inner service are final unless a classifier says otherwise ([`Fault`]).
//!
//! The layout differs from the other middleware here: tower already provides the layer, the
//! service and the future (`tower::retry::{RetryLayer, Retry, future::ResponseFuture}`), so
//! this module holds only the policy, the record it leaves and the error classification.
//!
//! # Examples
//!
//! A backend that answers `503` and then `200`, behind `Retry` with the default settings and
//! no jitter: one retry, after the 200 ms base delay.
//!
//! ```
//! use std::sync::Arc;
//! use std::sync::atomic::{AtomicU32, Ordering};
//! use std::time::Duration;
//! use http::{Request, Response, StatusCode};
//! use ironward_tower::{Attempts, Dice, HttpRetry};
//! use tower::{ServiceBuilder, ServiceExt, service_fn};
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() {
//! let calls = Arc::new(AtomicU32::new(0));
//! let counter = Arc::clone(&calls);
//! let backend = service_fn(move |_request: Request<String>| {
//!     let call = counter.fetch_add(1, Ordering::Relaxed);
//!     async move {
//!         let status = if call == 0 { StatusCode::SERVICE_UNAVAILABLE } else { StatusCode::OK };
//!         Response::builder().status(status).body(String::from("done"))
//!     }
//! });
//! let policy = HttpRetry::default().with_dice(Dice::from_fn(|| 1.0));
//! let client = ServiceBuilder::new().retry(policy).service(backend);
//!
//! let start = tokio::time::Instant::now();
//! let request = Request::get("http://backend/items").body(String::new()).unwrap();
//! let response = client.oneshot(request).await.unwrap();
//! assert_eq!(response.status(), StatusCode::OK);
//! assert_eq!(calls.load(Ordering::Relaxed), 2);
//! assert_eq!(start.elapsed(), Duration::from_millis(200));
//! assert_eq!(
//!     response.extensions().get::<Attempts>(),
//!     Some(&Attempts { sent: 2, stop: None })
//! );
//! # }
//! ```

mod attempts;
mod fault;
mod policy;
mod read;

pub use self::attempts::{Attempts, RetryStop};
pub use self::fault::{Fault, FinalErrors};
pub use self::policy::HttpRetry;
