//! The error the middleware returns when a call ends without a response.

use std::error::Error;
use std::fmt;

use crate::{Retried, Stop};

/// The middleware gave up on a call that ended without a response.
///
/// That happens when the last attempt failed in transport (the connection was refused, reset,
/// or reqwest timed it out), when the middleware itself cut the last attempt short (its
/// [attempt timeout](crate::RetryMiddleware::with_attempt_timeout), or the call's time budget),
/// or when the circuit breaker refused the first attempt.
///
/// The middleware returns it as `reqwest_middleware::Error::Middleware`, wrapping an
/// `anyhow::Error` that holds this value; [`GaveUp::find`] digs it out. It carries the core's
/// [`Retried`] record, the one both HTTP edges of ironward leave (how many attempts, the
/// waits, and why it stopped: [`stop`](Self::stop)), and the last attempt's own error
/// ([`error`](Self::error), also its [`source`](Error::source)), so `is_connect()`,
/// `is_timeout()` and the URL are still there.
///
/// There is no source error when nothing failed on its own: the breaker refused the first
/// attempt ([`Stop::Refused`], no attempt sent), or the middleware cut the last attempt short.
/// An attempt that the time budget cut short ends the call at once with
/// `Stop::Decided(StopReason::BudgetExhausted)`; one that the attempt timeout cut short is
/// retried like any failure after sending, and when it is the last the stop says why no retry
/// followed (`AttemptsExhausted`, say).
///
/// Every error the middleware returns has this shape, whether or not it retried: a caller
/// matches one type, not "the reqwest error, unless a retry happened".
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward::http_retry::{Settings, Stop, StopReason};
/// use ironward_reqwest::{Clock, GaveUp, RetryMiddleware};
/// use reqwest_middleware::ClientBuilder;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// // A manual clock: the waits between attempts take no time.
/// let (clock, _) = Clock::manual(Duration::ZERO);
/// let client = ClientBuilder::new(reqwest::Client::new())
///     .with(RetryMiddleware::new(Settings::default()).with_clock(clock))
///     .build();
/// // Nothing listens on a port just released: every attempt is refused, and retried, even a
/// // POST, since nothing was sent.
/// let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
/// let err = client.post(format!("http://{free}/")).send().await.unwrap_err();
///
/// let gave_up = GaveUp::find(&err).expect("the middleware's error");
/// assert_eq!(gave_up.retried().attempts, 4);
/// assert_eq!(gave_up.stop(), Stop::Decided(StopReason::AttemptsExhausted));
/// assert!(gave_up.error().is_some_and(|e| e.is_connect()));
/// assert_eq!(err.to_string(), "gave up after 4 attempts: retries exhausted");
/// # }
/// ```
#[derive(Debug)]
pub struct GaveUp {
    retried: Retried,
    stop: Stop,
    error: Option<reqwest_middleware::Error>,
}

impl GaveUp {
    /// Gave up for `stop` after the attempts in `retried`, the last failing with `error`; the
    /// record says `stop` too.
    pub(crate) fn new(
        retried: Retried,
        stop: Stop,
        error: Option<reqwest_middleware::Error>,
    ) -> Self {
        Self {
            retried: Retried {
                stop: Some(stop),
                ..retried
            },
            stop,
            error,
        }
    }

    /// The `GaveUp` inside an error returned through the middleware chain, if there is one.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward_reqwest::GaveUp;
    ///
    /// let other = reqwest_middleware::Error::Middleware(anyhow::anyhow!("not a retry"));
    /// assert!(GaveUp::find(&other).is_none());
    /// ```
    pub fn find(error: &reqwest_middleware::Error) -> Option<&Self> {
        match error {
            reqwest_middleware::Error::Middleware(inner) => inner.downcast_ref(),
            reqwest_middleware::Error::Reqwest(_) => None,
        }
    }

    /// The attempts made, the waits between them and the reason to stop (always `Some`, and
    /// the same as [`stop`](Self::stop)).
    #[must_use]
    pub fn retried(&self) -> Retried {
        self.retried
    }

    /// Why the middleware stopped.
    #[must_use]
    pub fn stop(&self) -> Stop {
        self.stop
    }

    /// The last attempt's error; `None` when the breaker refused the first attempt, so that
    /// nothing was sent, or when the middleware cut the last attempt short.
    #[must_use]
    pub fn error(&self) -> Option<&reqwest_middleware::Error> {
        self.error.as_ref()
    }

    /// The last attempt's error, taken out.
    #[must_use]
    pub fn into_error(self) -> Option<reqwest_middleware::Error> {
        self.error
    }
}

impl fmt::Display for GaveUp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let attempts = self.retried.attempts;
        let plural = if attempts == 1 { "" } else { "s" };
        write!(f, "gave up after {attempts} attempt{plural}: {}", self.stop)
    }
}

impl Error for GaveUp {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        self.error.as_ref().map(|e| e as &(dyn Error + 'static))
    }
}

impl From<GaveUp> for reqwest_middleware::Error {
    fn from(gave_up: GaveUp) -> Self {
        Self::Middleware(anyhow::Error::new(gave_up))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use ironward::http_retry::StopReason;

    use super::*;

    fn gave_up(attempts: u32, stop: Stop, error: Option<reqwest_middleware::Error>) -> GaveUp {
        let retried = Retried {
            attempts,
            waited: Duration::ZERO,
            stop: None,
        };
        GaveUp::new(retried, stop, error)
    }

    #[test]
    fn says_why_in_lower_case() {
        let exhausted = gave_up(4, StopReason::AttemptsExhausted.into(), None);
        assert_eq!(
            exhausted.to_string(),
            "gave up after 4 attempts: retries exhausted"
        );
        assert_eq!(
            gave_up(1, Stop::Throttled, None).to_string(),
            "gave up after 1 attempt: retry budget exhausted"
        );
        assert_eq!(
            gave_up(0, Stop::Refused, None).to_string(),
            "gave up after 0 attempts: circuit breaker refused the request"
        );
    }

    #[test]
    fn the_record_says_the_stop() {
        let budget = gave_up(2, StopReason::BudgetExhausted.into(), None);
        assert_eq!(budget.retried().stop, Some(budget.stop()));
        assert_eq!(budget.retried().attempts, 2);
    }

    #[test]
    fn survives_the_trip_through_the_middleware_error() {
        let last = reqwest_middleware::Error::Middleware(anyhow::anyhow!("connection reset"));
        let err = reqwest_middleware::Error::from(gave_up(
            2,
            StopReason::NotReplayable.into(),
            Some(last),
        ));
        let found = GaveUp::find(&err).expect("a GaveUp inside");
        assert_eq!(found.stop(), Stop::Decided(StopReason::NotReplayable));
        assert_eq!(found.retried().attempts, 2);
        assert_eq!(found.source().unwrap().to_string(), "connection reset");
        assert_eq!(found.error().unwrap().to_string(), "connection reset");
        let plain = reqwest_middleware::Error::Middleware(anyhow::anyhow!("other"));
        assert!(GaveUp::find(&plain).is_none());
    }

    #[test]
    fn a_refusal_has_no_source() {
        let refused = gave_up(0, Stop::Refused, None);
        assert!(refused.source().is_none());
        assert!(refused.into_error().is_none());
    }
}
