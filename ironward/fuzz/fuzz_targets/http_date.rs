//! Fuzzes `ironward::http_retry::{parse_http_date, retry_after_delay}` against their contracts.
//!
//! Input layout: the first 8 bytes are `now_unix` (an `i64`, little-endian), the rest is the
//! value, skipped unless it is valid UTF-8. Besides "no panic", every call is checked against
//! what the public documentation promises, with an independent IMF-fixdate formatter (Howard
//! Hinnant's `civil_from_days`) as the oracle for dates:
//!
//! - `parse_http_date` answers `Some` only for 29-byte values, always within the years
//!   1601..=9999, and only for the one string the oracle formats for that instant; conversely,
//!   the oracle's string for any instant in range parses back to that instant.
//! - `retry_after_delay` answers `None` for values over 1024 bytes or a clock outside the
//!   years 1601..=9999; otherwise, with the value trimmed of SP and HTAB, it is exactly the
//!   delta-seconds (ASCII digits, at most `i64::MAX / 1000`) or `max(0, date − now)` seconds
//!   for an IMF-fixdate, and `None` for anything else.
//!
//! Since a random `now_unix` almost never lies in range, `retry_after_delay` is also called
//! with `now_unix` folded into the range, so its date and delta paths are reached; and since
//! mutation rarely grows a valid value to 1024 bytes, values are also padded to 1024 and 1025
//! bytes (for one input in eight, as this is the costly part).
#![no_main]

use core::time::Duration;

use ironward::http_retry::{parse_http_date, retry_after_delay};
use libfuzzer_sys::fuzz_target;

/// 1601-01-01T00:00:00Z in Unix seconds.
const EARLIEST: i64 = -11_644_473_600;
/// 9999-12-31T23:59:59Z in Unix seconds.
const LATEST: i64 = 253_402_300_799;
/// The longest `Retry-After` value read, in bytes.
const MAX_LEN: usize = 1024;
/// The largest delta-seconds accepted: `i64::MAX / 1000`.
const MAX_SECONDS: u64 = 9_223_372_036_854_775;

const WEEKDAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

fuzz_target!(|data: &[u8]| {
    let Some((head, rest)) = data.split_first_chunk::<8>() else {
        return;
    };
    let now = i64::from_le_bytes(*head);
    let in_range_now = EARLIEST + now.rem_euclid(LATEST - EARLIEST + 1);

    // Completeness of the date parser: the oracle's form of an instant in range reads back.
    let formatted = imf_fixdate(in_range_now);
    assert_eq!(
        parse_http_date(&formatted),
        Some(in_range_now),
        "{formatted:?}"
    );
    check_retry_after(&formatted, in_range_now);
    check_retry_after(&formatted, now);
    // Scanning 1024 bytes under the fuzzer's instrumentation costs about as much as all the
    // rest, so the padded forms are checked for one input in eight (chosen by `now_unix`).
    let pad = now % 8 == 0;
    if pad {
        check_padded(&formatted, in_range_now);
    }

    let Ok(value) = core::str::from_utf8(rest) else {
        return;
    };
    check_date(value);
    check_retry_after(value, now);
    check_retry_after(value, in_range_now);
    if pad {
        check_padded(value, in_range_now);
    }
});

/// `parse_http_date`: `Some` only for exactly 29 bytes, in range, and only for the oracle's
/// own spelling of that instant (names, zero padding, separators, weekday).
fn check_date(value: &str) {
    if let Some(secs) = parse_http_date(value) {
        assert_eq!(value.len(), 29, "{value:?} -> {secs}");
        assert!((EARLIEST..=LATEST).contains(&secs), "{value:?} -> {secs}");
        assert_eq!(imf_fixdate(secs), value, "{value:?} -> {secs}");
    }
}

/// `retry_after_delay` against the whole of its contract.
fn check_retry_after(value: &str, now: i64) {
    let got = retry_after_delay(value, now);
    if value.len() > MAX_LEN || !(EARLIEST..=LATEST).contains(&now) {
        assert_eq!(got, None, "{value:?} at {now}");
        return;
    }
    let trimmed = value.trim_matches([' ', '\t']);
    let expected = if !trimmed.is_empty() && trimmed.bytes().all(|b| b.is_ascii_digit()) {
        delta_seconds(trimmed).map(Duration::from_secs)
    } else {
        parse_http_date(trimmed).map(|date| {
            // Both lie in range, so the difference cannot overflow.
            Duration::from_secs(u64::try_from(date - now).unwrap_or(0))
        })
    };
    assert_eq!(got, expected, "{value:?} at {now}");
}

/// The 1024-byte bound counts the SP and HTAB around the value: padded with SP to exactly
/// 1024 bytes a value reads as it did unpadded, and one byte more makes it `None`. Random
/// mutation rarely grows a valid value past 1024 bytes, so the boundary is built here (on the
/// stack, and checked against the unpadded answer, which `check_retry_after` has checked).
fn check_padded(value: &str, now: i64) {
    if value.len() > MAX_LEN {
        return;
    }
    let mut buffer = [b' '; MAX_LEN + 1];
    buffer[..value.len()].copy_from_slice(value.as_bytes());
    let padded = core::str::from_utf8(&buffer[..MAX_LEN]).expect("UTF-8 followed by spaces");
    assert_eq!(
        retry_after_delay(padded, now),
        retry_after_delay(value, now),
        "{value:?} padded to 1024 bytes at {now}"
    );
    let padded = core::str::from_utf8(&buffer).expect("UTF-8 followed by spaces");
    assert_eq!(
        retry_after_delay(padded, now),
        None,
        "{value:?} padded to 1025 bytes at {now}"
    );
}

/// The oracle for delta-seconds: the decimal value of `digits` (ASCII digits only), `None`
/// above `MAX_SECONDS`.
fn delta_seconds(digits: &str) -> Option<u64> {
    let significant = digits.trim_start_matches('0');
    if significant.is_empty() {
        return Some(0);
    }
    // More than 20 significant digits cannot fit a u64, let alone MAX_SECONDS.
    if significant.len() > 20 {
        return None;
    }
    let n: u128 = significant.parse().expect("at most 20 ASCII digits");
    u64::try_from(n).ok().filter(|&n| n <= MAX_SECONDS)
}

/// The IMF-fixdate of `secs` (1601..=9999), computed independently of the crate.
fn imf_fixdate(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let time = secs.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    // 1970-01-01 was a Thursday; index 3 with Monday as 0.
    let weekday = WEEKDAYS[usize::try_from((days + 3).rem_euclid(7)).unwrap()];
    format!(
        "{weekday}, {day:02} {} {year:04} {:02}:{:02}:{:02} GMT",
        MONTHS[usize::try_from(month - 1).unwrap()],
        time / 3600,
        time / 60 % 60,
        time % 60
    )
}

/// Year, month (1–12) and day of a day count from 1970-01-01, on the proleptic Gregorian
/// calendar (Howard Hinnant, "chrono-Compatible Low-Level Date Algorithms").
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}
