//! What only this edge can say about an attempt: how a reqwest error left the request, and how
//! an attempt counts for the circuit breaker.
//!
//! Everything else about an attempt (whether to retry it, how long to wait, what the retry
//! budget is told) is the core's [`Run`](ironward::http_retry::Run) to decide.

use http::StatusCode;
use ironward::http_retry::{Fault, Timeout};

/// How an error from the rest of the middleware chain left the request, in the core's terms.
///
/// - [`Fault::Unsent`]: connecting failed (`reqwest::Error::is_connect`: refused, no route, a
///   failed name lookup), so nothing reached the server and any method may go again.
/// - [`Fault::Final`]: not a network failure. A request reqwest could not build, a redirect
///   error, a status turned into an error, a body that would not decode, or an error from
///   another middleware further down: sending it again would fail the same way, and it says
///   nothing about the server's health.
/// - [`Fault::Sent`]: any other network failure (a reset, a connection closed mid-exchange,
///   reqwest's own timeout), after which the server may have acted on the request.
pub(crate) fn fault(error: &reqwest_middleware::Error) -> Fault {
    match error {
        reqwest_middleware::Error::Reqwest(e) if e.is_connect() => Fault::Unsent,
        reqwest_middleware::Error::Reqwest(e)
            if e.is_builder() || e.is_redirect() || e.is_status() || e.is_decode() =>
        {
            Fault::Final
        }
        reqwest_middleware::Error::Reqwest(_) => Fault::Sent,
        reqwest_middleware::Error::Middleware(_) => Fault::Final,
    }
}

/// What one attempt tells the circuit breaker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// The backend served the attempt.
    Pass,
    /// The backend failed it.
    Fail,
    /// The attempt says nothing about the backend: the permit is dropped unsettled.
    Neither,
}

impl Verdict {
    /// go-zero's HTTP breaker: a 5xx counts against the backend, any other response for it
    /// (a 404 is the caller's fault, not the server's).
    pub(crate) fn of_status(status: StatusCode) -> Self {
        if status.is_server_error() {
            Self::Fail
        } else {
            Self::Pass
        }
    }

    /// A network failure counts against the backend; a final error says nothing about it.
    pub(crate) fn of_fault(fault: Fault) -> Self {
        match fault {
            Fault::Sent | Fault::Unsent => Self::Fail,
            Fault::Final => Self::Neither,
        }
    }

    /// An attempt the per-attempt timeout cut short is a failure after sending, as reqwest's
    /// own timeout is; one the call's budget cut short was the caller's deadline, not the
    /// backend's, and says nothing (the core tells the retry budget nothing of it either).
    pub(crate) fn of_timeout(timeout: Timeout) -> Self {
        match timeout {
            Timeout::Attempt(_) => Self::of_fault(Fault::Sent),
            Timeout::Budget(_) => Self::Neither,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    // go-zero's HTTP breaker counts a 5xx against the backend and a 4xx for it.
    #[test]
    fn the_breaker_counts_5xx_and_network_failures_against_the_backend() {
        let of = |code| Verdict::of_status(StatusCode::from_u16(code).unwrap());
        assert_eq!(
            [of(200), of(304), of(404), of(429), of(501), of(503)],
            [
                Verdict::Pass,
                Verdict::Pass,
                Verdict::Pass,
                Verdict::Pass,
                Verdict::Fail,
                Verdict::Fail
            ]
        );
        assert_eq!(Verdict::of_fault(Fault::Unsent), Verdict::Fail);
        assert_eq!(Verdict::of_fault(Fault::Sent), Verdict::Fail);
        assert_eq!(Verdict::of_fault(Fault::Final), Verdict::Neither);
        let second = Duration::from_secs(1);
        assert_eq!(Verdict::of_timeout(Timeout::Attempt(second)), Verdict::Fail);
        assert_eq!(
            Verdict::of_timeout(Timeout::Budget(second)),
            Verdict::Neither
        );
    }

    #[tokio::test]
    async fn a_refused_connection_was_never_sent() {
        let port = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            listener.local_addr().unwrap().port()
        };
        let error = reqwest::Client::new()
            .post(format!("http://127.0.0.1:{port}/"))
            .send()
            .await
            .unwrap_err();
        assert_eq!(fault(&error.into()), Fault::Unsent);
    }

    #[tokio::test]
    async fn a_request_reqwest_cannot_build_is_final() {
        let error = reqwest::Client::new()
            .get("ftp://127.0.0.1/")
            .send()
            .await
            .unwrap_err();
        assert_eq!(fault(&error.into()), Fault::Final);
        let other = reqwest_middleware::Error::Middleware(anyhow::anyhow!("refused upstream"));
        assert_eq!(fault(&other), Fault::Final);
    }
}
