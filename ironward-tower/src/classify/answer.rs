//! [`Failing`]: a breaker's or a shedder's classifier over HTTP written as a closure whose
//! argument, an [`Answer`], needs no type spelled out.

use http::{HeaderMap, Response, StatusCode};
use tower::BoxError;

use super::Classify;

/// What a [`Failing`] classifier sees of one finished HTTP call: the response's status and
/// headers, or the error, boxed.
///
/// The same for every response body type, which is why a closure over it needs no
/// annotation: a closure over `&Result<Response<B>, BoxError>` must name `B`.
#[derive(Debug, Clone, Copy)]
pub enum Answer<'a> {
    /// The call was answered with this status and these headers.
    Response {
        /// The response's status.
        status: StatusCode,
        /// The response's headers (a trailers-only gRPC answer carries `grpc-status` here).
        headers: &'a HeaderMap,
    },
    /// The call failed with this error (a timeout, a refusal, the client's own).
    Error(&'a BoxError),
}

impl<'a> Answer<'a> {
    /// The answer of `result`.
    pub fn of<B>(result: &'a Result<Response<B>, BoxError>) -> Self {
        match result {
            Ok(response) => Self::Response {
                status: response.status(),
                headers: response.headers(),
            },
            Err(error) => Self::Error(error),
        }
    }

    /// The response's status; `None` for an error.
    pub fn status(&self) -> Option<StatusCode> {
        match self {
            Self::Response { status, .. } => Some(*status),
            Self::Error(_) => None,
        }
    }

    /// The error; `None` for a response.
    pub fn error(&self) -> Option<&'a BoxError> {
        match self {
            Self::Response { .. } => None,
            Self::Error(error) => Some(error),
        }
    }
}

/// A classifier over HTTP calls made from a closure over an [`Answer`]: `true` is a
/// failure.
///
/// [`Classify`] is implemented for every closure `Fn(&Result<Res, BoxError>) -> bool`, but
/// a closure handed to [`BreakerLayer::with_classifier`](crate::BreakerLayer::with_classifier)
/// must then spell out its argument's type, response body included, since nothing in that
/// call names it. [`Failing::when`] asks for `Fn(Answer<'_>) -> bool`, so the closure's
/// argument is known where it is written.
///
/// # Examples
///
/// A breaker that counts `429` against its backend too, the closure written bare:
///
/// ```
/// use http::{Response, StatusCode};
/// use ironward::SRE;
/// use ironward_tower::{BreakerLayer, Classify, Failing};
///
/// let struggling = Failing::when(|answer| {
///     answer.error().is_some()
///         || answer.status().is_some_and(|s| s.is_server_error() || s == StatusCode::TOO_MANY_REQUESTS)
/// });
/// let throttled = Ok(Response::builder().status(429).body(()).unwrap());
/// let missing = Ok(Response::builder().status(404).body("not here").unwrap());
/// assert!(struggling.is_failure(&throttled));
/// assert!(!struggling.is_failure(&missing));
/// assert!(struggling.is_failure(&Err::<Response<()>, _>("reset".into())));
///
/// let breaker = BreakerLayer::new(SRE).with_classifier(struggling);
/// # drop(breaker);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Failing<F>(F);

impl<F> Failing<F>
where
    F: Fn(Answer<'_>) -> bool,
{
    /// The classifier whose answer is `judge`'s: `true` for a failure.
    pub fn when(judge: F) -> Self {
        Self(judge)
    }
}

impl<B, F> Classify<Response<B>> for Failing<F>
where
    F: Fn(Answer<'_>) -> bool,
{
    fn is_failure(&self, result: &Result<Response<B>, BoxError>) -> bool {
        (self.0)(Answer::of(result))
    }
}
