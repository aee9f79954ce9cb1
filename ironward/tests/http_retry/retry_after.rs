//! The edge values of `Retry-After` (RFC 9110 §10.2.3): delta-seconds, IMF-fixdates, the
//! whitespace around them, the length bound and the clock bound of `ironward::http_retry`'s docs.

use std::time::Duration;

use ironward::http_retry::{Decision, StopReason, decide_response, retry_after_delay};

use crate::http_retry::{NOW, get, ms, secs};

const EARLIEST: i64 = -11_644_473_600;
const LATEST: i64 = 253_402_300_799;

/// The largest delta-seconds accepted: `i64::MAX / 1000`, as in the MoonBit package.
const LARGEST: u64 = 9_223_372_036_854_775;

fn check(table: &[(&str, Option<Duration>)], now: i64) {
    for (value, expected) in table {
        assert_eq!(
            retry_after_delay(value, now),
            *expected,
            "{value:?} at {now}"
        );
    }
}

#[test]
fn delta_seconds_are_read_with_leading_zeros() {
    check(
        &[
            ("0", Some(secs(0))),
            ("5", Some(secs(5))),
            ("120", Some(secs(120))),
            ("0005", Some(secs(5))),
            ("00000000000000000000000000000000", Some(secs(0))),
            (
                "0000000000000000000000000000000000000000000000000042",
                Some(secs(42)),
            ),
        ],
        NOW,
    );
}

#[test]
fn only_sp_and_htab_around_the_value_are_trimmed() {
    // RFC 9110 §5.6.3: optional whitespace is SP / HTAB; nothing else is trimmed.
    check(
        &[
            (" 5", Some(secs(5))),
            ("5 ", Some(secs(5))),
            ("\t5", Some(secs(5))),
            ("5\t", Some(secs(5))),
            (" \t \t5\t \t ", Some(secs(5))),
            ("\r5", None),
            ("5\r", None),
            ("\n5", None),
            ("5\r\n", None),
            ("\u{b}5", None),
            ("\u{c}5", None),
            ("\u{a0}5", None),
            ("5\u{a0}", None),
            ("\u{2003}5", None),
            ("\u{3000}5", None),
            ("\u{feff}5", None),
            ("\u{0}5", None),
            ("", None),
            (" ", None),
            ("\t", None),
            (" \t \t ", None),
        ],
        NOW,
    );
}

#[test]
fn signs_points_units_and_inner_space_are_rejected() {
    check(
        &[
            ("+5", None),
            ("-5", None),
            ("-0", None),
            ("5.", None),
            ("5.0", None),
            (".5", None),
            ("5e3", None),
            ("5s", None),
            ("5 s", None),
            ("5ms", None),
            ("0x10", None),
            ("5 5", None),
            ("5\t5", None),
            ("5,5", None),
            ("5, 6", None),
            ("five", None),
        ],
        NOW,
    );
}

#[test]
fn digits_outside_ascii_are_rejected() {
    // Arabic-Indic five, Devanagari five, fullwidth five, mathematical bold five.
    check(
        &[
            ("\u{665}", None),
            ("\u{96b}", None),
            ("\u{ff15}", None),
            ("\u{1d7d3}", None),
        ],
        NOW,
    );
}

#[test]
fn the_largest_delta_is_the_last_whose_milliseconds_fit_an_i64() {
    assert_eq!(LARGEST, (i64::MAX / 1000) as u64);
    check(
        &[
            ("9223372036854775", Some(secs(LARGEST))),
            ("00009223372036854775", Some(secs(LARGEST))),
            ("9223372036854776", None),
            ("9223372036854775807", None),
            ("18446744073709551615", None),
            ("18446744073709551616", None),
            ("340282366920938463463374607431768211456", None),
        ],
        NOW,
    );
}

#[test]
fn values_up_to_1024_bytes_are_read_and_longer_ones_are_not() {
    // The rule order: the bound is in bytes, counted before trimming (the MoonBit package counts UTF-16 units;
    // only ASCII can be valid, where the two agree).
    let digits = |len: usize| format!("{}5", "0".repeat(len - 1));
    let spaced = |len: usize| format!("{}5", " ".repeat(len - 1));
    assert_eq!(retry_after_delay(&digits(1024), NOW), Some(secs(5)));
    assert_eq!(retry_after_delay(&digits(1025), NOW), None);
    assert_eq!(retry_after_delay(&spaced(1024), NOW), Some(secs(5)));
    assert_eq!(retry_after_delay(&spaced(1025), NOW), None);
    let date = "Tue, 14 Nov 2023 22:13:50 GMT";
    let padded = |len: usize| format!("{date}{}", "\t".repeat(len - date.len()));
    assert_eq!(retry_after_delay(&padded(1024), NOW), Some(secs(30)));
    assert_eq!(retry_after_delay(&padded(1025), NOW), None);
    // 512 two-byte characters: 512 UTF-16 units but 1024 bytes; invalid either way.
    assert_eq!(retry_after_delay(&"é".repeat(512), NOW), None);
}

#[test]
fn a_date_not_after_now_asks_for_no_wait() {
    // RFC 9110 §5.6.7's example date, 784_111_777 in Unix seconds.
    let rfc = "Sun, 06 Nov 1994 08:49:37 GMT";
    assert_eq!(retry_after_delay(rfc, 784_111_777 + 86_400), Some(secs(0)));
    assert_eq!(retry_after_delay(rfc, 784_111_777), Some(secs(0)));
    assert_eq!(retry_after_delay(rfc, 784_111_776), Some(secs(1)));
    assert_eq!(retry_after_delay(rfc, NOW), Some(secs(0)));
    assert_eq!(
        retry_after_delay("Tue, 14 Nov 2023 22:13:50 GMT", NOW),
        Some(secs(30))
    );
    // The longest span: from the first second of 1601 to the last of 9999.
    let last = "Fri, 31 Dec 9999 23:59:59 GMT";
    assert_eq!(
        retry_after_delay(last, EARLIEST),
        Some(secs(265_046_774_399))
    );
    assert_eq!(retry_after_delay(last, LATEST), Some(secs(0)));
}

#[test]
fn only_the_strict_imf_fixdate_is_read() {
    // RFC 9110 §5.6.7 obsolete forms, deliberately unsupported (the MoonBit package's contract).
    check(
        &[
            ("Sunday, 06-Nov-94 08:49:37 GMT", None),
            ("Sun Nov  6 08:49:37 1994", None),
            ("sun, 06 nov 1994 08:49:37 gmt", None),
            ("Sun, 06 Nov 1994 08:49:37 UTC", None),
            ("Sun, 06 Nov 1994 08:49:37 +0000", None),
            ("Sun, 6 Nov 1994 08:49:37 GMT", None),
            (
                "Sun, 06 Nov 1994 08:49:37 GMT, Sun, 06 Nov 1994 08:49:37 GMT",
                None,
            ),
            ("Sun, 06 Nov 1994 08:49:37 GMT\r\n", None),
            (" \tSun, 06 Nov 1994 08:49:37 GMT\t ", Some(secs(0))),
        ],
        NOW,
    );
}

#[test]
fn now_must_lie_in_the_years_1601_to_9999() {
    for (now, expected) in [
        (EARLIEST, Some(secs(5))),
        (LATEST, Some(secs(5))),
        (0, Some(secs(5))),
        (EARLIEST - 1, None),
        (LATEST + 1, None),
        (i64::MIN, None),
        (i64::MAX, None),
    ] {
        assert_eq!(retry_after_delay("5", now), expected, "{now}");
    }
    assert_eq!(
        retry_after_delay("Thu, 01 Jan 1970 00:00:00 GMT", EARLIEST - 1),
        None
    );
}

#[test]
fn duplicate_fields_stop_the_retry_even_when_identical() {
    // The MoonBit package `http_retry`: "duplicates or unsupported syntax stop the retry"; RFC 9110 §5.3 would let a
    // recipient combine them into a list, which Retry-After's grammar does not allow.
    let stop = Decision::Stop(StopReason::InvalidRetryAfter);
    let date = "Tue, 14 Nov 2023 22:13:50 GMT";
    for values in [
        &["5", "5"][..],
        &["5", "6"],
        &[date, date],
        &["5", date],
        &["5", "5", "5"],
    ] {
        assert_eq!(
            decide_response(&Default::default(), &get(), values, NOW),
            stop,
            "{values:?}"
        );
    }
    let long = "0".repeat(1023) + "5";
    let too_long = "0".repeat(1024) + "5";
    let settings = Default::default();
    assert_eq!(
        decide_response(&settings, &get(), &[&long], NOW),
        Decision::Wait(secs(5))
    );
    assert_eq!(decide_response(&settings, &get(), &[&too_long], NOW), stop);
    assert_eq!(
        decide_response(&settings, &get(), &[], NOW),
        Decision::Wait(ms(200))
    );
}
