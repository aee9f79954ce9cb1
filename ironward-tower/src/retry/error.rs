//! The inner service's errors as the retry engine reads them ([`ClassifyError`],
//! [`FinalErrors`]).

use ironward::http_retry::Fault;

/// Says what an error of the inner service means for a retry: the [`Fault`] the core decides
/// it as.
///
/// The classifier given to [`HttpRetryLayer::with_errors`](super::HttpRetryLayer::with_errors).
/// Every closure `Fn(&E) -> Fault` is one, and so is [`FinalErrors`], the default. It sees the
/// inner service's own error type, so a hyper-util or reqwest error can be asked
/// `is_connect()` directly.
///
/// # Examples
///
/// ```
/// use std::io;
/// use ironward_tower::retry::{ClassifyError, Fault, FinalErrors};
///
/// let refused = io::Error::from(io::ErrorKind::ConnectionRefused);
/// let classify = |err: &io::Error| match err.kind() {
///     io::ErrorKind::ConnectionRefused => Fault::Unsent,
///     _ => Fault::Final,
/// };
/// assert_eq!(classify.fault(&refused), Fault::Unsent);
/// assert_eq!(FinalErrors.fault(&refused), Fault::Final);
/// ```
pub trait ClassifyError<E> {
    /// What `error`, the outcome of one attempt, says about sending the request again.
    fn fault(&self, error: &E) -> Fault;
}

impl<E, F> ClassifyError<E> for F
where
    F: Fn(&E) -> Fault,
{
    fn fault(&self, error: &E) -> Fault {
        self(error)
    }
}

/// The default error classifier: every error of the inner service is [`Fault::Final`], never
/// retried.
///
/// Which errors mean "nothing was sent" only the client that made them knows (hyper-util's
/// `Error::is_connect`, reqwest's `Error::is_connect`), so none is retried until a classifier
/// says so; a response, by contrast, always has a status to judge.
///
/// # Examples
///
/// ```
/// use http::{Request, Response};
/// use ironward::http_retry::{Stop, StopReason};
/// use ironward_tower::retry::{GaveUp, HttpRetryLayer};
/// use tower::{Layer, ServiceExt, service_fn};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let refused = service_fn(|_: Request<()>| async { Err::<Response<()>, _>("connection refused") });
/// let err = HttpRetryLayer::default().layer(refused).oneshot(Request::new(())).await.unwrap_err();
/// let gave_up = err.downcast_ref::<GaveUp>().unwrap();
/// assert_eq!(gave_up.retried().attempts, 1);
/// assert_eq!(gave_up.retried().stop, Some(Stop::Decided(StopReason::NotRetryable)));
/// assert_eq!(gave_up.error().unwrap().to_string(), "connection refused");
/// # }
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct FinalErrors;

impl<E> ClassifyError<E> for FinalErrors {
    fn fault(&self, _: &E) -> Fault {
        Fault::Final
    }
}
