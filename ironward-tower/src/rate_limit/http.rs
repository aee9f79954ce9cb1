//! A [`Limited`] refusal as HTTP: `429`, `Retry-After` and the draft's `RateLimit` fields.

use std::fmt::Write as _;
use std::time::Duration;

use http::header::{HeaderMap, HeaderName, HeaderValue, RETRY_AFTER};
use http::{Response, StatusCode};

use super::Limited;

/// The `RateLimit-Policy` field: the policy's quota and window.
const RATELIMIT_POLICY: HeaderName = HeaderName::from_static("ratelimit-policy");

/// The `RateLimit` field: what is left of the quota, and for how long.
const RATELIMIT: HeaderName = HeaderName::from_static("ratelimit");

/// The largest integer a structured field carries (RFC 9651 §3.3.1: at most 15 digits).
const MAX_INTEGER: u64 = 999_999_999_999_999;

impl Limited {
    /// The response header fields of this refusal: `Retry-After`, `RateLimit-Policy` and
    /// `RateLimit`.
    ///
    /// - `Retry-After` (RFC 9110 §10.2.3) is [`retry_after`](Limited::retry_after) in whole
    ///   seconds, rounded up so that a client waiting that long finds room: 1 ns is 1 s, 1.2 s
    ///   is 2 s, zero stays 0.
    /// - `RateLimit-Policy: "<policy>";q=<quota>;w=<window>` and
    ///   `RateLimit: "<policy>";r=0;t=<retry after>` follow the IETF httpapi draft
    ///   "RateLimit header fields for HTTP", draft-ietf-httpapi-ratelimit-headers-11 (May
    ///   2026), §3 and §4: lists of items whose value is the policy name as a string, with
    ///   integer parameters. The effective window `t` is the same whole seconds as
    ///   `Retry-After`, so `Retry-After` does not point before its end (§6).
    ///
    /// The draft's `w` is whole seconds, at least 1. A window of a second or more is rounded
    /// up, which understates the rate slightly; a shorter window is reported per second,
    /// with the quota scaled to it and rounded down (a bucket of 100 a second with a burst
    /// of 1 is `q=100;w=1`). `w` is left out when the quota never comes back. Every integer
    /// is capped at the 15 digits a structured field carries (about 31.7 million years of
    /// seconds), `Retry-After` included.
    ///
    /// This allocates the map and its values: it belongs in the code that writes the
    /// response, not on the refusal path.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward_tower::Limited;
    ///
    /// let minute = Some(Duration::from_secs(60));
    /// let limited = Limited::new(Duration::from_millis(29_001), 100, minute);
    /// let headers = limited.headers();
    /// assert_eq!(headers["retry-after"], "30");
    /// assert_eq!(headers["ratelimit-policy"], r#""default";q=100;w=60"#);
    /// assert_eq!(headers["ratelimit"], r#""default";r=0;t=30"#);
    /// ```
    pub fn headers(&self) -> HeaderMap {
        let wait = whole_seconds(self.retry_after()).min(MAX_INTEGER);
        let mut headers = HeaderMap::with_capacity(3);
        headers.insert(RETRY_AFTER, HeaderValue::from(wait));

        let mut policy = item(self.policy());
        let quota = self.quota().min(MAX_INTEGER);
        // Writing to a `String` cannot fail.
        let _ = match self.window() {
            Some(window) if window < Duration::from_secs(1) => {
                // Scale the quota to a second: q per window is q · 1 s / window per second.
                let per_second = u128::from(quota) * 1_000_000_000 / window.as_nanos().max(1);
                let quota = u64::try_from(per_second)
                    .unwrap_or(u64::MAX)
                    .min(MAX_INTEGER);
                write!(policy, ";q={quota};w=1")
            }
            Some(window) => {
                let window = whole_seconds(window).min(MAX_INTEGER);
                write!(policy, ";q={quota};w={window}")
            }
            None => write!(policy, ";q={quota}"),
        };
        if let Ok(value) = HeaderValue::try_from(policy) {
            headers.insert(RATELIMIT_POLICY, value);
        }

        let mut limit = item(self.policy());
        let _ = write!(limit, ";r=0;t={wait}");
        if let Ok(value) = HeaderValue::try_from(limit) {
            headers.insert(RATELIMIT, value);
        }
        headers
    }

    /// A `429 Too Many Requests` response with an empty body and [`headers`](Limited::headers).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use http::StatusCode;
    /// use ironward_tower::Limited;
    ///
    /// let limited = Limited::new(Duration::from_nanos(1), 5, Some(Duration::from_secs(1)));
    /// let response = limited.named("burst").into_response::<String>();
    /// assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    /// assert_eq!(response.headers()["retry-after"], "1");
    /// assert_eq!(response.headers()["ratelimit"], r#""burst";r=0;t=1"#);
    /// assert!(response.body().is_empty());
    /// ```
    pub fn into_response<B: Default>(self) -> Response<B> {
        let mut response = Response::new(B::default());
        *response.status_mut() = StatusCode::TOO_MANY_REQUESTS;
        *response.headers_mut() = self.headers();
        response
    }
}

/// `d` in whole seconds, rounded up, saturating at `u64::MAX`.
fn whole_seconds(d: Duration) -> u64 {
    d.as_secs().saturating_add(u64::from(d.subsec_nanos() > 0))
}

/// The start of a list member: `name` as a structured-field string (RFC 9651 §3.3.3), which
/// quotes it and escapes `"` and `\`. The name is printable ASCII ([`Limited::named`]).
fn item(name: &str) -> String {
    let mut item = String::with_capacity(name.len() + 32);
    item.push('"');
    for c in name.chars() {
        if matches!(c, '"' | '\\') {
            item.push('\\');
        }
        item.push(c);
    }
    item.push('"');
    item
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(n: u64) -> Duration {
        Duration::from_secs(n)
    }

    fn wait(d: Duration) -> HeaderValue {
        Limited::new(d, 1, Some(secs(1))).headers()[RETRY_AFTER].clone()
    }

    // RFC 9110 §10.2.3: delay-seconds is a whole number; a client that waits less than the
    // limiter asked would be refused again, so the wait rounds up.
    #[test]
    fn retry_after_rounds_up_to_whole_seconds() {
        assert_eq!(wait(Duration::ZERO), "0");
        assert_eq!(wait(Duration::from_nanos(1)), "1");
        assert_eq!(wait(secs(1)), "1");
        assert_eq!(wait(secs(1) + Duration::from_nanos(1)), "2");
        assert_eq!(wait(Duration::from_millis(59_999)), "60");
    }

    #[test]
    fn huge_waits_are_capped_at_fifteen_digits() {
        let headers = Limited::new(Duration::MAX, 0, None).headers();
        assert_eq!(headers[RETRY_AFTER], "999999999999999");
        assert_eq!(headers[RATELIMIT], r#""default";r=0;t=999999999999999"#);
        assert_eq!(headers[RATELIMIT_POLICY], r#""default";q=0"#);
        let huge = Limited::new(secs(1), u64::MAX, Some(Duration::MAX)).headers();
        assert_eq!(
            huge[RATELIMIT_POLICY],
            r#""default";q=999999999999999;w=999999999999999"#
        );
    }

    // draft-ietf-httpapi-ratelimit-headers-11 §3.1.3: "w" is whole seconds, not zero.
    #[test]
    fn windows_are_whole_seconds_of_at_least_one() {
        let policy = |quota, window| {
            Limited::new(secs(1), quota, Some(window)).headers()[RATELIMIT_POLICY].clone()
        };
        assert_eq!(policy(5, secs(60)), r#""default";q=5;w=60"#);
        assert_eq!(
            policy(5, Duration::from_millis(1500)),
            r#""default";q=5;w=2"#
        );
        assert_eq!(
            policy(1, Duration::from_millis(10)),
            r#""default";q=100;w=1"#
        );
        assert_eq!(
            policy(3, Duration::from_millis(400)),
            r#""default";q=7;w=1"#
        );
        // A zero window is read as 1 ns.
        assert_eq!(policy(3, Duration::ZERO), r#""default";q=3000000000;w=1"#);
    }

    #[test]
    fn names_are_quoted_and_escaped() {
        let limited = Limited::new(secs(3), 10, Some(secs(10))).named(r#"a "b" \c"#);
        let headers = limited.headers();
        assert_eq!(headers[RATELIMIT_POLICY], r#""a \"b\" \\c";q=10;w=10"#);
        assert_eq!(headers[RATELIMIT], r#""a \"b\" \\c";r=0;t=3"#);
    }

    #[test]
    fn a_response_is_429_with_the_headers() {
        let limited = Limited::new(Duration::from_millis(200), 2, Some(secs(1)));
        let response = limited.into_response::<()>();
        assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(response.headers(), &limited.headers());
        assert_eq!(response.headers().len(), 3);
    }
}
