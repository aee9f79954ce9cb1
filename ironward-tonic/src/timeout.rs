//! The `grpc-timeout` header: how long a call may take, as gRPC over HTTP/2 writes it.

use std::time::Duration;

use http::HeaderValue;

/// The header's name.
pub(crate) const GRPC_TIMEOUT: &str = "grpc-timeout";

/// The most digits a `grpc-timeout` value holds ("TimeoutValue → {positive integer as ASCII
/// string of at most 8 digits}", gRPC over HTTP/2).
const MOST: u64 = 99_999_999;

/// Each unit, finest first, with its length in nanoseconds.
const UNITS: [(u8, u64); 6] = [
    (b'n', 1),
    (b'u', 1_000),
    (b'm', 1_000_000),
    (b'S', 1_000_000_000),
    (b'M', 60_000_000_000),
    (b'H', 3_600_000_000_000),
];

/// What a `grpc-timeout` value says, `None` when it is malformed: anything but 1 to 8 ASCII
/// digits and one of the units `H`, `M`, `S`, `m`, `u`, `n` (a sign, a space, a ninth digit,
/// an empty value), as gRPC over HTTP/2 writes the header.
///
/// Every value is held exactly: 99 999 999 hours is about 3.6e20 ns, past a `u64` of
/// nanoseconds but well within a `Duration`. Zero, which the grammar ("positive integer")
/// leaves out and grpc-go's `encodeTimeout` writes (`0n`) for a deadline already passed, is
/// read as that.
pub(crate) fn decode(value: &HeaderValue) -> Option<Duration> {
    let (unit, digits) = value.as_bytes().split_last()?;
    if digits.is_empty() || digits.len() > 8 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    // At most 99 999 999: a `u32`.
    let count = digits
        .iter()
        .fold(0u32, |n, &d| n * 10 + u32::from(d - b'0'));
    let &(_, nanos) = UNITS.iter().find(|(u, _)| u == unit)?;
    // 99 999 999 hours is 359 999 996 400 s: no `Duration` product here overflows.
    Duration::from_nanos(nanos).checked_mul(count)
}

/// `remaining` as a `grpc-timeout` value: the finest unit that holds it in 8 digits, rounded up
/// so that the server never reads less time than there is, as grpc-go's `encodeTimeout` writes
/// it. So a value read by [`decode`] is written back as the same time, in the finest unit
/// that holds it (`99999999H` as it was, `2S` as `2000000u`), never shorter. Past 99 999 999 hours (about 11 400 years) it says that many, the most the header
/// holds; nothing left is written `1n`, the least it holds, where grpc-go writes `0n`, which
/// the grammar leaves out.
pub(crate) fn encode(remaining: Duration) -> HeaderValue {
    let nanos = remaining.as_nanos().max(1);
    let (unit, count) = UNITS
        .iter()
        .map(|&(unit, size)| (unit, nanos.div_ceil(u128::from(size))))
        .find(|&(_, count)| count <= u128::from(MOST))
        .unwrap_or((b'H', u128::from(MOST)));
    let mut text = count.to_string();
    text.push(char::from(unit));
    // Digits and an ASCII letter: always a valid header value.
    HeaderValue::try_from(text).unwrap_or(HeaderValue::from_static("99999999H"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decoded(text: &'static str) -> Option<Duration> {
        decode(&HeaderValue::from_static(text))
    }

    #[test]
    fn reads_every_unit_and_refuses_the_malformed() {
        assert_eq!(decoded("1H"), Some(Duration::from_secs(3600)));
        assert_eq!(decoded("2M"), Some(Duration::from_secs(120)));
        assert_eq!(decoded("3S"), Some(Duration::from_secs(3)));
        assert_eq!(decoded("40m"), Some(Duration::from_millis(40)));
        assert_eq!(decoded("50u"), Some(Duration::from_micros(50)));
        assert_eq!(decoded("60n"), Some(Duration::from_nanos(60)));
        // Exactly, past a `u64` of nanoseconds: not saturated to about 584 years.
        assert_eq!(
            decoded("99999999H"),
            Some(Duration::from_secs(99_999_999 * 3600))
        );
        assert_eq!(decoded("0S"), Some(Duration::ZERO));
        for bad in [
            "",
            "S",
            "1",
            "123456789S",
            "1s",
            "-1S",
            "+1S",
            " 1S",
            "1.5S",
            "bogus",
            "1x",
        ] {
            assert_eq!(decoded(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn writes_the_finest_unit_that_fits_rounding_up() {
        let written = |d| encode(d).to_str().unwrap().to_owned();
        assert_eq!(written(Duration::ZERO), "1n", "the least the header holds");
        assert_eq!(written(Duration::from_nanos(99_999_999)), "99999999n");
        assert_eq!(written(Duration::from_millis(100)), "100000u");
        assert_eq!(written(Duration::from_nanos(100_000_001)), "100001u");
        assert_eq!(written(Duration::from_secs(1)), "1000000u");
        assert_eq!(written(Duration::from_secs(200_000)), "200000S");
        assert_eq!(written(Duration::MAX), "99999999H");
        // Every valid value is written back as the same time, in the finest unit that
        // holds it: none is shortened, and the largest stay as they were.
        let rows = [
            ("99999999H", "99999999H"),
            ("99999999M", "99999999M"),
            ("99999999S", "99999999S"),
            ("1H", "3600000m"),
            ("2S", "2000000u"),
            ("99999999n", "99999999n"),
        ];
        for (text, back) in rows {
            assert_eq!(written(decoded(text).unwrap()), back, "{text}");
            assert_eq!(decoded(back), decoded(text), "{text}");
        }
        // What is written reads back as at least the time there was.
        for d in [
            Duration::from_nanos(123_456_789_012),
            Duration::from_secs(7),
        ] {
            assert!(decode(&encode(d)).unwrap() >= d);
        }
    }
}
