//! The adaptive concurrency limit: [`LimiterLayer`], its queue, and criticality.
//!
//! `LimiterLayer` keeps no more calls in flight than an adaptive limit that follows the latency
//! the inner service shows (the core's `Limiter`: by default Little, or Vegas, Aimd or
//! Gradient2 after Netflix's concurrency-limits, or failsafe-go's), on a server or around a
//! client, and refuses with `LimiterRefused` (503) past it; made `with_queue`, it lets a burst
//! wait a bounded time instead, failsafe-go's gradual rejection turning more away as the queue
//! fills. It and `ShedLayer` read each request's
//! `Criticality` from a header or an extractor (`with_criticality`), so that under overload the
//! sheddable requests are refused first. Which to use: the breaker for a backend that fails, the
//! shedder for this server's CPU, the limiter for a backend that slows down (the core's `Limiter`
//! docs say more).
//!
//! ```
//! use http::{Request, Response};
//! use ironward::ADAPTIVE;
//! use ironward_tower::{CriticalityHeader, LimiterLayer, LimiterRefused, QUEUE};
//! use tower::{BoxError, Layer, ServiceExt, service_fn};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let limiter = LimiterLayer::new(ADAPTIVE)
//!     .with_queue(QUEUE)
//!     .with_criticality(CriticalityHeader::default()); // reads `x-criticality`
//! let backend = limiter.layer(service_fn(|_: Request<()>| async {
//!     Ok::<_, BoxError>(Response::new(()))
//! }));
//! let batch = Request::builder().header("x-criticality", "sheddable").body(()).unwrap();
//! // Past the limit (and the queue) this would be an error that `is::<LimiterRefused>()`.
//! let response = backend.oneshot(batch).await;
//! assert!(response.is_ok());
//! assert_eq!((limiter.flying(), limiter.limit()), (0, 20)); // Little starts at 20
//! # let _ = std::any::type_name::<LimiterRefused>();
//! # }
//! ```
//!
//! [`LimiterLayer`]: crate::LimiterLayer
