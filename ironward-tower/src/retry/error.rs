//! The inner service's errors as the retry engine reads them ([`ClassifyError`],
//! [`FinalErrors`]), and the error of a call that ended without a response ([`GaveUp`]).

use std::error::Error;
use std::fmt;

use ironward::http_retry::{Fault, Retried};
use tower::BoxError;

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

/// A retried call ended without a response: how it went, and the last attempt's error.
///
/// Every error an [`HttpRetryService`](super::HttpRetryService) call returns is one of these,
/// boxed into `tower::BoxError` (test it with `err.downcast_ref::<GaveUp>()`), whether or not
/// it retried: a caller matches one type. A call whose last attempt got a response, a failed
/// one included, returns the response instead, with the same [`Retried`] in its extensions.
///
/// - [`retried`](Self::retried): the attempts sent, the waits, and why the run stopped (always
///   `Some` for a call the layer gave up on).
/// - [`error`](Self::error), also its [`source`](Error::source): the inner service's error
///   that ended the last attempt, boxed. An error from the inner service's `poll_ready`
///   before a retry counts as that attempt's error.
/// - [`timed_out`](Self::timed_out): whether the last attempt was instead cut short, by the
///   attempt timeout or by what was left of the budget; its [`error`](Self::error) is then
///   `None`.
///
/// Its fields are private, so it can gain one without breaking a caller.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use http::{Request, Response};
/// use ironward::http_retry::Settings;
/// use ironward_tower::Dice;
/// use ironward_tower::retry::{Fault, GaveUp, HttpRetryLayer};
/// use tower::{Layer, ServiceExt, service_fn};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let reset = service_fn(|_: Request<()>| async { Err::<Response<()>, _>("connection reset") });
/// let layer = HttpRetryLayer::new(Settings { max_retries: 1, ..Settings::default() })
///     .with_dice(Dice::from_fn(|| 1.0))
///     .with_errors(|_: &&str| Fault::Sent);
/// let err = layer.layer(reset).oneshot(Request::new(())).await.unwrap_err();
/// let gave_up = err.downcast_ref::<GaveUp>().unwrap();
/// assert_eq!(gave_up.retried().waited, Duration::from_millis(200));
/// assert!(!gave_up.timed_out());
/// assert_eq!(err.to_string(), "gave up after 2 attempts: retries exhausted");
/// # }
/// ```
#[derive(Debug)]
pub struct GaveUp {
    retried: Retried,
    timed_out: bool,
    error: Option<BoxError>,
}

impl GaveUp {
    /// Gave up after the attempts in `retried`, the last ending in `error` or a timeout.
    pub(super) fn new(retried: Retried, timed_out: bool, error: Option<BoxError>) -> Self {
        Self {
            retried,
            timed_out,
            error,
        }
    }

    /// The attempts sent, the waits between them, and why the run stopped.
    pub fn retried(&self) -> Retried {
        self.retried
    }

    /// Whether the last attempt was cut short by a timeout: the attempt timeout, or what was
    /// left of the total budget.
    pub fn timed_out(&self) -> bool {
        self.timed_out
    }

    /// The inner service's error that ended the last attempt, if one did.
    pub fn error(&self) -> Option<&(dyn Error + Send + Sync + 'static)> {
        self.error.as_deref()
    }

    /// The inner service's error that ended the last attempt, taken out.
    pub fn into_error(self) -> Option<BoxError> {
        self.error
    }
}

impl fmt::Display for GaveUp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let attempts = self.retried.attempts;
        let plural = if attempts == 1 { "" } else { "s" };
        write!(f, "gave up after {attempts} attempt{plural}")?;
        if let Some(stop) = self.retried.stop {
            write!(f, ": {stop}")?;
        }
        if self.timed_out {
            f.write_str(" (the last attempt timed out)")?;
        }
        Ok(())
    }
}

impl Error for GaveUp {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        self.error
            .as_deref()
            .map(|err| err as &(dyn Error + 'static))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use ironward::http_retry::{Stop, StopReason};

    use super::*;

    #[test]
    fn display_says_how_many_attempts_and_why_in_lower_case() {
        let retried = |attempts, stop| Retried {
            attempts,
            waited: Duration::ZERO,
            stop,
        };
        let exhausted = Some(Stop::Decided(StopReason::BudgetExhausted));
        let one = GaveUp::new(retried(1, exhausted), true, None);
        assert_eq!(
            one.to_string(),
            "gave up after 1 attempt: time budget exhausted (the last attempt timed out)"
        );
        let throttled = GaveUp::new(retried(3, Some(Stop::Throttled)), false, None);
        assert_eq!(
            throttled.to_string(),
            "gave up after 3 attempts: retry budget exhausted"
        );
        assert_eq!(
            GaveUp::new(retried(2, None), false, None).to_string(),
            "gave up after 2 attempts"
        );
    }

    #[test]
    fn the_last_error_is_the_source() {
        let gave_up = GaveUp::new(Retried::default(), false, Some("reset".into()));
        assert_eq!(
            gave_up.source().map(ToString::to_string).as_deref(),
            Some("reset")
        );
        assert_eq!(
            gave_up.into_error().map(|e| e.to_string()).as_deref(),
            Some("reset")
        );
    }
}
