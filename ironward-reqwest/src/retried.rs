//! What the caller learns about a call: how many attempts, how long they waited, and why the
//! middleware stopped.

use std::fmt;
use std::time::Duration;

use ironward::http_retry::StopReason;

/// How a call through [`RetryMiddleware`](crate::RetryMiddleware) went: the attempts sent, the
/// time spent waiting between them, and why the middleware stopped.
///
/// Every response the middleware returns carries one in its extensions, a success as well as a
/// failed response it gave up on; every error it returns carries one inside a
/// [`GaveUp`](crate::GaveUp). A plain `Copy` record, so reading it costs nothing.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward::http_retry::StopReason;
/// use ironward_reqwest::{Retried, Stop};
///
/// // A 503, a wait of 200 ms, then a 200: two attempts, and no reason to stop.
/// let recovered = Retried { attempts: 2, stop: None, waited: Duration::from_millis(200) };
/// assert_eq!(recovered.retries(), 1);
///
/// // Three 503s with two retries allowed: the last 503 is returned, and this says why.
/// let exhausted = Retried {
///     attempts: 3,
///     stop: Some(Stop::Decision(StopReason::AttemptsExhausted)),
///     waited: Duration::from_millis(600),
/// };
/// assert_eq!(exhausted.stop.unwrap().to_string(), "retries exhausted");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Retried {
    /// Requests sent, the first included; 0 when the breaker refused the first.
    pub attempts: u32,
    /// Why the middleware stopped, or `None` when the last attempt succeeded (a status below
    /// 400).
    pub stop: Option<Stop>,
    /// The waits the retry decisions asked for, added up: the time the middleware spent asleep
    /// between attempts, as planned (a loaded runtime may oversleep it slightly).
    pub waited: Duration,
}

impl Retried {
    /// The retries made: the attempts after the first.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward_reqwest::Retried;
    ///
    /// let once = Retried { attempts: 1, stop: None, waited: Duration::ZERO };
    /// assert_eq!(once.retries(), 0);
    /// ```
    pub fn retries(&self) -> u32 {
        self.attempts.saturating_sub(1)
    }
}

/// Why the middleware stopped retrying.
///
/// Either the core's decision ([`StopReason`], from `ironward::http_retry`), or one of the two
/// shared guards the middleware may consult: the retry budget or the circuit breaker. Its
/// [`Display`](fmt::Display) is a short lower-case phrase.
///
/// # Examples
///
/// ```
/// use ironward::http_retry::StopReason;
/// use ironward_reqwest::Stop;
///
/// let stop = Stop::from(StopReason::InvalidRetryAfter);
/// assert_eq!(stop, Stop::Decision(StopReason::InvalidRetryAfter));
/// assert_eq!(stop.to_string(), "invalid retry-after value");
/// assert_eq!(Stop::Throttled.to_string(), "retry budget exhausted");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stop {
    /// `http_retry::decide_response` (or `decide`, for a transport error) answered `Stop`:
    /// the status is final, the request is not safe to replay, the retries or the time budget
    /// are spent, or the server's `Retry-After` is malformed, duplicated or above the cap.
    /// Also `BudgetExhausted` when the time budget ran out during a wait.
    Decision(StopReason),
    /// The shared retry budget ([`ironward::Budget`], gRPC A6 throttling) is at or below half
    /// full: too many recent attempts to this backend have failed to allow another retry.
    Throttled,
    /// The shared circuit breaker ([`SharedBreaker`](crate::SharedBreaker)) refused the next
    /// attempt.
    Refused,
}

impl From<StopReason> for Stop {
    fn from(reason: StopReason) -> Self {
        Self::Decision(reason)
    }
}

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Decision(reason) => reason.fmt(f),
            Self::Throttled => f.write_str("retry budget exhausted"),
            Self::Refused => f.write_str("circuit breaker refused the request"),
        }
    }
}

/// The running count of one call: attempts sent and waits planned.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Ledger {
    attempts: u32,
    waited: Duration,
}

impl Ledger {
    /// One more attempt is being sent.
    pub(crate) fn sent(&mut self) {
        self.attempts = self.attempts.saturating_add(1);
    }

    /// The middleware waited `wait` before the next attempt.
    pub(crate) fn slept(&mut self, wait: Duration) {
        self.waited = self.waited.saturating_add(wait);
    }

    /// Attempts sent so far.
    pub(crate) fn attempts(&self) -> u32 {
        self.attempts
    }

    /// The record for the caller, ending for `stop`.
    pub(crate) fn retried(&self, stop: Option<Stop>) -> Retried {
        Retried {
            attempts: self.attempts,
            stop,
            waited: self.waited,
        }
    }
}

/// `response` with `retried` in its extensions, replacing any earlier record (an outer retry
/// middleware's view of the call is its own).
pub(crate) fn mark(mut response: reqwest::Response, retried: Retried) -> reqwest::Response {
    response.extensions_mut().insert(retried);
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(status: u16) -> reqwest::Response {
        http::Response::builder()
            .status(status)
            .body("")
            .unwrap()
            .into()
    }

    #[test]
    fn the_ledger_counts_attempts_and_waits() {
        let mut ledger = Ledger::default();
        assert_eq!(ledger.retried(None).attempts, 0);
        ledger.sent();
        ledger.slept(Duration::from_millis(100));
        ledger.sent();
        ledger.slept(Duration::from_millis(200));
        ledger.sent();
        let stop = Some(Stop::Decision(StopReason::AttemptsExhausted));
        assert_eq!(
            ledger.retried(stop),
            Retried {
                attempts: 3,
                stop,
                waited: Duration::from_millis(300),
            }
        );
        assert_eq!(ledger.attempts(), 3);
        assert_eq!(ledger.retried(None).retries(), 2);
    }

    #[test]
    fn the_ledger_saturates() {
        let mut ledger = Ledger {
            attempts: u32::MAX,
            waited: Duration::MAX,
        };
        ledger.sent();
        ledger.slept(Duration::from_secs(1));
        assert_eq!(ledger.retried(None).attempts, u32::MAX);
        assert_eq!(ledger.retried(None).waited, Duration::MAX);
    }

    #[test]
    fn the_record_rides_in_the_response_extensions() {
        let retried = Retried {
            attempts: 2,
            stop: Some(Stop::Throttled),
            waited: Duration::from_millis(50),
        };
        let response = mark(response(503), retried);
        assert_eq!(response.extensions().get::<Retried>(), Some(&retried));
        assert_eq!(response.status(), 503);
    }

    #[test]
    fn an_outer_record_replaces_an_inner_one() {
        let inner = Retried {
            attempts: 4,
            stop: None,
            waited: Duration::ZERO,
        };
        let outer = Retried {
            attempts: 1,
            ..inner
        };
        let response = mark(mark(response(200), inner), outer);
        assert_eq!(response.extensions().get::<Retried>(), Some(&outer));
    }

    #[test]
    fn stops_read_in_lower_case() {
        for stop in [
            Stop::Decision(StopReason::NotReplayable),
            Stop::Throttled,
            Stop::Refused,
        ] {
            let text = stop.to_string();
            assert_eq!(text, text.to_lowercase());
            assert!(!text.ends_with('.'));
        }
    }
}
