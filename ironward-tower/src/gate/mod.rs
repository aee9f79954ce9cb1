//! A concurrency limit that refuses at once: [`GateLayer`].
//!
//! A server can do only so much at once. Past that, a queue of waiting requests grows faster
//! than it drains, every request in it times out, and the queue becomes the outage. The gate
//! answers the request past the limit straight away with [`GateFull`] (over HTTP, `503`), which
//! a client can retry elsewhere or later, and keeps the requests already admitted fast. This is
//! the core's [`ironward::Gate`], a count with a ceiling, on the real server: go-zero's
//! `rest/handler/maxconnshandler.go` over `core/syncx/limit.go`, where tower's
//! `ConcurrencyLimit` would wait for a permit instead. One difference: go-zero reads a limit of
//! 0 as no limit, while here, as in the core, a limit of 0 admits nothing; for no limit, leave
//! the layer out.
//!
//! - [`GateLayer::new`] makes the gate; every service the layer makes, and their clones,
//!   share it.
//! - [`GateService`] enters the gate in `call`, or resolves at once to [`GateFull`] without
//!   calling the inner service.
//! - [`GateFuture`] gives the room back when the response is ready or the future is dropped
//!   (a cancelled request, a closed connection).
//! - [`GateLayer::tuner`] gives a [`Tuner`](crate::Tuner) that changes the limit while the gate serves (a
//!   configuration reload), keeping everyone inside.
//!
//! The shared state is the core's [`ironward::SharedGate`]: the count and the limit in one
//! atomic word, entered and left by one compare-and-swap each, with no lock for the services
//! of a busy server's threads to queue on. It decides exactly as `Gate` does, in the order the
//! calls land, so the core's semantics (a `leave` never takes the count below zero, a lower
//! limit turns nobody out) stay in one place, the core.
//!
//! # Examples
//!
//! An axum app that serves at most 100 requests at once, on all its routes together, and
//! answers `503` past that:
//!
//! ```
//! # #[cfg(feature = "axum")] {
//! use axum::{Router, body::Body, error_handling::HandleErrorLayer, routing::get};
//! use http::{Request, StatusCode};
//! use ironward_tower::GateLayer;
//! use tower::ServiceExt;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let gate = GateLayer::new(100);
//! let app = Router::new()
//!     .route("/", get(|| async { "hello" }))
//!     .route("/other", get(|| async { "world" }))
//!     .layer((HandleErrorLayer::new(ironward_tower::axum::handle_error), gate.clone()));
//!
//! let response = app.oneshot(Request::new(Body::empty())).await.unwrap();
//! assert_eq!(response.status(), StatusCode::OK);
//! assert_eq!(gate.held(), 0);
//! # }
//! # }
//! ```

mod error;
mod future;
mod layer;
mod service;

#[cfg(feature = "axum")]
pub(crate) use self::future::Shared;
#[cfg(feature = "axum")]
pub(crate) use self::service::refused;

pub use self::error::GateFull;
pub use self::future::GateFuture;
pub use self::layer::GateLayer;
pub use self::service::GateService;
