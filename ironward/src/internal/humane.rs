//! Durations as humane strings ("100ms", "10s"), for the `serde` feature.
//!
//! People write timeouts and windows in config files as a number and a unit: go-zero's YAML
//! configs say `Timeout: 2s`, and humantime parses `"1h 30m"`. A count of nanoseconds or
//! serde's default `{ "secs": 0, "nanos": 100000000 }` is hard to read and easy to get wrong by a
//! factor of a thousand. The policy records put `#[serde(with = "crate::internal::humane")]` on each
//! `Duration` field, so `{"window": "10s", "bucket": "100ms"}` reads back as written.
//!
//! # Writing
//!
//! One whole number and one unit: the largest of `h`, `m`, `s`, `ms`, `us`, `ns` that holds the
//! duration exactly. 100 ms is `"100ms"`, 90 s is `"90s"` (not `"1m30s"`), 2 min is `"2m"`, 1.5 s
//! is `"1500ms"`, zero is `"0s"`, and `Duration::MAX` is its count of nanoseconds,
//! `"18446744073709551615999999999ns"`. Nothing is allocated: the digits go into a stack buffer
//! handed to `serialize_str`.
//!
//! # Reading
//!
//! ```text
//! duration = part { " "* part }        one part or more, maybe separated by spaces (U+0020)
//! part     = digits [ "." digits ] unit
//! digits   = one or more of the ASCII digits 0 to 9
//! unit     = ns | us | µs | μs | ms | s | m | h | d          (lower case only)
//! ```
//!
//! For example `"100ms"`, `"10s"`, `"1m30s"`, `"1h 30m"`, `"1.5s"`, `"0.25ms"`, `"2h"`, `"1d"`.
//!
//! - Parts add up. Their units go from largest to smallest, each at most once, so `"30s1m"` and
//!   `"1s1s"` (likely slips) are errors.
//! - `µs` may be written with the micro sign (U+00B5) or the Greek mu (U+03BC), or as `us`. `m`
//!   is minutes, never months; `d` is 86 400 s.
//! - A decimal is exact or an error: each part must come to a whole number of nanoseconds. It is
//!   never rounded or truncated, so `"1.5ns"` and `"1.0000000001s"` are errors, while
//!   `"0.0000000001h"` (360 ns) and trailing zeros (`"1.500000000000s"`) are fine. A decimal
//!   point needs a digit on each side (`".5s"` and `"1.s"` are errors).
//! - Also errors: the empty string, a number without a unit (`"10"`), an unknown or upper-case
//!   unit (`"10x"`, `"10S"`), a sign (`"-1s"`, `"+1s"`), a digit other than ASCII (`"１s"`), a
//!   space between a number and its unit (`"10 s"`), whitespace before or after the whole
//!   string, anything but a string (`10` in JSON is an error, not ten seconds), and a total
//!   past `Duration::MAX` (`u64::MAX` seconds and 999 999 999 ns, about 584.9 billion years).
//!   Overflow is an error, never a panic or a wrap.
//!
//! Every string written reads back to the same duration, `Duration::MAX` included.
//!
//! # Examples
//!
//! A record of a caller's own, read and written as the policy records are:
//!
//! ```
//! use core::time::Duration;
//!
//! #[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
//! struct Call {
//!     #[serde(with = "ironward::humane")]
//!     deadline: Duration,
//! }
//!
//! let call: Call = serde_json::from_str(r#"{"deadline": "1m30s"}"#).unwrap();
//! assert_eq!(call.deadline, Duration::from_secs(90));
//! assert_eq!(serde_json::to_string(&call).unwrap(), r#"{"deadline":"90s"}"#);
//! assert!(serde_json::from_str::<Call>(r#"{"deadline": "-1s"}"#).is_err());
//! ```

use core::fmt;
use core::time::Duration;

use serde::{de, ser};

/// What a reader is told a duration looks like.
const EXPECTED: &str = "a duration such as \"100ms\" or \"10s\"";

const NANOS_PER_SEC: u128 = 1_000_000_000;

/// `Duration::MAX` in nanoseconds: no string may come to more.
const MAX_NANOS: u128 = Duration::MAX.as_nanos();

/// The units a duration is written in, largest first, with their length in nanoseconds.
const WRITTEN: [(&str, u128); 6] = [
    ("h", 3_600 * NANOS_PER_SEC),
    ("m", 60 * NANOS_PER_SEC),
    ("s", NANOS_PER_SEC),
    ("ms", 1_000_000),
    ("us", 1_000),
    ("ns", 1),
];

/// The longest string written: the 39 digits of `u128::MAX` and a two-letter unit.
const LONGEST: usize = 41;

/// The length in nanoseconds of each unit a string may use.
fn unit(token: &str) -> Option<u128> {
    match token {
        "d" => Some(86_400 * NANOS_PER_SEC),
        "h" => Some(3_600 * NANOS_PER_SEC),
        "m" => Some(60 * NANOS_PER_SEC),
        "s" => Some(NANOS_PER_SEC),
        "ms" => Some(1_000_000),
        // The micro sign U+00B5 and the Greek mu U+03BC look alike; accept both.
        "us" | "\u{b5}s" | "\u{3bc}s" => Some(1_000),
        "ns" => Some(1),
        _ => None,
    }
}

/// Serializes `d` as one whole number and the largest unit that holds it exactly ("100ms").
pub fn serialize<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    let mut buf = [0; LONGEST];
    match core::str::from_utf8(write(*d, &mut buf)) {
        Ok(text) => s.serialize_str(text),
        // Unreachable: `write` puts only ASCII digits and letters in the buffer.
        Err(e) => Err(ser::Error::custom(e)),
    }
}

/// Deserializes a humane string ("1m30s") into a `Duration`; see the module docs for the grammar.
pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    d.deserialize_str(Humane)
}

/// Writes `d` into the end of `buf` and returns the bytes written.
fn write(d: Duration, buf: &mut [u8; LONGEST]) -> &[u8] {
    let nanos = d.as_nanos();
    let (mut count, unit) = if nanos == 0 {
        (0, "s")
    } else {
        WRITTEN
            .iter()
            .find(|&&(_, len)| nanos.is_multiple_of(len))
            .map_or((nanos, "ns"), |&(unit, len)| (nanos / len, unit))
    };
    let mut at = LONGEST;
    for &b in unit.as_bytes().iter().rev() {
        at -= 1;
        buf[at] = b;
    }
    loop {
        at -= 1;
        buf[at] = b'0' + (count % 10) as u8;
        count /= 10;
        if count == 0 {
            return &buf[at..];
        }
    }
}

/// The serde visitor that reads a duration from a string.
#[derive(Debug)]
struct Humane;

impl de::Visitor<'_> for Humane {
    type Value = Duration;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(EXPECTED)
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Duration, E> {
        parse(text).map_err(|why| E::custom(Invalid { text, why }))
    }
}

/// Reads `text` by the grammar in the module docs.
fn parse(text: &str) -> Result<Duration, Why<'_>> {
    if text.is_empty() {
        return Err(Why::Empty);
    }
    if text.trim() != text {
        return Err(Why::Padded);
    }
    let mut rest = text;
    let mut total: u128 = 0;
    // The length of the previous part's unit: each must be shorter than the one before.
    let mut previous = None;
    while !rest.is_empty() {
        rest = rest.trim_start_matches(' ');
        let (whole, after) = split_while(rest, |c| c.is_ascii_digit());
        if whole.is_empty() {
            return Err(not_a_number(after));
        }
        let (fraction, after) = match after.strip_prefix('.') {
            Some(after) => match split_while(after, |c| c.is_ascii_digit()) {
                ("", _) => return Err(Why::BarePoint),
                split => split,
            },
            None => ("", after),
        };
        let (token, after) = split_while(after, char::is_alphabetic);
        let Some(len) = unit(token) else {
            return Err(not_a_unit(token, after));
        };
        if previous.is_some_and(|previous| len >= previous) {
            return Err(Why::OutOfOrder);
        }
        previous = Some(len);
        total = amount(whole, fraction, len)?
            .checked_add(total)
            .filter(|&total| total <= MAX_NANOS)
            .ok_or(Why::Overflow)?;
        rest = after;
    }
    let secs = u64::try_from(total / NANOS_PER_SEC).map_err(|_| Why::Overflow)?;
    let nanos = u32::try_from(total % NANOS_PER_SEC).map_err(|_| Why::Overflow)?;
    // `nanos` is below a second, so `Duration::new` cannot carry into `secs` and overflow.
    Ok(Duration::new(secs, nanos))
}

/// Splits `s` after its longest prefix of characters that `keep` accepts.
fn split_while(s: &str, keep: impl Fn(char) -> bool) -> (&str, &str) {
    let end = s.find(|c| !keep(c)).unwrap_or(s.len());
    s.split_at_checked(end).unwrap_or((s, ""))
}

/// The nanoseconds in `whole.fraction` units of `len` nanoseconds each, if a whole number.
fn amount<'a>(whole: &str, fraction: &str, len: u128) -> Result<u128, Why<'a>> {
    let whole = number(whole)
        .and_then(|whole| whole.checked_mul(len))
        .ok_or(Why::Overflow)?;
    // Trailing zeros do not change the value, so drop them. The last digit left is not 0, so the
    // fraction f lacks a factor 2 or a factor 5, and f * len is a multiple of 10^digits only if
    // len holds 2^digits or 5^digits. The longest unit, 86_400e9 ns = 2^16 * 3^3 * 5^11, holds
    // neither past 2^16, so more than 24 digits never come to whole nanoseconds; up to 24,
    // f * len < 10^24 * 86_400e9 < 10^38 fits in a u128.
    let fraction = fraction.trim_end_matches('0');
    if fraction.len() > 24 {
        return Err(Why::SubNanosecond);
    }
    let scale = u32::try_from(fraction.len())
        .ok()
        .and_then(|digits| 10u128.checked_pow(digits));
    let part = number(fraction).and_then(|fraction| fraction.checked_mul(len));
    match scale.zip(part) {
        Some((scale, part)) if part.is_multiple_of(scale) => {
            whole.checked_add(part / scale).ok_or(Why::Overflow)
        }
        _ => Err(Why::SubNanosecond),
    }
}

/// The value of a run of ASCII digits, or `None` past `u128::MAX`.
fn number(digits: &str) -> Option<u128> {
    digits.bytes().try_fold(0u128, |n, b| {
        n.checked_mul(10)?
            .checked_add(u128::from(b.wrapping_sub(b'0')))
    })
}

/// Why the text at the start of a part, `rest`, is not a number.
fn not_a_number(rest: &str) -> Why<'_> {
    match rest.chars().next() {
        Some('+' | '-') => Why::Signed,
        Some('.') => Why::BarePoint,
        Some(c) if c.is_numeric() => Why::NotAscii(c),
        Some(c) => Why::NotANumber(c),
        None => Why::NoUnit,
    }
}

/// Why `token`, followed by `rest`, is not a unit.
fn not_a_unit<'a>(token: &'a str, rest: &'a str) -> Why<'a> {
    if !token.is_empty() {
        return Why::UnknownUnit(token);
    }
    match rest.chars().next() {
        None => Why::NoUnit,
        Some(' ') => Why::SpacedUnit,
        Some(c) if c.is_numeric() => Why::NotAscii(c),
        Some(c) => Why::UnknownUnit(rest.get(..c.len_utf8()).unwrap_or(rest)),
    }
}

/// Why a string is not a duration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Why<'a> {
    /// The string is empty.
    Empty,
    /// Whitespace before or after the whole string.
    Padded,
    /// A `+` or `-` where a number should be.
    Signed,
    /// A digit other than ASCII `0` to `9`.
    NotAscii(char),
    /// Something other than a digit where a number should be.
    NotANumber(char),
    /// A decimal point without a digit on one side.
    BarePoint,
    /// A number at the end of the string, with no unit.
    NoUnit,
    /// A space between a number and its unit.
    SpacedUnit,
    /// A unit not in the grammar.
    UnknownUnit(&'a str),
    /// A unit not smaller than the one before it.
    OutOfOrder,
    /// A part that is not a whole number of nanoseconds.
    SubNanosecond,
    /// A total past `Duration::MAX`.
    Overflow,
}

impl fmt::Display for Why<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Why::Empty => f.write_str("it is empty"),
            Why::Padded => f.write_str("it starts or ends with whitespace"),
            Why::Signed => f.write_str("a duration takes no sign"),
            Why::NotAscii(c) => write!(f, "{c:?} is not an ASCII digit"),
            Why::NotANumber(c) => write!(f, "found {c:?} where a number should be"),
            Why::BarePoint => f.write_str("a decimal point needs a digit on each side"),
            Why::NoUnit => f.write_str("a number needs a unit"),
            Why::SpacedUnit => f.write_str("a number and its unit are written together"),
            Why::UnknownUnit(unit) => write!(
                f,
                "unknown unit {unit:?} (the units are ns, us, µs, ms, s, m, h and d, in lower case)"
            ),
            Why::OutOfOrder => {
                f.write_str("units go from largest to smallest, each at most once, as in \"1m30s\"")
            }
            Why::SubNanosecond => f.write_str("it is not a whole number of nanoseconds"),
            Why::Overflow => f.write_str(
                "it is longer than the longest duration, 18446744073709551615.999999999s",
            ),
        }
    }
}

/// The message for a string that is not a duration: what it is, why, and what was expected.
#[derive(Debug)]
struct Invalid<'a> {
    text: &'a str,
    why: Why<'a>,
}

impl fmt::Display for Invalid<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid duration {:?}: {}; expected {EXPECTED}",
            self.text, self.why
        )
    }
}

#[cfg(test)]
mod tests;
