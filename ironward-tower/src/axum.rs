//! The one line an axum app needs: [`handle_error`], each refusal as its response.
//!
//! An axum `Router` only takes services that never fail, so the layers' typed errors must
//! become responses before they reach it: axum's `HandleErrorLayer` with [`handle_error`] does
//! that for every layer of this crate at once, with the statuses [`crate::http`] gives (503,
//! 429 with `Retry-After` and the `RateLimit` fields, 504), a body that says which piece
//! refused and why (RFC 9457 problem details for a client that prefers JSON, a line of text
//! otherwise, as [`Format::from_accept`] decides), and a bare 500 for anything else.
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
//! let request = Request::get("/")
//!     .header("accept", "application/problem+json")
//!     .body(Body::empty())
//!     .unwrap();
//! let response = app.oneshot(request).await.unwrap();
//! assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
//! assert_eq!(response.headers()["content-type"], "application/problem+json");
//! # }
//! ```

use ::axum::BoxError;
use ::axum::body::Body;
use ::axum::response::Response;
use http::StatusCode;
use http::header::{CONTENT_TYPE, HeaderMap, HeaderValue};

use crate::http::{Format, response_for};

/// Turns an error from this crate's layers into its response, for axum's
/// `HandleErrorLayer`; the request's headers choose the body's format.
///
/// Each refusal gets [`crate::http::response_for`]'s answer in the [`Format`] the request's
/// `Accept` asks for ([`Format::from_accept`]): its status (503, 429 with `Retry-After`, 504)
/// and a body naming the piece that refused and the numbers that decided it. Any other error
/// is `500 Internal Server Error` with a body that says nothing of the error itself, which
/// may hold details a client should not see (`{"title":"Internal Server Error","status":500}`
/// as problem details, `internal server error` as text). axum needs this because a `Router`
/// only takes services that never fail: the layer turns each error into a response.
///
/// # Examples
///
/// ```
/// use axum::{Router, error_handling::HandleErrorLayer, http::{HeaderMap, StatusCode}};
/// use axum::routing::get;
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
/// let full = ironward_tower::axum::handle_error(HeaderMap::new(), Box::new(full)).await;
/// assert_eq!(full.status(), StatusCode::SERVICE_UNAVAILABLE);
/// let other = ironward_tower::axum::handle_error(HeaderMap::new(), "boom".into()).await;
/// assert_eq!(other.status(), StatusCode::INTERNAL_SERVER_ERROR);
/// # }
/// ```
pub async fn handle_error(headers: HeaderMap, err: BoxError) -> Response {
    respond(&err, Format::from_accept(&headers))
}

/// The response [`handle_error`] gives `err` in `format`: the one rule, which the
/// [`ProtectLayer`](crate::ProtectLayer) stack answers its refusals with too.
pub(crate) fn respond(err: &BoxError, format: Format) -> Response {
    response_for::<Body>(err, format).unwrap_or_else(|| internal(format))
}

/// The `500` for an error that is not a refusal, in `format`, without its details.
fn internal(format: Format) -> Response {
    let (body, content_type) = match format {
        Format::Problem => (
            r#"{"title":"Internal Server Error","status":500}"#,
            "application/problem+json",
        ),
        Format::Text => ("internal server error", "text/plain; charset=utf-8"),
    };
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use ::axum::body::to_bytes;

    use ironward::GateReason;

    use super::*;
    use crate::{DeadlineExceeded, GateFull, Limited};

    fn asking(accept: &'static str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(http::header::ACCEPT, HeaderValue::from_static(accept));
        headers
    }

    async fn body(response: Response) -> String {
        let bytes = to_bytes(response.into_body(), 4096).await.unwrap();
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    #[tokio::test]
    async fn a_refusal_gets_its_response() {
        let full = GateFull::new(GateReason { held: 1, limit: 1 });
        let response = handle_error(HeaderMap::new(), Box::new(full)).await;
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert!(body(response).await.contains("1 held against a limit of 1"));
        let response = handle_error(HeaderMap::new(), Box::new(DeadlineExceeded::new())).await;
        assert_eq!(response.status(), StatusCode::GATEWAY_TIMEOUT);
        let limited = Limited::new(Duration::from_secs(3), 1, Some(Duration::from_secs(1)));
        let response = handle_error(HeaderMap::new(), Box::new(limited)).await;
        assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(response.headers()["retry-after"], "3");
    }

    #[tokio::test]
    async fn a_client_asking_for_problem_details_gets_them() {
        let full = GateFull::new(GateReason { held: 4, limit: 4 });
        let response = handle_error(asking("application/problem+json"), Box::new(full)).await;
        assert_eq!(response.headers()[CONTENT_TYPE], "application/problem+json");
        let json: serde_json::Value = serde_json::from_str(&body(response).await).unwrap();
        assert_eq!(json["piece"], "gate");
        assert_eq!(json["status"], 503);
    }

    // A JSON client that does not know RFC 9457's media type reads JSON too, answered as
    // `application/problem+json`; so does the 500.
    #[tokio::test]
    async fn a_json_client_gets_problem_details_too() {
        for accept in ["application/json", "application/*"] {
            let limited = Limited::new(Duration::from_secs(3), 1, Some(Duration::from_secs(1)));
            let response = handle_error(asking(accept), Box::new(limited)).await;
            assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
            assert_eq!(response.headers()[CONTENT_TYPE], "application/problem+json");
            let json: serde_json::Value = serde_json::from_str(&body(response).await).unwrap();
            assert_eq!(json["piece"], "rate_limit");
            let response = handle_error(asking(accept), "boom".into()).await;
            assert_eq!(response.headers()[CONTENT_TYPE], "application/problem+json");
        }
    }

    #[tokio::test]
    async fn any_other_error_is_a_500_that_keeps_its_details_to_itself() {
        for accept in ["*/*", "application/problem+json"] {
            let response =
                handle_error(asking(accept), "database password is hunter2".into()).await;
            assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
            let body = body(response).await;
            assert!(!body.contains("hunter2"), "{body}");
            assert!(body.contains("nternal"), "{body}");
        }
    }
}
