//! The error of a retried call that ended without a response, the same for every HTTP edge.

use alloc::boxed::Box;
use core::error::Error;
use core::fmt;

use super::{Retried, Stop};

/// A retried call ended without a response: how it went, and the last attempt's error.
///
/// Both HTTP edges of the workspace (ironward-tower's `HttpRetryLayer` and
/// ironward-reqwest's `RetryMiddleware`) end every call that got no response with one of
/// these, whether or not they retried, so a caller matches one type. It holds:
///
/// - [`retried`](Self::retried): the attempts sent, the waits, and the [`stop`](Self::stop)
///   (always `Some` in the record);
/// - [`error`](Self::error), also its [`source`](Error::source): the error that ended the last
///   attempt, boxed; [`error_as`](Self::error_as) reads it as the client's own type;
/// - [`timed_out`](Self::timed_out): whether the last attempt was instead cut short by the
///   edge (its attempt timeout, or what was left of the call's time budget); the error is then
///   `None`, and so it is when nothing was sent (a breaker refused the first attempt).
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::http_retry::{GaveUp, Retried, Stop, StopReason};
///
/// let retried = Retried { attempts: 4, waited: Duration::from_millis(1_400), stop: None };
/// let reset = std::io::Error::from(std::io::ErrorKind::ConnectionReset);
/// let gave_up = GaveUp::new(retried, StopReason::AttemptsExhausted.into(), false, Some(reset.into()));
/// assert_eq!(gave_up.to_string(), "gave up after 4 attempts: retries exhausted");
/// assert_eq!(gave_up.retried().stop, Some(gave_up.stop()));
/// let io = gave_up.error_as::<std::io::Error>().unwrap();
/// assert_eq!(io.kind(), std::io::ErrorKind::ConnectionReset);
/// ```
#[derive(Debug)]
pub struct GaveUp {
    retried: Retried,
    stop: Stop,
    timed_out: bool,
    error: Option<Box<dyn Error + Send + Sync>>,
}

impl GaveUp {
    /// Gave up for `stop` after the attempts in `retried` (whose record then says `stop`
    /// too), the last ending in `error` or, if `timed_out`, cut short.
    pub fn new(
        retried: Retried,
        stop: Stop,
        timed_out: bool,
        error: Option<Box<dyn Error + Send + Sync>>,
    ) -> Self {
        Self {
            retried: Retried {
                stop: Some(stop),
                ..retried
            },
            stop,
            timed_out,
            error,
        }
    }

    /// The attempts sent, the waits between them and why the run stopped.
    pub fn retried(&self) -> Retried {
        self.retried
    }

    /// Why the run stopped.
    #[must_use]
    pub fn stop(&self) -> Stop {
        self.stop
    }

    /// Whether the edge cut the last attempt short: its attempt timeout, or what was left of
    /// the call's time budget.
    #[must_use]
    pub fn timed_out(&self) -> bool {
        self.timed_out
    }

    /// The error that ended the last attempt, if one did.
    #[must_use]
    pub fn error(&self) -> Option<&(dyn Error + Send + Sync + 'static)> {
        self.error.as_deref()
    }

    /// The error that ended the last attempt, if one did and it is a `T`: the client's own
    /// error type (reqwest's, hyper-util's), to ask it `is_connect()` and the like.
    #[must_use]
    pub fn error_as<T: Error + 'static>(&self) -> Option<&T> {
        self.error()?.downcast_ref()
    }

    /// The error that ended the last attempt, taken out.
    #[must_use]
    pub fn into_error(self) -> Option<Box<dyn Error + Send + Sync>> {
        self.error
    }
}

impl fmt::Display for GaveUp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let attempts = self.retried.attempts;
        let plural = if attempts == 1 { "" } else { "s" };
        write!(f, "gave up after {attempts} attempt{plural}: {}", self.stop)?;
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
            .map(|error| error as &(dyn Error + 'static))
    }
}

#[cfg(test)]
mod tests {
    use alloc::string::ToString;
    use core::time::Duration;

    use super::*;
    use crate::http_retry::StopReason;

    fn retried(attempts: u32) -> Retried {
        Retried {
            attempts,
            waited: Duration::ZERO,
            stop: None,
        }
    }

    #[test]
    fn says_how_many_attempts_and_why_in_lower_case() {
        let budget = StopReason::BudgetExhausted.into();
        assert_eq!(
            GaveUp::new(retried(1), budget, true, None).to_string(),
            "gave up after 1 attempt: time budget exhausted (the last attempt timed out)"
        );
        assert_eq!(
            GaveUp::new(retried(3), Stop::Throttled, false, None).to_string(),
            "gave up after 3 attempts: retry budget exhausted"
        );
        assert_eq!(
            GaveUp::new(retried(0), Stop::Refused, false, None).to_string(),
            "gave up after 0 attempts: circuit breaker refused the request"
        );
    }

    #[test]
    fn the_record_says_the_stop_and_the_last_error_is_the_source() {
        let reset: Box<dyn Error + Send + Sync> = "connection reset".into();
        let gave_up = GaveUp::new(retried(2), Stop::Throttled, false, Some(reset));
        assert_eq!(gave_up.retried().stop, Some(Stop::Throttled));
        assert_eq!(gave_up.stop(), Stop::Throttled);
        assert_eq!(
            gave_up.source().map(ToString::to_string).as_deref(),
            Some("connection reset")
        );
        assert!(gave_up.error_as::<GaveUp>().is_none(), "not that type");
        assert_eq!(
            gave_up.into_error().map(|e| e.to_string()).as_deref(),
            Some("connection reset")
        );
    }

    #[test]
    fn a_refusal_has_no_source() {
        let refused = GaveUp::new(retried(0), Stop::Refused, false, None);
        assert!(refused.source().is_none() && refused.error().is_none());
        assert!(refused.into_error().is_none());
    }
}
