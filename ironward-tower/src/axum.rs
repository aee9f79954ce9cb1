//! The one line an axum app needs: [`handle_error`], each refusal as its conventional
//! response.
//!
//! An axum `Router` only takes services that never fail, so the layers' typed errors must
//! become responses before they reach it: axum's `HandleErrorLayer` with [`handle_error`] does
//! that for every layer of this crate at once, with the statuses [`crate::http`] gives (503,
//! 429 with `Retry-After` and the `RateLimit` fields, 504) and a bare 500 for anything else.
//!
//! # Examples
//!
//! ```
//! use axum::{Router, body::Body, error_handling::HandleErrorLayer, routing::get};
//! use http::{Request, StatusCode};
//! use ironward_tower::gate::GateLayer;
//! use tower::ServiceExt;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! // A gate with no room: every request is refused, and answered 503.
//! let app = Router::new()
//!     .route("/", get(|| async { "hello" }))
//!     .layer((HandleErrorLayer::new(ironward_tower::axum::handle_error), GateLayer::new(0)));
//! let response = app.oneshot(Request::new(Body::empty())).await.unwrap();
//! assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
//! # }
//! ```

use ::axum::BoxError;
use ::axum::body::Body;
use ::axum::response::{IntoResponse, Response};
use http::StatusCode;

/// Turns an error from this crate's layers into its conventional response, for axum's
/// `HandleErrorLayer`.
///
/// Each refusal gets [`crate::http::response_for`]'s answer (503, 429 with `Retry-After`,
/// 504); any other error is `500 Internal Server Error` with a short plain-text body that
/// says nothing of the error itself, which may hold details a client should not see. axum
/// needs this because a `Router` only takes services that never fail: the layer turns each
/// error into a response.
///
/// # Examples
///
/// ```
/// use axum::{Router, error_handling::HandleErrorLayer, http::StatusCode, routing::get};
/// use ironward::GateReason;
/// use ironward_tower::{GateFull, GateLayer};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let app: Router = Router::new()
///     .route("/", get(|| async { "hello" }))
///     .layer((HandleErrorLayer::new(ironward_tower::axum::handle_error), GateLayer::new(8)));
/// # let _ = app;
///
/// let full = GateFull::new(GateReason { held: 8, limit: 8 });
/// let full = ironward_tower::axum::handle_error(Box::new(full)).await;
/// assert_eq!(full.status(), StatusCode::SERVICE_UNAVAILABLE);
/// let other = ironward_tower::axum::handle_error("boom".into()).await;
/// assert_eq!(other.status(), StatusCode::INTERNAL_SERVER_ERROR);
/// # }
/// ```
pub async fn handle_error(err: BoxError) -> Response {
    crate::http::response_for::<Body>(&err).unwrap_or_else(|| {
        (StatusCode::INTERNAL_SERVER_ERROR, "internal server error").into_response()
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use ::axum::body::to_bytes;

    use ironward::GateReason;

    use super::*;
    use crate::{DeadlineExceeded, GateFull, Limited};

    #[tokio::test]
    async fn a_refusal_gets_its_conventional_response() {
        assert_eq!(
            handle_error(Box::new(GateFull::new(GateReason { held: 1, limit: 1 })))
                .await
                .status(),
            StatusCode::SERVICE_UNAVAILABLE
        );
        assert_eq!(
            handle_error(Box::new(DeadlineExceeded::new()))
                .await
                .status(),
            StatusCode::GATEWAY_TIMEOUT
        );
        let limited = Limited::new(Duration::from_secs(3), 1, Some(Duration::from_secs(1)));
        let response = handle_error(Box::new(limited)).await;
        assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(response.headers()["retry-after"], "3");
    }

    #[tokio::test]
    async fn any_other_error_is_a_500_that_keeps_its_details_to_itself() {
        let response = handle_error("database password is hunter2".into()).await;
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let body = to_bytes(response.into_body(), 1024).await.unwrap();
        assert_eq!(body, "internal server error");
    }
}
