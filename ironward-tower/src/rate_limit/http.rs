//! A rate limit as HTTP: a [`Limited`] refusal is `429` with `Retry-After` and the draft's
//! `RateLimit` fields, an admitted request's [`Headroom`] is the same two fields.

use std::time::Duration;

use http::header::{HeaderMap, HeaderName, HeaderValue, RETRY_AFTER};
use http::{Response, StatusCode};

use super::{Headroom, Limited};

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
    /// `q` and `w` are [`quota`](Limited::quota) and [`window`](Limited::window), the one
    /// description of a limit [`Quota`'s docs](super::Quota#what-a-client-is-told) give:
    /// the window in whole seconds, rounded up, at least 1 (a bucket of 50 a second with a
    /// burst of 20 is `q=20;w=1`, as its `Display` says "20 requests per 1s"). `w` is left
    /// out when the quota never comes back. Every integer is capped at the 15 digits a
    /// structured field carries (about 31.7 million years of seconds), `Retry-After`
    /// included.
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
        let wait = self.retry_after_seconds();
        // Room for the `Content-Type` of the response these go on, past the three.
        let mut headers = HeaderMap::with_capacity(4);
        headers.insert(RETRY_AFTER, HeaderValue::from(wait));
        // Nothing is left, and all of the quota the wait away: the fields of that headroom,
        // whose `t` is the same whole seconds as `Retry-After`.
        Headroom::new(0, self.retry_after(), self.quota(), self.window())
            .named(self.policy())
            .append_to(&mut headers);
        headers
    }

    /// [`retry_after`](Limited::retry_after) as `Retry-After` gives it: whole seconds,
    /// rounded up, capped at the 15 digits a field carries.
    pub(crate) fn retry_after_seconds(&self) -> u64 {
        retry_after_seconds(self.retry_after())
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

impl Headroom {
    /// The response header fields of this admission: `RateLimit-Policy` and `RateLimit`, as
    /// [`Limited::headers`] writes them, with what is left of the quota as `r` and the
    /// [`reset`](Headroom::reset) in whole seconds, rounded up, as `t`.
    ///
    /// This allocates the map and its values; [`append_to`](Headroom::append_to) adds them
    /// to a map that exists already, as the layer does to each admitted response.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward_tower::Headroom;
    ///
    /// let headroom = Headroom::new(7, Duration::from_millis(41_500), 10, Some(Duration::from_secs(60)));
    /// let headers = headroom.headers();
    /// assert_eq!(headers["ratelimit-policy"], r#""default";q=10;w=60"#);
    /// assert_eq!(headers["ratelimit"], r#""default";r=7;t=42"#);
    /// assert!(headers.get("retry-after").is_none());
    /// ```
    pub fn headers(&self) -> HeaderMap {
        let mut headers = HeaderMap::with_capacity(2);
        self.append_to(&mut headers);
        headers
    }

    /// Appends the two fields of [`headers`](Headroom::headers) to `headers`, keeping any
    /// already there.
    ///
    /// Both fields are lists (draft-ietf-httpapi-ratelimit-headers-11 §3 and §4), one member
    /// per policy, so a request that passed two rate limits carries a member of each: an
    /// inner layer's fields are appended to, never replaced.
    pub fn append_to(&self, headers: &mut HeaderMap) {
        let policy = policy_field(self.policy(), self.quota(), self.window());
        Stamp::new(*self, policy).append_to(headers);
    }
}

/// What a layer adds to one admitted response: the request's headroom, and the policy's
/// `RateLimit-Policy` value, made once per limit and cloned (a reference count) rather than
/// written again for every request.
///
/// [`Headroom::append_to`] and a [`Limited`]'s headers write their fields
/// through one too, with the policy's value made on the spot.
#[derive(Debug)]
pub(crate) struct Stamp {
    pub(super) headroom: Headroom,
    pub(super) policy: Option<HeaderValue>,
}

impl Stamp {
    /// The fields of `headroom`, `policy` being its `RateLimit-Policy` value.
    pub(super) fn new(headroom: Headroom, policy: Option<HeaderValue>) -> Self {
        Self { headroom, policy }
    }

    /// Appends both fields to `headers`, keeping any already there.
    pub(crate) fn append_to(self, headers: &mut HeaderMap) {
        let Self { headroom, policy } = self;
        if let Some(policy) = policy {
            headers.append(RATELIMIT_POLICY, policy);
        }
        append_limit(
            headers,
            headroom.policy(),
            headroom.remaining(),
            headroom.reset(),
        );
    }
}

/// The `RateLimit-Policy` value `"<policy>";q=<quota>;w=<window>`: the same for every
/// response under one policy, so the layer makes it once per limit and clones it.
///
/// `window` is one a client is told of, whole seconds already ([`Limited::window`]); it is
/// rounded up all the same, so that no caller can send a fraction.
pub(super) fn policy_field(
    policy: &str,
    quota: u64,
    window: Option<Duration>,
) -> Option<HeaderValue> {
    let mut value = Field::item(policy);
    value.param(b";q=", quota.min(MAX_INTEGER));
    if let Some(window) = window {
        value.param(b";w=", whole_seconds(window).clamp(1, MAX_INTEGER));
    }
    value.value()
}

/// Appends `RateLimit: "<policy>";r=<remaining>;t=<reset>` to `headers`, `reset` in whole
/// seconds rounded up, written into a buffer on the stack and copied once into its
/// `HeaderValue`.
pub(super) fn append_limit(headers: &mut HeaderMap, policy: &str, remaining: u64, reset: Duration) {
    let mut value = Field::item(policy);
    value.param(b";r=", remaining.min(MAX_INTEGER));
    value.param(b";t=", whole_seconds(reset).min(MAX_INTEGER));
    if let Some(value) = value.value() {
        headers.append(RATELIMIT, value);
    }
}

/// One field value being written: a list member whose value is the policy's name as a
/// structured-field string (RFC 9651 §3.3.3), then integer parameters.
///
/// The name is at most 64 printable ASCII bytes ([`Limited::named`]), 130 quoted and escaped
/// at worst, and two parameters of at most 15 digits add 36: 192 bytes always hold it.
struct Field {
    bytes: [u8; 192],
    len: usize,
}

impl Field {
    /// A value that starts with `name`, quoted, `"` and `\` escaped.
    fn item(name: &str) -> Self {
        let mut field = Self {
            bytes: [0; 192],
            len: 0,
        };
        field.push(b"\"");
        for &byte in name.as_bytes() {
            if matches!(byte, b'"' | b'\\') {
                field.push(b"\\");
            }
            field.push(&[byte]);
        }
        field.push(b"\"");
        field
    }

    /// Adds `key` (`;q=`, say) and `value` in decimal.
    fn param(&mut self, key: &[u8], value: u64) {
        self.push(key);
        self.push(itoa::Buffer::new().format(value).as_bytes());
    }

    /// Adds `bytes`, or as many as fit (never fewer than the bound above allows).
    fn push(&mut self, bytes: &[u8]) {
        let room = self.bytes.len() - self.len;
        let n = bytes.len().min(room);
        self.bytes[self.len..self.len + n].copy_from_slice(&bytes[..n]);
        self.len += n;
    }

    /// The value; `None` for one that is not a valid field value (which the bounds on names
    /// rule out), left out rather than sent broken.
    fn value(&self) -> Option<HeaderValue> {
        HeaderValue::from_bytes(&self.bytes[..self.len]).ok()
    }
}

/// `wait` as a `Retry-After` field gives it: whole seconds, rounded up so that a client
/// waiting that long is not turned away for a fraction of a second, capped at the 15 digits a
/// field carries. The one rounding of every `Retry-After` the crate sends: a rate limit's and
/// a breaker's.
pub(crate) fn retry_after_seconds(wait: Duration) -> u64 {
    whole_seconds(wait).min(MAX_INTEGER)
}

/// `d` in whole seconds, rounded up, saturating at `u64::MAX`.
fn whole_seconds(d: Duration) -> u64 {
    d.as_secs().saturating_add(u64::from(d.subsec_nanos() > 0))
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
        // A window under a second is 1 s, its quota as it is: never scaled to a rate per
        // second the limit does not keep (3 per 400 ms is not 7 at once).
        assert_eq!(policy(1, Duration::from_millis(10)), r#""default";q=1;w=1"#);
        assert_eq!(
            policy(3, Duration::from_millis(400)),
            r#""default";q=3;w=1"#
        );
        assert_eq!(policy(3, Duration::ZERO), r#""default";q=3;w=1"#);
    }

    // A refusal made by hand is told as the layer tells its own: the field, the numbers
    // and the line give the same whole seconds.
    #[test]
    fn a_refusal_says_the_same_window_in_its_field_its_numbers_and_its_line() {
        for (window, told) in [
            (Duration::from_millis(400), 1),
            (Duration::from_millis(1500), 2),
            (secs(60), 60),
        ] {
            let limited = Limited::new(secs(1), 20, Some(window));
            assert_eq!(limited.window(), Some(secs(told)));
            assert_eq!(
                limited.headers()[RATELIMIT_POLICY],
                format!(r#""default";q=20;w={told}"#)
            );
            assert!(
                limited
                    .to_string()
                    .starts_with(&format!("rate limit reached: 20 requests per {told}s, ")),
                "{limited}"
            );
            let headroom = Headroom::new(19, window, 20, Some(window));
            assert_eq!(headroom.window(), Some(secs(told)));
            assert_eq!(
                headroom.headers()[RATELIMIT_POLICY],
                limited.headers()[RATELIMIT_POLICY]
            );
        }
    }

    #[test]
    fn names_are_quoted_and_escaped() {
        let limited = Limited::new(secs(3), 10, Some(secs(10))).named(r#"a "b" \c"#);
        let headers = limited.headers();
        assert_eq!(headers[RATELIMIT_POLICY], r#""a \"b\" \\c";q=10;w=10"#);
        assert_eq!(headers[RATELIMIT], r#""a \"b\" \\c";r=0;t=3"#);
    }

    #[test]
    fn an_admission_sends_what_is_left_and_when_all_of_it_is_back() {
        let headroom = Headroom::new(3, Duration::from_millis(2001), 5, Some(secs(10)));
        let headers = headroom.named("api").headers();
        assert_eq!(headers.len(), 2);
        assert_eq!(headers[RATELIMIT_POLICY], r#""api";q=5;w=10"#);
        assert_eq!(headers[RATELIMIT], r#""api";r=3;t=3"#);
        // A bucket that never refills, with an endless burst: every integer capped.
        let endless = Headroom::new(u64::MAX, Duration::MAX, u64::MAX, None).headers();
        assert_eq!(
            endless[RATELIMIT],
            r#""default";r=999999999999999;t=999999999999999"#
        );
        assert_eq!(endless[RATELIMIT_POLICY], r#""default";q=999999999999999"#);
    }

    #[test]
    fn fields_are_appended_to_those_already_there() {
        let mut headers = Headroom::new(1, secs(1), 2, Some(secs(1)))
            .named("a")
            .headers();
        Headroom::new(7, secs(9), 9, Some(secs(9)))
            .named("b")
            .append_to(&mut headers);
        let members: Vec<_> = headers.get_all(RATELIMIT).iter().collect();
        assert_eq!(members, [r#""a";r=1;t=1"#, r#""b";r=7;t=9"#]);
        assert_eq!(headers.get_all(RATELIMIT_POLICY).iter().count(), 2);
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
