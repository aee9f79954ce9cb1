//! What a retried call leaves on its final response: [`Attempts`] and [`RetryStop`].

use std::fmt;

use ironward::http_retry::StopReason;

/// How many times a request was sent, and why it was not sent again: the record an
/// [`HttpRetry`](super::HttpRetry) policy leaves in the extensions of the response it returns.
///
/// tower's `Retry` clones its policy for every call, so the policy itself cannot be asked
/// afterwards; the response is the one thing the caller is sure to get back. Every response
/// that comes out of a `Retry` with this policy carries one `Attempts`, the success on the
/// first try included; read it with `response.extensions().get::<Attempts>()`. A call that
/// ends in an error of the inner service carries none: the error is returned as it came.
///
/// # Examples
///
/// ```
/// use http::Response;
/// use ironward::http_retry::StopReason;
/// use ironward_tower::{Attempts, RetryStop};
///
/// let mut response = Response::new(());
/// response.extensions_mut().insert(Attempts {
///     sent: 4,
///     stop: Some(RetryStop::Decided(StopReason::AttemptsExhausted)),
/// });
/// let attempts = response.extensions().get::<Attempts>().copied();
/// assert_eq!(attempts.map(|a| a.sent), Some(4));
/// assert!(attempts.is_some_and(|a| !a.is_success()));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Attempts {
    /// How many times the request was sent to the inner service, the first time included: 1
    /// when the first answer was final.
    pub sent: u32,
    /// Why the request was not sent again: `None` when the last answer was a success (a
    /// status below 400), which needs no retry.
    pub stop: Option<RetryStop>,
}

impl Attempts {
    /// Whether the last answer was a success, so that retrying stopped for want of a reason
    /// to retry rather than for one of the [`RetryStop`]s.
    pub fn is_success(&self) -> bool {
        self.stop.is_none()
    }
}

/// Why a failed response was returned instead of being retried.
///
/// # Examples
///
/// ```
/// use ironward::http_retry::StopReason;
/// use ironward_tower::RetryStop;
///
/// assert_eq!(RetryStop::Decided(StopReason::NotRetryable).to_string(), "status is not retryable");
/// assert_eq!(RetryStop::Throttled.to_string(), "retry budget exhausted");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RetryStop {
    /// [`ironward::http_retry::decide_response`] said to stop, for this reason.
    Decided(StopReason),
    /// The decision was to wait and retry, but the shared [`ironward::Budget`] had fallen to
    /// half its tokens or below (gRPC A6 retry throttling): the backend is failing too often
    /// for retries to help.
    Throttled,
}

impl fmt::Display for RetryStop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Decided(reason) => reason.fmt(f),
            Self::Throttled => f.write_str("retry budget exhausted"),
        }
    }
}
