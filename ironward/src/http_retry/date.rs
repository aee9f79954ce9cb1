//! IMF-fixdate parsing and the Gregorian arithmetic behind it.
//!
//! Dates are counted in days from 1970-01-01 on the proleptic Gregorian calendar (the calendar
//! RFC 9110 §5.6.7 prescribes), with whole years first, then whole months, then the day: no
//! tables beyond the cumulative month lengths, no floating point, no era tricks.

/// The earliest wall-clock time accepted: 1601-01-01T00:00:00Z in Unix seconds.
pub(super) const EARLIEST_UNIX: i64 = -11_644_473_600;

/// The latest wall-clock time accepted: 9999-12-31T23:59:59Z in Unix seconds.
pub(super) const LATEST_UNIX: i64 = 253_402_300_799;

/// The first and last years an IMF-fixdate may name here.
const YEARS: core::ops::RangeInclusive<i64> = 1601..=9999;

/// Day names, Monday first: this module counts weekdays from Monday as 0.
const WEEKDAYS: [[u8; 3]; 7] = [
    *b"Mon", *b"Tue", *b"Wed", *b"Thu", *b"Fri", *b"Sat", *b"Sun",
];

/// Month names, January first.
const MONTHS: [[u8; 3]; 12] = [
    *b"Jan", *b"Feb", *b"Mar", *b"Apr", *b"May", *b"Jun", *b"Jul", *b"Aug", *b"Sep", *b"Oct",
    *b"Nov", *b"Dec",
];

/// Days in a common year before the first of each month.
const DAYS_BEFORE_MONTH: [i64; 12] = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334];

/// Days from 0001-01-01 to 1970-01-01: 1969 years of 365 days plus their 477 leap days.
const DAYS_BEFORE_EPOCH: i64 = 1969 * 365 + 477;

/// The weekday of 1970-01-01, a Thursday, with Monday as 0.
const EPOCH_WEEKDAY: i64 = 3;

const SECONDS_PER_DAY: i64 = 86_400;

/// Parses a strict IMF-fixdate into Unix seconds.
///
/// The one HTTP-date form a sender may generate (RFC 9110 §5.6.7), exactly 29 bytes:
/// `Sun, 06 Nov 1994 08:49:37 GMT`. Names are case-sensitive, every separator is a single
/// space or the listed punctuation, and nothing is trimmed. The date must exist on the
/// Gregorian calendar (month lengths, leap years), the weekday must be that date's, the year
/// must lie in 1601..=9999, hours in 00–23, minutes and seconds in 00–59; a leap second (`:60`)
/// is rejected. The obsolete RFC 850 and asctime forms that RFC 9110 asks recipients to accept
/// are rejected on purpose, as are comma-combined values: a retry decision that cannot read a
/// date is safer stopping than guessing.
///
/// Returns seconds since 1970-01-01T00:00:00Z, negative before 1970, or `None` when `value`
/// is not such a date.
///
/// # Examples
///
/// ```
/// use ironward::http_retry::parse_http_date;
///
/// // The example of RFC 9110 §5.6.7.
/// assert_eq!(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"), Some(784_111_777));
/// assert_eq!(parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
/// assert_eq!(parse_http_date("Mon, 01 Jan 1601 00:00:00 GMT"), Some(-11_644_473_600));
///
/// // A wrong weekday, a leap second, and the obsolete RFC 850 form.
/// assert_eq!(parse_http_date("Mon, 06 Nov 1994 08:49:37 GMT"), None);
/// assert_eq!(parse_http_date("Sun, 06 Nov 1994 08:49:60 GMT"), None);
/// assert_eq!(parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT"), None);
/// ```
pub fn parse_http_date(value: &str) -> Option<i64> {
    let bytes: &[u8; 29] = value.as_bytes().try_into().ok()?;
    // The fixed layout, field by field: `Www, DD Mon YYYY HH:MM:SS GMT`.
    #[rustfmt::skip]
    let [
        w0, w1, w2, b',', b' ',
        d0, d1, b' ',
        m0, m1, m2, b' ',
        y0, y1, y2, y3, b' ',
        h0, h1, b':',
        n0, n1, b':',
        s0, s1,
        b' ', b'G', b'M', b'T',
    ] = *bytes
    else {
        return None;
    };
    let weekday = WEEKDAYS.iter().position(|name| *name == [w0, w1, w2])?;
    let month = MONTHS.iter().position(|name| *name == [m0, m1, m2])? + 1;
    let day = number(&[d0, d1])?;
    let year = number(&[y0, y1, y2, y3])?;
    let (hour, minute, second) = (number(&[h0, h1])?, number(&[n0, n1])?, number(&[s0, s1])?);

    if !YEARS.contains(&year) || hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    if day < 1 || day > days_in_month(year, month) {
        return None;
    }
    let days = days_from_civil(year, month, day);
    if weekday_of(days) != weekday {
        return None;
    }
    Some(days * SECONDS_PER_DAY + hour * 3600 + minute * 60 + second)
}

/// Whether `unix` seconds lie within the years 1601..=9999.
pub(super) fn in_range(unix: i64) -> bool {
    (EARLIEST_UNIX..=LATEST_UNIX).contains(&unix)
}

/// The value of a run of ASCII decimal digits, `None` if any byte is not one.
fn number(digits: &[u8]) -> Option<i64> {
    digits.iter().try_fold(0, |acc, &b| {
        b.is_ascii_digit().then(|| acc * 10 + i64::from(b - b'0'))
    })
}

/// Whether `year` is a Gregorian leap year: divisible by 4, except centuries not divisible
/// by 400 (so 2000 and 2400 are, 1700, 1900 and 2100 are not).
fn is_leap(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

/// Days in `month` (1–12) of `year`.
fn days_in_month(year: i64, month: usize) -> i64 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 to the given date (negative before it), for years from 1 on.
///
/// Whole years first: 365 days each plus one for each leap year among them; then the months
/// before `month` in a common year, plus the leap day once February has passed; then the day.
fn days_from_civil(year: i64, month: usize, day: i64) -> i64 {
    let past_years = year - 1;
    let leap_days = past_years / 4 - past_years / 100 + past_years / 400;
    let before_year = past_years * 365 + leap_days;
    let leap_day = i64::from(month > 2 && is_leap(year));
    before_year + DAYS_BEFORE_MONTH[month - 1] + leap_day + (day - 1) - DAYS_BEFORE_EPOCH
}

/// The weekday of a day counted from 1970-01-01, Monday as 0.
fn weekday_of(days: i64) -> usize {
    // `rem_euclid(7)` lies in 0..7, so the cast is exact.
    (days + EPOCH_WEEKDAY).rem_euclid(7) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_epoch_is_day_zero_and_a_thursday() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(weekday_of(0), 3);
        assert_eq!(days_from_civil(1969, 12, 31), -1);
        assert_eq!(weekday_of(-1), 2);
    }

    #[test]
    fn known_days_match_the_calendar() {
        // 2000-03-01 follows the leap day of a year divisible by 400.
        assert_eq!(days_from_civil(2000, 2, 29), 11_016);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        // 1601-01-01 is the Windows FILETIME epoch, a Monday; 9999-12-31 a Friday.
        assert_eq!(days_from_civil(1601, 1, 1), -134_774);
        assert_eq!(weekday_of(-134_774), 0);
        assert_eq!(days_from_civil(9999, 12, 31), 2_932_896);
        assert_eq!(weekday_of(2_932_896), 4);
        assert_eq!(days_from_civil(1, 1, 1), -DAYS_BEFORE_EPOCH);
    }

    #[test]
    fn the_range_constants_are_the_first_and_last_seconds_of_the_years() {
        assert_eq!(days_from_civil(1601, 1, 1) * SECONDS_PER_DAY, EARLIEST_UNIX);
        assert_eq!(
            days_from_civil(9999, 12, 31) * SECONDS_PER_DAY + 86_399,
            LATEST_UNIX
        );
        assert!(in_range(EARLIEST_UNIX) && in_range(LATEST_UNIX));
        assert!(!in_range(EARLIEST_UNIX - 1) && !in_range(LATEST_UNIX + 1));
    }

    #[test]
    fn leap_years_follow_the_gregorian_rule() {
        for year in [1604, 1996, 2000, 2024, 2400, 9996] {
            assert!(is_leap(year), "{year}");
        }
        for year in [1601, 1700, 1800, 1900, 2023, 2100, 9999] {
            assert!(!is_leap(year), "{year}");
        }
        assert_eq!(days_in_month(1900, 2), 28);
        assert_eq!(days_in_month(2000, 2), 29);
        assert_eq!(days_in_month(2023, 4), 30);
        assert_eq!(days_in_month(2023, 12), 31);
    }

    #[test]
    fn consecutive_dates_are_consecutive_days_across_the_whole_range() {
        let mut expected = days_from_civil(1601, 1, 1);
        for year in 1601..=9999 {
            for month in 1..=12 {
                for day in 1..=days_in_month(year, month) {
                    assert_eq!(days_from_civil(year, month, day), expected);
                    expected += 1;
                }
            }
        }
        assert_eq!(expected, days_from_civil(9999, 12, 31) + 1);
    }

    #[test]
    fn numbers_are_plain_ascii_digits() {
        assert_eq!(number(b"0042"), Some(42));
        assert_eq!(number(b"9999"), Some(9999));
        assert_eq!(number(b"4 2"), None);
        assert_eq!(number(b"+4"), None);
        assert_eq!(number(b""), Some(0));
    }
}
