//! A per-request time budget: [`DeadlineLayer`].
//!
//! A request that outlives the caller's patience is wasted work: the caller has given up, yet
//! the server goes on spending on it, and under load those requests crowd out the ones that
//! could still succeed. The deadline layer gives each request a budget, cuts it off with
//! [`DeadlineExceeded`] (over HTTP, `504`) when the budget runs out, and tells the handler
//! what is left so that its own calls downstream share the one budget instead of each
//! starting a full timeout of its own. That is the core's [`ironward::Deadline`] on tokio's clock:
//! go-zero's `rest/handler/timeouthandler.go` and gRPC's deadline propagation.
//!
//! - [`DeadlineLayer::new`] gives every request the same budget;
//!   [`DeadlineLayer::from_request`] reads it from the request, and
//!   [`DeadlineLayer::from_grpc_timeout`] from the `grpc-timeout` header ([`grpc_timeout`]).
//!   A zero budget is no deadline.
//! - [`DeadlineService`] races the inner future against a `tokio::time::Sleep` and puts a
//!   [`RequestDeadline`] in the request's extensions; [`DeadlineFuture`] is the race.
//! - [`DeadlineLayer::with_mode`] with [`Mode::Shadow`](crate::Mode::Shadow) cuts nothing
//!   and reports what it would have cut, to try a tighter budget on real traffic first.
//!
//! Time is tokio's: the `Sleep` that enforces a deadline and the `RequestDeadline` a handler
//! reads use the same clock, so `tokio::time::pause` drives both in tests. A scripted
//! [`Clock`](crate::Clock) is not taken here, because tokio's timer would not follow it.
//!
//! # Examples
//!
//! An axum app that gives each request 2 seconds, answers `504` past that, and lets a
//! handler read what is left:
//!
//! ```
//! # #[cfg(feature = "axum")] {
//! use std::time::Duration;
//! use axum::{Extension, Router, body::Body, error_handling::HandleErrorLayer, routing::get};
//! use http::{Request, StatusCode};
//! use ironward_tower::{DeadlineLayer, RequestDeadline};
//! use tower::ServiceExt;
//!
//! async fn handler(Extension(deadline): Extension<RequestDeadline>) -> String {
//!     let left = deadline.remaining().unwrap_or(Duration::MAX);
//!     // ... give a backend call `left` as its timeout ...
//!     format!("{} ms to spare", left.as_millis())
//! }
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() {
//! const DEADLINE: DeadlineLayer = DeadlineLayer::new(Duration::from_secs(2));
//! let app = Router::new()
//!     .route("/", get(handler))
//!     .route("/slow", get(std::future::pending::<()>))
//!     .layer((HandleErrorLayer::new(ironward_tower::axum::handle_error), DEADLINE));
//!
//! let response = app.clone().oneshot(Request::new(Body::empty())).await.unwrap();
//! let body = axum::body::to_bytes(response.into_body(), 64).await.unwrap();
//! assert_eq!(body, "2000 ms to spare");
//!
//! let slow = Request::get("/slow").body(Body::empty()).unwrap();
//! let response = app.oneshot(slow).await.unwrap();
//! assert_eq!(response.status(), StatusCode::GATEWAY_TIMEOUT);
//! # }
//! # }
//! ```

mod error;
mod extension;
mod future;
mod grpc;
mod layer;
mod service;
mod tune;

pub(crate) use self::service::{Budget, Start, start};

pub use self::error::DeadlineExceeded;
pub use self::extension::RequestDeadline;
pub use self::future::DeadlineFuture;
pub use self::grpc::grpc_timeout;
pub use self::layer::DeadlineLayer;
pub use self::service::DeadlineService;
