//! Rate limits on the real clock: [`QuotaLayer`], one budget for all requests or one per
//! key, refusing with [`Limited`] (over HTTP, `429` with `Retry-After`).
//!
//! A rate limit keeps one client, or all of them together, from taking more than its share:
//! a scraper, a retry storm or a runaway script gets refused at the door while everyone
//! else is served. The layer runs a limiter of the `ironward` core on tokio's clock and adds
//! no policy of its own:
//!
//! - [`Quota`] says which limiter and with what parameters: [`Quota::bucket`] (a token
//!   bucket, `ironward::Bucket`), [`Quota::sliding`] (an exact sliding window,
//!   `ironward::Sliding`) or [`Quota::period`] (a fixed period, `ironward::Period`, go-zero's
//!   `core/limit/periodlimit.go`). Every request costs one.
//! - [`QuotaLayer::new`] makes one budget that every service the layer makes, and all
//!   their clones, share: a limit of 10 is 10 in total across connections, routes and
//!   methods. tower's own `RateLimit` keeps its state per service, so each clone (each
//!   connection) gets the full rate again.
//! - [`QuotaLayer::keyed`] makes one budget per key that an extractor reads from the
//!   request's head; [`QuotaLayer::by_peer`], [`QuotaLayer::by_client`] (the
//!   client behind your proxies, [`ClientAddr`]) and [`QuotaLayer::by_header`] are the
//!   common keys.
//! - [`QuotaService`] takes from the budget in `call` and either calls the inner service
//!   or resolves at once ([`QuotaFuture`]) to [`Limited`], boxed, which says how long to
//!   wait: the limiter's own `next()`, as governor's `NotUntil` does.
//! - [`QuotaTuner`], from [`QuotaLayer::tuner`], changes the limit while the layer
//!   serves (a configuration reload), each budget keeping its history; a limit of another
//!   kind is refused with [`KindMismatch`].
//! - [`Limited::headers`] and [`Limited::into_response`] turn a refusal into `429 Too Many
//!   Requests` with `Retry-After` in whole seconds, rounded up, and the `RateLimit-Policy` and
//!   `RateLimit` fields of the IETF httpapi draft "RateLimit header fields for HTTP"
//!   (draft-ietf-httpapi-ratelimit-headers-11). Those fields, the refusal's numbers and its
//!   line of text describe a limit one way, a quota over whole seconds:
//!   [what a client is told](Quota#what-a-client-is-told).
//!
//! Each budget is a core limiter behind a std `Mutex`, locked for one `take` (a few
//! comparisons, no allocation) and never across an await. A refusal allocates only the `Box`
//! of its error, and works out its wait only when asked. Admitted responses get the
//! `RateLimit` fields only from a layer made
//! [`with_headers(true)`](QuotaLayer::with_headers): they would cost a formatted header on
//! every response, several times the decision.
//!
//! # Keys
//!
//! A keyed layer holds at most `max_keys` keys, whatever arrives: a flood of distinct keys
//! costs evictions, never memory. A key idle for longer than [`Quota::idle`] is forgotten at
//! no cost to accuracy; when the table is full, the least recently used key is forgotten and
//! starts afresh if it comes back; requests without a key share one budget.
//! [`QuotaLayer::keyed`] has the details and the trade-off. governor's keyed limiter keeps
//! every key until the application calls `retain_recent` itself; go-zero's Redis limiters give
//! every key a TTL of the period. This is the second idea, in process, with a hard bound added.
//!
//! # Clocks
//!
//! The layer reads tokio's monotonic clock, so `tokio::time::pause` and `advance` drive it in
//! tests. A [`Quota::aligned`] period lines up with calendar time on
//! [`Clock::unix`](crate::Clock::unix) ([`QuotaLayer::with_clock`]): a daily quota then
//! resets at midnight UTC.
//!
//! # Examples
//!
//! An axum route that serves two requests a minute and answers the third with `429`:
//!
//! ```
//! use std::time::Duration;
//! use axum::error_handling::HandleErrorLayer;
//! use axum::response::{IntoResponse, Response};
//! use axum::{Router, body::Body, routing::get};
//! use http::{Request, StatusCode};
//! use ironward_tower::{Limited, Quota, QuotaLayer};
//! use tower::ServiceExt;
//!
//! async fn refuse(err: Box<dyn std::error::Error + Send + Sync>) -> Response {
//!     match err.downcast_ref::<Limited>() {
//!         Some(limited) => limited.into_response(),
//!         None => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() {
//! let limit = QuotaLayer::new(Quota::sliding(2, Duration::from_secs(60)));
//! let app = Router::new()
//!     .route("/", get(|| async { "hello" }))
//!     .layer((HandleErrorLayer::new(refuse), limit));
//!
//! for _ in 0..2 {
//!     let response = app.clone().oneshot(Request::new(Body::empty())).await.unwrap();
//!     assert_eq!(response.status(), StatusCode::OK);
//! }
//! tokio::time::advance(Duration::from_millis(12_500)).await;
//! let refused = app.oneshot(Request::new(Body::empty())).await.unwrap();
//! assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
//! assert_eq!(refused.headers()["retry-after"], "48");
//! assert_eq!(refused.headers()["ratelimit-policy"], r#""default";q=2;w=60"#);
//! assert_eq!(refused.headers()["ratelimit"], r#""default";r=0;t=48"#);
//! # }
//! ```

mod budget;
mod client;
mod error;
mod future;
mod global;
mod headroom;
mod http;
mod keyed;
mod layer;
mod service;
mod tune;

pub use self::client::{ClientAddr, ProxyHeader};
pub use self::error::{KindMismatch, Limited};
pub use self::future::QuotaFuture;
pub use self::headroom::Headroom;
#[cfg(feature = "axum")]
pub(crate) use self::http::Stamp;
pub(crate) use self::http::retry_after_seconds;
pub use self::layer::QuotaLayer;
pub use self::service::QuotaService;
#[cfg(feature = "axum")]
pub(crate) use self::service::Shared;
pub use self::tune::QuotaTuner;
pub use ironward_tokio::Quota;
