//! An HTTP-date formatter for the test servers, independent of the core's parser.

/// An IMF-fixdate (RFC 9110 §5.6.7) for a Unix time, by Howard Hinnant's `civil_from_days`.
pub(crate) fn http_date(unix: i64) -> String {
    const WEEKDAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let (days, secs) = (unix.div_euclid(86_400), unix.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{}, {day:02} {} {year} {:02}:{:02}:{:02} GMT",
        WEEKDAYS[days.rem_euclid(7) as usize],
        MONTHS[(month - 1) as usize],
        secs / 3600,
        secs % 3600 / 60,
        secs % 60,
    )
}

// The formatter must agree with the core's strict parser, or a test of an HTTP-date
// `Retry-After` proves nothing.
#[test]
fn http_dates_round_trip_through_the_core() {
    use ironward::http_retry::parse_http_date;
    assert_eq!(http_date(784_111_777), "Sun, 06 Nov 1994 08:49:37 GMT");
    for unix in [0, 951_782_400, 1_445_412_480, 1_709_164_799, 4_107_542_400] {
        assert_eq!(parse_http_date(&http_date(unix)), Some(unix), "{unix}");
    }
}
