//! Unit tests of `http_retry` that need its private items.

use super::rules::{fits, is_token};
use super::*;
use crate::backoff::full_jitter;
use crate::internal::float::duration;

/// The ceiling as a `Duration`.
fn ceiling(settings: &Settings, retry_index: u32) -> Duration {
    duration(super::rules::ceiling(settings, retry_index))
}

/// Rule 6's jitter as a `Duration`.
fn jitter(ceiling: Duration, sample_ppm: u32) -> Duration {
    duration(full_jitter(ceiling.as_nanos(), sample_ppm))
}

fn settings(base: Duration, cap: Duration) -> Settings {
    Settings {
        base_delay: base,
        max_delay: cap,
        ..SETTINGS
    }
}

#[test]
fn the_ceiling_doubles_until_the_cap() {
    let s = SETTINGS;
    let millis = |i| ceiling(&s, i).as_millis();
    assert_eq!(
        [millis(0), millis(1), millis(2), millis(7)],
        [200, 400, 800, 25_600]
    );
    assert_eq!(millis(8), 30_000);
    assert_eq!(millis(127), 30_000);
    assert_eq!(millis(128), 30_000);
    assert_eq!(millis(u32::MAX), 30_000);
}

#[test]
fn the_ceiling_saturates_at_the_largest_durations() {
    let s = settings(Duration::from_nanos(1), Duration::MAX);
    // 2^93 ns is below Duration::MAX (about 1.8 · 10^28 ns), 2^94 ns above.
    assert_eq!(ceiling(&s, 93).as_nanos(), 1 << 93);
    assert_eq!(ceiling(&s, 94), Duration::MAX);
    assert_eq!(ceiling(&s, u32::MAX), Duration::MAX);
    let s = settings(Duration::MAX, Duration::MAX);
    assert_eq!(ceiling(&s, 0), Duration::MAX);
    assert_eq!(ceiling(&s, 1), Duration::MAX);
    let s = settings(Duration::ZERO, Duration::MAX);
    assert_eq!(ceiling(&s, u32::MAX), Duration::ZERO);
}

#[test]
fn jitter_floors_to_whole_nanoseconds() {
    assert_eq!(
        jitter(Duration::from_nanos(3), 500_000),
        Duration::from_nanos(1)
    );
    assert_eq!(jitter(Duration::from_nanos(999_999), 1), Duration::ZERO);
    assert_eq!(
        jitter(Duration::from_nanos(1_000_000), 1),
        Duration::from_nanos(1)
    );
    assert_eq!(jitter(Duration::MAX, PPM), Duration::MAX);
    let max = Duration::MAX.as_nanos();
    assert_eq!(
        jitter(Duration::MAX, 999_999).as_nanos(),
        max - max.div_ceil(1_000_000)
    );
}

#[test]
fn tokens_are_the_rfc_9110_tchar_set() {
    assert!(is_token("GET"));
    assert!(is_token("M-SEARCH"));
    assert!(is_token("!#$%&'*+-.^_`|~09azAZ"));
    for bad in [
        "", "GET ", "G\tT", "G(T)", "\"GET\"", "GÉT", "G,T", "G/T", "G:T",
    ] {
        assert!(!is_token(bad), "{bad:?}");
    }
}

#[test]
fn the_budget_check_is_strict_and_saturating() {
    let s = SETTINGS;
    let second = Duration::from_secs(1);
    assert!(fits(Duration::ZERO, &s, second + Duration::from_nanos(1)));
    assert!(!fits(Duration::ZERO, &s, second));
    assert!(!fits(Duration::MAX, &s, Duration::MAX));
}
