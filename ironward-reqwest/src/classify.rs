//! What the middleware reads from each attempt: whether a transport error left the request
//! unsent, how an outcome counts for the retry budget and the breaker, whether the caller
//! vouched for replay, and the raw `Retry-After` values.

use http::header::RETRY_AFTER;
use http::{HeaderMap, HeaderName, StatusCode};
use ironward::http_retry::retryable_status;

/// Stands in for a `Retry-After` value that is not UTF-8: the core rejects it like any other
/// malformed value, so the retry stops with `InvalidRetryAfter` instead of the value being
/// skipped (skipping it would turn "malformed" into "no minimum").
const UNREADABLE: &str = "\u{FFFD}";

/// Where a transport error left the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Transport {
    /// Connecting failed (`reqwest::Error::is_connect`): nothing was sent, so the server cannot
    /// have acted on it and any method may be sent again.
    Unsent,
    /// The request may have reached the server (a timeout, a connection reset or closed
    /// mid-exchange): only a replayable request may be sent again.
    Sent,
    /// Not a network failure: a request reqwest could not build, a redirect loop, a decoding
    /// error, or an error from another middleware further down. Sending it again would fail
    /// the same way, and it says nothing about the server's health.
    Fatal,
}

impl Transport {
    /// Classifies an error returned by the rest of the middleware chain.
    pub(crate) fn of(error: &reqwest_middleware::Error) -> Self {
        match error {
            reqwest_middleware::Error::Reqwest(e) if e.is_connect() => Self::Unsent,
            reqwest_middleware::Error::Reqwest(e)
                if e.is_builder() || e.is_redirect() || e.is_status() || e.is_decode() =>
            {
                Self::Fatal
            }
            reqwest_middleware::Error::Reqwest(_) => Self::Sent,
            reqwest_middleware::Error::Middleware(_) => Self::Fatal,
        }
    }
}

/// What one attempt's outcome tells a shared budget or breaker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Record a success.
    Pass,
    /// Record a failure.
    Fail,
    /// Record nothing.
    Ignore,
}

/// How one attempt counts for the retry budget and for the breaker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Outcome {
    /// gRPC A6: a success gives tokens back, a retryable failure takes one, anything else
    /// (a 404, a bad URL) is neither.
    pub(crate) budget: Verdict,
    /// go-zero's HTTP breaker, as `ironward_tower::HttpFailures` reads it: a 5xx or a network
    /// failure counts against the backend, any other response for it.
    pub(crate) breaker: Verdict,
}

impl Outcome {
    /// The outcome of an attempt that got a response.
    pub(crate) fn of_status(status: StatusCode) -> Self {
        let budget = if is_failure(status) {
            if retryable_status(status.as_u16()) {
                Verdict::Fail
            } else {
                Verdict::Ignore
            }
        } else {
            Verdict::Pass
        };
        let breaker = if status.is_server_error() {
            Verdict::Fail
        } else {
            Verdict::Pass
        };
        Self { budget, breaker }
    }

    /// The outcome of an attempt that ended in a transport error.
    pub(crate) fn of_error(transport: Transport) -> Self {
        let verdict = match transport {
            Transport::Unsent | Transport::Sent => Verdict::Fail,
            Transport::Fatal => Verdict::Ignore,
        };
        Self {
            budget: verdict,
            breaker: verdict,
        }
    }
}

/// Whether a response is a failure the retry decision has to judge: a 4xx or a 5xx. Anything
/// below 400 ends the call as a success.
pub(crate) fn is_failure(status: StatusCode) -> bool {
    status.is_client_error() || status.is_server_error()
}

/// Whether the caller vouched that the server deduplicates this request: it carries the
/// configured header (by default `Idempotency-Key`) with a non-empty value.
pub(crate) fn vouched(headers: &HeaderMap, header: Option<&HeaderName>) -> bool {
    header
        .and_then(|name| headers.get(name))
        .is_some_and(|value| !value.is_empty())
}

/// Every `Retry-After` field of a response, as received and uncombined, in order.
pub(crate) fn retry_after(headers: &HeaderMap) -> Vec<&str> {
    headers
        .get_all(RETRY_AFTER)
        .iter()
        .map(|value| std::str::from_utf8(value.as_bytes()).unwrap_or(UNREADABLE))
        .collect()
}

/// A draw from `[0, 1)` as the core's `sample_ppm`: `floor(roll · 1_000_001)`, so a uniform
/// draw gives a uniform sample over `0..=1_000_000`. A draw of 1 or more is 1_000_000 (no
/// jitter); NaN and negatives are 0.
pub(crate) fn sample_ppm(roll: f64) -> u32 {
    // `as` truncates towards zero and reads NaN as 0.
    (roll * 1_000_001.0).clamp(0.0, 1_000_000.0) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn headers(pairs: &[(&str, &[u8])]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(
                HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_bytes(value).unwrap(),
            );
        }
        map
    }

    #[test]
    fn an_idempotency_key_vouches_for_replay() {
        let key = HeaderName::from_static("idempotency-key");
        let with = headers(&[("idempotency-key", b"8e03978e-40d5-43e8-bc93-6894a57f9324")]);
        assert!(vouched(&with, Some(&key)));
        assert!(!vouched(&HeaderMap::new(), Some(&key)));
        assert!(!vouched(&headers(&[("idempotency-key", b"")]), Some(&key)));
        // Header names are case-insensitive; a disabled header vouches for nothing.
        assert!(vouched(&headers(&[("Idempotency-Key", b"k")]), Some(&key)));
        assert!(!vouched(&with, None));
        let custom = HeaderName::from_static("x-request-id");
        assert!(!vouched(&with, Some(&custom)));
        assert!(vouched(&headers(&[("x-request-id", b"r1")]), Some(&custom)));
    }

    // RFC 9110 §10.2.3: Retry-After is a single value; every field is handed over as received.
    #[test]
    fn retry_after_values_are_kept_apart_and_in_order() {
        assert!(retry_after(&HeaderMap::new()).is_empty());
        let two = headers(&[("retry-after", b"1"), ("retry-after", b"  2 ")]);
        assert_eq!(retry_after(&two), ["1", "  2 "]);
        let combined = headers(&[("retry-after", b"1, 2")]);
        assert_eq!(retry_after(&combined), ["1, 2"]);
    }

    #[test]
    fn a_retry_after_that_is_not_utf8_reads_as_malformed() {
        let odd = headers(&[("retry-after", b"\xff1")]);
        let values = retry_after(&odd);
        assert_eq!(values, [UNREADABLE]);
        assert_eq!(
            ironward::http_retry::retry_after_delay(values[0], 1_700_000_000),
            None
        );
    }

    #[test]
    fn draws_become_uniform_samples() {
        assert_eq!(sample_ppm(0.0), 0);
        assert_eq!(sample_ppm(0.5), 500_000);
        assert_eq!(sample_ppm(1.0 - f64::EPSILON), 1_000_000);
        assert_eq!(sample_ppm(1.0), 1_000_000);
        assert_eq!(sample_ppm(7.0), 1_000_000);
        assert_eq!(sample_ppm(-0.5), 0);
        assert_eq!(sample_ppm(f64::NAN), 0);
    }

    // gRPC A6 counts successes and retryable failures only; go-zero's HTTP breaker counts a
    // 5xx against the backend and a 4xx for it.
    #[test]
    fn outcomes_follow_a6_for_the_budget_and_go_zero_for_the_breaker() {
        let of = |code| Outcome::of_status(StatusCode::from_u16(code).unwrap());
        let outcome = |budget, breaker| Outcome { budget, breaker };
        use Verdict::{Fail, Ignore, Pass};
        assert_eq!(of(200), outcome(Pass, Pass));
        assert_eq!(of(304), outcome(Pass, Pass));
        assert_eq!(of(404), outcome(Ignore, Pass));
        assert_eq!(of(429), outcome(Fail, Pass));
        assert_eq!(of(501), outcome(Ignore, Fail));
        assert_eq!(of(503), outcome(Fail, Fail));
        assert_eq!(Outcome::of_error(Transport::Unsent), outcome(Fail, Fail));
        assert_eq!(Outcome::of_error(Transport::Sent), outcome(Fail, Fail));
        assert_eq!(Outcome::of_error(Transport::Fatal), outcome(Ignore, Ignore));
    }

    #[test]
    fn only_4xx_and_5xx_are_failures() {
        for (code, failure) in [
            (101, false),
            (200, false),
            (302, false),
            (400, true),
            (599, true),
        ] {
            assert_eq!(is_failure(StatusCode::from_u16(code).unwrap()), failure);
        }
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
        assert_eq!(Transport::of(&error.into()), Transport::Unsent);
    }

    #[tokio::test]
    async fn a_request_reqwest_cannot_build_is_fatal() {
        let error = reqwest::Client::new()
            .get("ftp://127.0.0.1/")
            .send()
            .await
            .unwrap_err();
        assert_eq!(Transport::of(&error.into()), Transport::Fatal);
        let other = reqwest_middleware::Error::Middleware(anyhow::anyhow!("refused upstream"));
        assert_eq!(Transport::of(&other), Transport::Fatal);
    }
}
