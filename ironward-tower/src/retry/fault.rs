//! Which errors of the inner service are retried: [`Fault`] and the default, [`FinalErrors`].

/// What an error of the inner service says about retrying the request: the answer of the
/// error classifier given to [`HttpRetry::with_errors`](super::HttpRetry::with_errors).
///
/// An HTTP client fails without a response in two ways that matter here. A connection that
/// was never made (refused, no route, a failed name lookup) sent nothing, so sending the
/// request again cannot repeat its effect, whatever its method: that is [`Fault::Unsent`].
/// A connection that broke after the request was written (reset, closed before the response,
/// a timeout) may have delivered it, so only a request that is safe to replay may go again:
/// [`Fault::Sent`]. Everything else, and every error by default, is [`Fault::Final`].
///
/// A retried error is decided like a `503 Service Unavailable` without `Retry-After` (the
/// status for a transient failure, RFC 9110 §15.6.4): the attempt count, the backoff and the
/// time budget apply as they do to responses.
///
/// # Examples
///
/// ```
/// use std::io;
/// use ironward_tower::Fault;
///
/// let classify = |err: &io::Error| match err.kind() {
///     io::ErrorKind::ConnectionRefused => Fault::Unsent,
///     io::ErrorKind::ConnectionReset | io::ErrorKind::TimedOut => Fault::Sent,
///     _ => Fault::Final,
/// };
/// assert_eq!(classify(&io::ErrorKind::ConnectionRefused.into()), Fault::Unsent);
/// assert_eq!(classify(&io::ErrorKind::PermissionDenied.into()), Fault::Final);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fault {
    /// Not worth retrying: the error is returned to the caller as it came.
    Final,
    /// A transient failure after the request may have reached the server: retried only when
    /// the method is idempotent or the request carries an `Idempotency-Key`.
    Sent,
    /// The request never reached the server: retried whatever its method.
    Unsent,
}

/// The default error classifier of [`HttpRetry`](super::HttpRetry): every error of the inner
/// service is [`Fault::Final`], returned at once and never retried.
///
/// Which errors mean "never sent" is known only to the client that made them (hyper-util's
/// `Error::is_connect`, reqwest's `Error::is_connect`), so none is retried until a classifier
/// says so; a response, by contrast, always has a status to judge.
///
/// # Examples
///
/// ```
/// use http::{Request, Response};
/// use ironward_tower::{FinalErrors, HttpRetry};
/// use tower::retry::Policy;
///
/// let mut policy: HttpRetry<FinalErrors> = HttpRetry::default();
/// let mut request = Request::new(String::new());
/// let mut result: Result<Response<()>, &str> = Err("connection refused");
/// assert!(policy.retry(&mut request, &mut result).is_none());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct FinalErrors;
