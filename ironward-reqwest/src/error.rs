//! The error the middleware returns when a call ends without a response.

use ironward::http_retry::GaveUp;

/// The [`GaveUp`] inside an error the middleware returned: the call ended without a response.
///
/// That happens when the last attempt failed in transport (the connection was refused, reset,
/// or reqwest timed it out), when the middleware itself cut the last attempt short (its
/// [attempt timeout](crate::RetryMiddleware::with_attempt_timeout), or the call's time budget),
/// or when the circuit breaker refused the first attempt.
///
/// The middleware returns it as `reqwest_middleware::Error::Middleware`, wrapping an
/// `anyhow::Error` that holds the `GaveUp`; this digs it out (`None` for any other error). It
/// is the core's [`GaveUp`], the one both HTTP edges of ironward return: the
/// [`Retried`](crate::Retried) record (how many attempts, the waits, and why it stopped), and
/// the last attempt's own error, a `reqwest_middleware::Error`
/// ([`error_as`](GaveUp::error_as)), so `is_connect()`, `is_timeout()` and the URL are still
/// there.
///
/// There is no source error when nothing failed on its own: the breaker refused the first
/// attempt ([`Stop::Refused`](crate::Stop::Refused), no attempt sent), or the middleware cut the last attempt short.
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
/// use ironward_reqwest::{Clock, RetryMiddleware, gave_up};
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
/// let gave_up = gave_up(&err).expect("the middleware's error");
/// assert_eq!(gave_up.retried().attempts, 4);
/// assert_eq!(gave_up.stop(), Stop::Decided(StopReason::AttemptsExhausted));
/// let last = gave_up.error_as::<reqwest_middleware::Error>();
/// assert!(last.is_some_and(|e| e.is_connect()));
///
/// let other = reqwest_middleware::Error::Middleware(anyhow::anyhow!("not a retry"));
/// assert!(ironward_reqwest::gave_up(&other).is_none());
/// assert_eq!(err.to_string(), "gave up after 4 attempts: retries exhausted");
/// # }
/// ```
pub fn gave_up(error: &reqwest_middleware::Error) -> Option<&GaveUp> {
    match error {
        reqwest_middleware::Error::Middleware(inner) => inner.downcast_ref(),
        reqwest_middleware::Error::Reqwest(_) => None,
    }
}

/// `gave_up` as the middleware chain carries it.
pub(crate) fn into_middleware(gave_up: GaveUp) -> reqwest_middleware::Error {
    reqwest_middleware::Error::Middleware(anyhow::Error::new(gave_up))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use ironward::http_retry::{Retried, Stop, StopReason};

    use super::*;

    #[test]
    fn survives_the_trip_through_the_middleware_error() {
        let last = reqwest_middleware::Error::Middleware(anyhow::anyhow!("connection reset"));
        let retried = Retried {
            attempts: 2,
            waited: Duration::ZERO,
            stop: None,
        };
        let stop = StopReason::NotReplayable.into();
        let err = into_middleware(GaveUp::new(retried, stop, false, Some(last.into())));
        let found = gave_up(&err).expect("a GaveUp inside");
        assert_eq!(found.stop(), Stop::Decided(StopReason::NotReplayable));
        assert_eq!(found.retried().attempts, 2);
        let source = std::error::Error::source(found).unwrap();
        assert_eq!(source.to_string(), "connection reset");
        assert_eq!(found.error().unwrap().to_string(), "connection reset");
        assert!(found.error_as::<reqwest_middleware::Error>().is_some());
        assert!(
            gave_up(&reqwest_middleware::Error::Middleware(anyhow::anyhow!(
                "no"
            )))
            .is_none()
        );
    }
}
