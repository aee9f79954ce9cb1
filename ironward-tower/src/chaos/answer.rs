//! What an injected fault answers: [`ChaosAnswer`], and the default, [`PlainAnswer`].

use http::header::{CONTENT_TYPE, HeaderValue};
use http::{HeaderName, Response, StatusCode};
use ironward::chaos::{Fault, Injected};

/// The header a [`PlainAnswer`] names the injected fault in: `x-ironward-chaos: error` or
/// `x-ironward-chaos: replace`.
///
/// A response made on purpose must be told apart from a real failure, by the client under
/// test and by whoever reads its logs: the header says the 503 came from the chaos layer,
/// not from the service behind it.
///
/// # Examples
///
/// ```
/// assert_eq!(ironward_tower::chaos::CHAOS_HEADER, "x-ironward-chaos");
/// ```
pub const CHAOS_HEADER: HeaderName = HeaderName::from_static("x-ironward-chaos");

/// What the [`ChaosLayer`](super::ChaosLayer) answers for an injected [`Fault::Error`] or
/// [`Fault::Replace`]: the response `R` the edge is given for them.
///
/// `answer` is called with the decision and, for [`Fault::Replace`], the inner service's
/// response (`None` if the inner service failed, or for [`Fault::Error`], which never calls
/// it); what it returns is what the caller gets. The core decides *whether* a fault is
/// injected; what a failure looks like on the wire is the application's, so it is a value
/// the layer is given ([`with_response`](super::ChaosLayer::with_response)), not a rule of
/// the layer's own.
///
/// Any `Fn(&Injected, Option<R>) -> R` is one, and [`PlainAnswer`] is the default.
///
/// # Examples
///
/// A teapot for an injected error, and the inner response with its body emptied for a
/// replaced one:
///
/// ```
/// use http::{Response, StatusCode};
/// use ironward::chaos::{Fault, Injected};
/// use ironward_tower::chaos::ChaosAnswer;
///
/// let teapot = |injected: &Injected, inner: Option<Response<String>>| match (injected.fault, inner) {
///     (Fault::Replace, Some(inner)) => inner.map(|_| String::new()),
///     _ => Response::builder().status(StatusCode::IM_A_TEAPOT).body(String::new()).unwrap(),
/// };
/// let error = Injected { fault: Fault::Error, index: 0, delay: None, shadow: false };
/// assert_eq!(teapot.answer(&error, None).status(), StatusCode::IM_A_TEAPOT);
/// let replace = Injected { fault: Fault::Replace, ..error };
/// let replaced = teapot.answer(&replace, Some(Response::new("real".to_owned())));
/// assert_eq!((replaced.status(), replaced.body().as_str()), (StatusCode::OK, ""));
/// ```
pub trait ChaosAnswer<R> {
    /// The response for `injected`, given the inner service's response `inner` where there
    /// is one.
    fn answer(&self, injected: &Injected, inner: Option<R>) -> R;
}

impl<R, F> ChaosAnswer<R> for F
where
    F: Fn(&Injected, Option<R>) -> R,
{
    fn answer(&self, injected: &Injected, inner: Option<R>) -> R {
        self(injected, inner)
    }
}

/// The default [`ChaosAnswer`]: `503 Service Unavailable` for an injected error and
/// `500 Internal Server Error` in place of a replaced response, each with a one-line
/// `text/plain` body and the [`CHAOS_HEADER`] naming the fault.
///
/// 503 is what an overloaded or failing dependency answers (RFC 9110 §15.6.4), the failure
/// a client's retries and breaker are there for; 500 in place of a response the service did
/// produce is the answer whose side effects happened anyway, which a client must not take
/// for "nothing was done". The body is any type made from a `&'static str` (axum's `Body`,
/// `http_body_util::Full<Bytes>`, `String`); the replaced response is dropped.
///
/// # Examples
///
/// ```
/// use http::{Response, StatusCode};
/// use ironward::chaos::{Fault, Injected};
/// use ironward_tower::chaos::{CHAOS_HEADER, ChaosAnswer, PlainAnswer};
///
/// let error = Injected { fault: Fault::Error, index: 3, delay: None, shadow: false };
/// let response: Response<String> = PlainAnswer.answer(&error, None);
/// assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
/// assert_eq!(response.headers()[CHAOS_HEADER], "error");
/// assert_eq!(response.body(), "Fault injected on purpose: error\n");
///
/// let replace = Injected { fault: Fault::Replace, ..error };
/// let response = PlainAnswer.answer(&replace, Some(Response::new("real".to_owned())));
/// assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
/// assert_eq!(response.headers()[CHAOS_HEADER], "replace");
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PlainAnswer;

impl<B: From<&'static str>> ChaosAnswer<Response<B>> for PlainAnswer {
    fn answer(&self, injected: &Injected, _inner: Option<Response<B>>) -> Response<B> {
        // Only errors and replacements are answered; any other fault, were one ever asked
        // for, is answered as an error.
        let (status, fault, body) = match injected.fault {
            Fault::Replace => (
                StatusCode::INTERNAL_SERVER_ERROR,
                Fault::Replace,
                "Fault injected on purpose: replace\n",
            ),
            _ => (
                StatusCode::SERVICE_UNAVAILABLE,
                Fault::Error,
                "Fault injected on purpose: error\n",
            ),
        };
        let mut response = Response::new(B::from(body));
        *response.status_mut() = status;
        let headers = response.headers_mut();
        headers.insert(
            CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        );
        headers.insert(CHAOS_HEADER, HeaderValue::from_static(fault.label()));
        response
    }
}
