//! IMF-fixdates (RFC 9110 §5.6.7) against vectors from an independent oracle.
//!
//! `tests/data/http_dates.tsv` was written by `tests/data/http_dates.py`, which computes every
//! date and its Unix seconds with Python's `datetime` and `calendar.timegm`, not with this
//! crate, and checks each altered copy invalid by its own strict reading.

use std::collections::BTreeMap;

use ironward::http_retry::{parse_http_date, retry_after_delay};

use crate::http_retry::secs;

const VECTORS: &str = include_str!("../data/http_dates.tsv");

/// The first and last Unix seconds of the years 1601..=9999.
const EARLIEST: i64 = -11_644_473_600;
const LATEST: i64 = 253_402_300_799;

/// The oracle's vectors.
struct Vectors {
    /// Valid IMF-fixdates with their Unix seconds.
    valid: Vec<(&'static str, i64)>,
    /// Altered copies, each with the name of its alteration.
    invalid: Vec<(&'static str, &'static str)>,
}

fn vectors() -> Vectors {
    let mut vectors = Vectors {
        valid: Vec::new(),
        invalid: Vec::new(),
    };
    for line in VECTORS.lines().filter(|line| !line.starts_with('#')) {
        let fields: Vec<&str> = line.split('\t').collect();
        match fields[..] {
            ["valid", date, unix] => vectors.valid.push((date, unix.parse().expect(line))),
            ["invalid", alteration, text] => vectors.invalid.push((alteration, text)),
            _ => panic!("malformed vector line {line:?}"),
        }
    }
    vectors
}

#[test]
fn every_oracle_date_parses_to_the_oracles_unix_seconds() {
    let Vectors { valid, .. } = vectors();
    assert!(valid.len() >= 300, "only {} vectors", valid.len());
    for (date, unix) in valid {
        assert_eq!(parse_http_date(date), Some(unix), "{date}");
    }
}

#[test]
fn the_vectors_cover_the_range_edges_leap_days_and_every_millennium() {
    let Vectors { valid, .. } = vectors();
    let dates: Vec<&str> = valid.iter().map(|(date, _)| *date).collect();
    for day in [
        "Mon, 01 Jan 1601 00:00:00 GMT",
        "Fri, 31 Dec 9999 23:59:59 GMT",
        "Thu, 01 Jan 1970 00:00:00 GMT",
        "Wed, 31 Dec 1969 23:59:59 GMT",
        "Sun, 06 Nov 1994 08:49:37 GMT",
    ] {
        assert!(dates.contains(&day), "{day} missing");
    }
    // Leap days of 1604, 2000 and 2400; the last February day of 1700, 1900 and 2100.
    for prefix in [
        "29 Feb 1604",
        "29 Feb 2000",
        "29 Feb 2400",
        "28 Feb 1700",
        "28 Feb 1900",
    ] {
        assert!(
            dates.iter().any(|d| d[5..16] == *prefix),
            "{prefix} missing"
        );
    }
    assert!(dates.iter().any(|d| d[5..16] == *"28 Feb 2100"));
    assert!(
        valid.iter().filter(|(_, unix)| *unix < 0).count() >= 100,
        "few pre-1970 dates"
    );
    let mut per_millennium = BTreeMap::new();
    for date in &dates {
        *per_millennium.entry(&date[12..13]).or_insert(0) += 1;
    }
    assert_eq!(per_millennium.len(), 9, "{per_millennium:?}");
    assert!(
        valid
            .iter()
            .all(|(_, unix)| (EARLIEST..=LATEST).contains(unix))
    );
}

#[test]
fn every_altered_copy_from_the_oracle_is_rejected() {
    let Vectors { valid, invalid } = vectors();
    let mut kinds = BTreeMap::new();
    for (alteration, text) in &invalid {
        assert_eq!(parse_http_date(text), None, "{alteration}: {text:?}");
        *kinds.entry(*alteration).or_insert(0) += 1;
    }
    // Each valid date has one copy of each alteration.
    let expected = [
        "weekday",
        "day-00",
        "day-32",
        "month-length",
        "hour-24",
        "minute-60",
        "second-60",
        "lowercase-weekday",
        "lowercase-month",
        "utc",
        "extra-space",
        "rfc850",
        "asctime",
    ];
    assert_eq!(kinds.len(), expected.len(), "{kinds:?}");
    for kind in expected {
        assert_eq!(kinds.get(kind), Some(&valid.len()), "{kind}");
    }
}

#[test]
fn copies_altered_without_a_calendar_are_rejected_too() {
    let Vectors { valid, .. } = vectors();
    for (date, _) in valid {
        let altered = [
            format!(" {date}"),
            format!("{date} "),
            format!("{date}\r\n"),
            format!("{date}, {date}"),
            format!("{date},"),
            date.to_uppercase(),
            date.to_lowercase(),
            date.replace("GMT", "gmt"),
            date.replace("GMT", "+0000"),
            date.replace(", ", ","),
            date.replacen(' ', "\t", 1),
            date[..28].to_string(),
            date.replace(':', "."),
        ];
        for text in altered {
            assert_eq!(parse_http_date(&text), None, "{text:?}");
        }
    }
}

#[test]
fn retry_after_measures_every_oracle_date_from_now() {
    // RFC 9110 §10.2.3: an HTTP-date is the time after which to retry; a date not after now
    // asks for no wait.
    let Vectors { valid, .. } = vectors();
    for (date, unix) in valid {
        assert_eq!(retry_after_delay(date, unix), Some(secs(0)), "{date}");
        assert_eq!(retry_after_delay(date, LATEST), Some(secs(0)), "{date}");
        let from_earliest = (unix - EARLIEST) as u64;
        assert_eq!(
            retry_after_delay(date, EARLIEST),
            Some(secs(from_earliest)),
            "{date}"
        );
        if unix > EARLIEST {
            assert_eq!(retry_after_delay(date, unix - 1), Some(secs(1)), "{date}");
        }
        // Surrounding SP and HTAB are optional whitespace, trimmed by retry_after_delay only.
        let padded = format!(" \t{date}\t ");
        assert_eq!(
            retry_after_delay(&padded, EARLIEST),
            Some(secs(from_earliest))
        );
    }
}

#[test]
fn retry_after_rejects_every_altered_copy_from_the_oracle() {
    let Vectors { invalid, .. } = vectors();
    for (alteration, text) in invalid {
        assert_eq!(
            retry_after_delay(text, EARLIEST),
            None,
            "{alteration}: {text:?}"
        );
    }
}
