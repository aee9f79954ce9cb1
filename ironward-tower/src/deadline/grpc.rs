//! The `grpc-timeout` request header.

use std::time::Duration;

use http::HeaderMap;

/// The time budget a gRPC client sent in its `grpc-timeout` header, if it sent a valid one.
///
/// The format is gRPC over HTTP/2's (`doc/PROTOCOL-HTTP2.md` in grpc/grpc, "Requests"):
/// `TimeoutValue TimeoutUnit`, where the value is 1 to 8 ASCII digits and the unit one of
/// `H` (hours), `M` (minutes), `S` (seconds), `m` (milliseconds), `u` (microseconds) or `n`
/// (nanoseconds), case-sensitive. Anything else (a missing header, a sign, spaces, nine
/// digits, another unit, a second unit) is `None`: the spec gives no other reading, and
/// tonic likewise ignores a malformed header. When the header is repeated, the first value
/// is read.
///
/// A value of zero is read as one nanosecond, not zero. grpc-go sends `0n` for a deadline
/// that has already passed, and a zero budget in this crate means no deadline at all, which
/// would turn an expired call into an unbounded one. The largest value, `99999999H`, is
/// about 11 000 years and fits a [`Duration`].
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use http::HeaderMap;
/// use ironward_tower::grpc_timeout;
///
/// let mut headers = HeaderMap::new();
/// assert_eq!(grpc_timeout(&headers), None);
/// headers.insert("grpc-timeout", "250m".parse().unwrap());
/// assert_eq!(grpc_timeout(&headers), Some(Duration::from_millis(250)));
/// headers.insert("grpc-timeout", "1.5S".parse().unwrap());
/// assert_eq!(grpc_timeout(&headers), None);
/// ```
pub fn grpc_timeout(headers: &HeaderMap) -> Option<Duration> {
    let (digits, unit) = headers
        .get("grpc-timeout")?
        .as_bytes()
        .split_last_chunk::<1>()?;
    if digits.is_empty() || digits.len() > 8 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    // At most 8 digits: below 10^8, so neither this sum nor the products below can overflow.
    let value = digits
        .iter()
        .fold(0u64, |n, d| n * 10 + u64::from(d - b'0'));
    let budget = match unit {
        [b'H'] => Duration::from_secs(value * 3600),
        [b'M'] => Duration::from_secs(value * 60),
        [b'S'] => Duration::from_secs(value),
        [b'm'] => Duration::from_millis(value),
        [b'u'] => Duration::from_micros(value),
        [b'n'] => Duration::from_nanos(value),
        _ => return None,
    };
    Some(budget.max(Duration::from_nanos(1)))
}
