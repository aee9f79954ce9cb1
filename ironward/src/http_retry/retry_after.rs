//! One `Retry-After` field value read as the delay it asks for.

use core::time::Duration;

use super::date::{self, parse_http_date};

/// The longest raw field value read, in bytes.
const MAX_LEN: usize = 1024;

/// The largest delta-seconds accepted: the most whole seconds whose milliseconds still fit an
/// `i64` (`i64::MAX / 1000`), the MoonBit package's bound, kept so both agree on every input.
const MAX_SECONDS: u64 = 9_223_372_036_854_775;

/// Reads one raw `Retry-After` field value as the delay the server asks for.
///
/// RFC 9110 §10.2.3 allows two forms: delta-seconds, a count of seconds, or an HTTP-date after
/// which to retry. This accepts:
///
/// - delta-seconds as ASCII digits only (leading zeros are fine; a sign, a decimal point, a
///   unit, inner whitespace or non-ASCII digits are not), up to 9_223_372_036_854_775 s, the
///   largest count whose milliseconds fit an `i64`;
/// - a strict IMF-fixdate ([`parse_http_date`]): the delay is the time from `now_unix` to the
///   date, zero when the date is not after `now_unix`.
///
/// Only SP and HTAB around the value are trimmed (RFC 9110 §5.5 optional whitespace); any
/// other whitespace makes the value invalid. `now_unix` is the caller's wall clock in Unix
/// seconds and must lie in the years 1601..=9999 (−11_644_473_600 ..= 253_402_300_799).
///
/// Returns `None` for anything else, including a value longer than 1024 bytes (counted before
/// trimming), an empty value, a comma-combined list of values, and the obsolete date forms.
///
/// Differs: the MoonBit package bounds the value at 1024 UTF-16 code units, this at 1024
/// bytes. The two
/// counts agree on ASCII, and a value holding anything else is rejected either way, so no
/// input is read differently.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::http_retry::retry_after_delay;
///
/// let now = 1_445_412_468; // 2015-10-21T07:27:48Z
/// assert_eq!(retry_after_delay("120", now), Some(Duration::from_secs(120)));
/// assert_eq!(retry_after_delay(" 007\t", now), Some(Duration::from_secs(7)));
/// assert_eq!(
///     retry_after_delay("Wed, 21 Oct 2015 07:28:00 GMT", now),
///     Some(Duration::from_secs(12))
/// );
/// // A date already past asks for no wait at all.
/// assert_eq!(retry_after_delay("Wed, 21 Oct 2015 07:00:00 GMT", now), Some(Duration::ZERO));
///
/// assert_eq!(retry_after_delay("-1", now), None);
/// assert_eq!(retry_after_delay("1.5", now), None);
/// assert_eq!(retry_after_delay("5, 10", now), None);
/// ```
pub fn retry_after_delay(value: &str, now_unix: i64) -> Option<Duration> {
    if value.len() > MAX_LEN || !date::in_range(now_unix) {
        return None;
    }
    let value = value.trim_matches([' ', '\t']);
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        return delta_seconds(value.as_bytes()).map(Duration::from_secs);
    }
    let at = parse_http_date(value)?;
    // Both times lie in 1601..=9999, so the difference cannot overflow; a date not after
    // `now_unix` is negative or zero and asks for no wait.
    Some(Duration::from_secs(
        u64::try_from(at - now_unix).unwrap_or(0),
    ))
}

/// The count a run of ASCII digits spells, `None` past [`MAX_SECONDS`].
fn delta_seconds(digits: &[u8]) -> Option<u64> {
    digits.iter().try_fold(0u64, |acc, &b| {
        // `acc` stays at or below MAX_SECONDS, so `acc * 10 + 9` fits a u64.
        let next = acc * 10 + u64::from(b - b'0');
        (next <= MAX_SECONDS).then_some(next)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delta_seconds_stop_at_the_largest_whose_milliseconds_fit_an_i64() {
        assert_eq!(MAX_SECONDS, (i64::MAX / 1000) as u64);
        assert_eq!(delta_seconds(b"9223372036854775"), Some(MAX_SECONDS));
        assert_eq!(delta_seconds(b"9223372036854776"), None);
        assert_eq!(delta_seconds(b"99999999999999999999999999"), None);
    }

    #[test]
    fn leading_zeros_do_not_count_towards_the_bound() {
        let mut digits = [b'0'; 1000];
        digits[999] = b'7';
        assert_eq!(delta_seconds(&digits), Some(7));
        assert_eq!(delta_seconds(b"0"), Some(0));
    }
}
