//! What [`HttpRetry`](super::HttpRetry) reads for the core: the request's replay facts, the
//! response's `Retry-After` fields, and its sources' readings in the core's units.

use std::time::Duration;

use http::header::RETRY_AFTER;
use http::{HeaderMap, HeaderName, Request};

/// The header by which a client asks the server to deduplicate a request
/// (draft-ietf-httpapi-idempotency-key-header).
const IDEMPOTENCY_KEY: HeaderName = HeaderName::from_static("idempotency-key");

/// `sample_ppm` that leaves the client delay whole.
const PPM: u32 = 1_000_000;

/// Whether the request carries an `Idempotency-Key`, read as the caller's word that the
/// server deduplicates by it, which makes a non-idempotent method replay-safe.
pub(super) fn has_idempotency_key<B>(request: &Request<B>) -> bool {
    request.headers().contains_key(IDEMPOTENCY_KEY)
}

/// A copy of the whole request, extensions included, to send again.
pub(super) fn copy<B: Clone>(request: &Request<B>) -> Request<B> {
    let mut copy = Request::new(request.body().clone());
    *copy.method_mut() = request.method().clone();
    *copy.uri_mut() = request.uri().clone();
    *copy.version_mut() = request.version();
    *copy.headers_mut() = request.headers().clone();
    *copy.extensions_mut() = request.extensions().clone();
    copy
}

/// Copies up to two `Retry-After` field values into `fields` and returns how many there
/// were: two already mean "ambiguous" to the core, so a third need not be read. A value that
/// is not UTF-8 is passed as the empty string, which the core rejects like any other
/// malformed value.
pub(super) fn read_retry_after<'a>(headers: &'a HeaderMap, fields: &mut [&'a str; 2]) -> usize {
    let mut count = 0;
    for (field, value) in fields.iter_mut().zip(headers.get_all(RETRY_AFTER)) {
        *field = std::str::from_utf8(value.as_bytes()).unwrap_or("");
        count += 1;
    }
    count
}

/// A roll in `[0, 1)` as parts per million: `floor(roll · 1_000_000)`, held to
/// `0..=1_000_000`; NaN is 0.
pub(super) fn sample_ppm(roll: f64) -> u32 {
    // `clamp` passes NaN through, and the cast reads NaN as 0.
    (roll * f64::from(PPM)).clamp(0.0, f64::from(PPM)) as u32
}

/// Whole Unix seconds for `decide_response`'s `now_unix`; past `i64::MAX` (never, in
/// practice) is `i64::MAX`, which the core rejects as out of range.
pub(super) fn unix_seconds(since_epoch: Duration) -> i64 {
    i64::try_from(since_epoch.as_secs()).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use http::{HeaderValue, Method, Version};

    use super::*;

    #[test]
    fn rolls_become_parts_per_million() {
        assert_eq!(sample_ppm(0.0), 0);
        assert_eq!(sample_ppm(0.5), 500_000);
        assert_eq!(sample_ppm(0.999_999_9), 999_999);
        assert_eq!(sample_ppm(1.0), PPM);
        assert_eq!(sample_ppm(7.0), PPM);
        assert_eq!(sample_ppm(f64::INFINITY), PPM);
        assert_eq!(sample_ppm(-0.5), 0);
        assert_eq!(sample_ppm(f64::NAN), 0);
    }

    #[test]
    fn unix_seconds_saturate() {
        assert_eq!(unix_seconds(Duration::from_millis(1_500)), 1);
        assert_eq!(unix_seconds(Duration::MAX), i64::MAX);
    }

    #[test]
    fn reads_at_most_two_retry_after_fields() {
        let read = |values: &[&'static str]| {
            let mut headers = HeaderMap::new();
            for value in values {
                headers.append(RETRY_AFTER, HeaderValue::from_static(value));
            }
            let mut fields = ["", ""];
            let count = read_retry_after(&headers, &mut fields);
            (count, fields.map(str::to_owned))
        };
        assert_eq!(read(&[]).0, 0);
        assert_eq!(read(&["5"]), (1, ["5".to_owned(), String::new()]));
        assert_eq!(
            read(&["5", "5", "6"]),
            (2, ["5".to_owned(), "5".to_owned()])
        );
    }

    #[test]
    fn any_idempotency_key_marks_the_request_replay_safe() {
        let keyed = Request::post("/")
            .header("Idempotency-Key", "")
            .body(())
            .unwrap();
        assert!(has_idempotency_key(&keyed));
        assert!(!has_idempotency_key(&Request::post("/").body(()).unwrap()));
    }

    #[test]
    fn the_kept_copy_is_the_whole_request() {
        let mut request = Request::put("http://example.com/a?b=c")
            .version(Version::HTTP_10)
            .header("idempotency-key", "k1")
            .body(String::from("body"))
            .unwrap();
        request.extensions_mut().insert(7u8);
        let copy = copy(&request);
        assert_eq!(copy.method(), Method::PUT);
        assert_eq!(copy.uri(), request.uri());
        assert_eq!(copy.version(), Version::HTTP_10);
        assert_eq!(copy.headers(), request.headers());
        assert_eq!(copy.extensions().get::<u8>(), Some(&7));
        assert_eq!(copy.body(), "body");
    }
}
