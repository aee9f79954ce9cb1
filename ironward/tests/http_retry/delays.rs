//! Rules 6 to 10 of the rule order of `ironward::http_retry` as tables: the baseline budget,
//! `Retry-After`, the cap, the final budget and jitter, each on both sides of its bounds, and
//! saturation at the largest retry indexes and durations.

use std::time::Duration;

use ironward::http_retry::{
    Attempt, SETTINGS, Settings, StopReason::*, backoff_ceiling, jitter_delay,
};

use crate::http_retry::table::{HUGE, Row, check, stop, wait};
use crate::http_retry::{get, ms, ns, secs};

#[test]
fn the_baseline_budget_check_is_strict() {
    // 200 ms client delay + 1 s reserve must be less than 120 s − elapsed.
    let elapsed = |elapsed| Row::of(Attempt { elapsed, ..get() });
    let unjittered = |elapsed| {
        Row::of(Attempt {
            elapsed,
            sample_ppm: 0,
            ..get()
        })
    };
    check(&[
        ("nothing elapsed", elapsed(Duration::ZERO), wait(ms(200))),
        (
            "1 ns more than needed left",
            elapsed(ms(118_800) - ns(1)),
            wait(ms(200)),
        ),
        (
            "exactly the delay and the reserve left",
            elapsed(ms(118_800)),
            stop(BudgetExhausted),
        ),
        (
            "the whole budget elapsed",
            elapsed(secs(120)),
            stop(BudgetExhausted),
        ),
        (
            "1 ns past the budget",
            elapsed(secs(120) + ns(1)),
            stop(BudgetExhausted),
        ),
        (
            "Duration::MAX elapsed",
            elapsed(Duration::MAX),
            stop(BudgetExhausted),
        ),
        (
            "zero delay, 1 ns more than the reserve left",
            unjittered(secs(119) - ns(1)),
            wait(secs(0)),
        ),
        (
            "zero delay, exactly the reserve left",
            unjittered(secs(119)),
            stop(BudgetExhausted),
        ),
    ]);
}

#[test]
fn retry_after_must_be_a_single_valid_value() {
    // The MoonBit package `http_retry`: no field means no minimum; duplicates or unsupported syntax stop the retry.
    let header = |values| Row::of(get()).header(values);
    let invalid = stop(InvalidRetryAfter);
    check(&[
        ("no field", header(&[]), wait(ms(200))),
        ("five seconds", header(&["5"]), wait(secs(5))),
        ("leading zeros", header(&["0005"]), wait(secs(5))),
        ("SP and HTAB around", header(&[" \t5\t "]), wait(secs(5))),
        (
            "zero seconds: the client delay stands",
            header(&["0"]),
            wait(ms(200)),
        ),
        (
            "a date long past",
            header(&["Sun, 06 Nov 1994 08:49:37 GMT"]),
            wait(ms(200)),
        ),
        (
            "a date 12 s ahead",
            header(&["Tue, 14 Nov 2023 22:13:32 GMT"]),
            wait(secs(12)),
        ),
        ("two identical fields", header(&["5", "5"]), invalid),
        ("two different fields", header(&["5", "6"]), invalid),
        (
            "an empty field and a valid one",
            header(&["", "5"]),
            invalid,
        ),
        ("an empty field", header(&[""]), invalid),
        ("a blank field", header(&[" \t "]), invalid),
        ("a comma-combined list", header(&["5, 5"]), invalid),
        ("a unit", header(&["5s"]), invalid),
        ("a sign", header(&["-5"]), invalid),
        ("a plus sign", header(&["+5"]), invalid),
        ("a point", header(&["5.0"]), invalid),
        ("a line break", header(&["\r\n5"]), invalid),
        ("words", header(&["soon"]), invalid),
        (
            "RFC 850",
            header(&["Sunday, 06-Nov-94 08:49:37 GMT"]),
            invalid,
        ),
        ("asctime", header(&["Sun Nov  6 08:49:37 1994"]), invalid),
        (
            "the largest delta: far past the cap",
            header(&["9223372036854775"]),
            stop(ServerDelayExceedsCap),
        ),
        (
            "one past the largest delta",
            header(&["9223372036854776"]),
            invalid,
        ),
    ]);
}

#[test]
fn a_server_delay_past_the_cap_stops_and_is_never_clipped() {
    // The MoonBit package `http_retry`: a server minimum above the cap stops the retry; never clipped or jittered.
    let parsed = |delay| Row::of(get()).parsed(delay);
    check(&[
        ("equal to the cap", parsed(secs(30)), wait(secs(30))),
        (
            "1 ns past the cap",
            parsed(secs(30) + ns(1)),
            stop(ServerDelayExceedsCap),
        ),
        (
            "Duration::MAX",
            parsed(Duration::MAX),
            stop(ServerDelayExceedsCap),
        ),
        (
            "header equal to the cap",
            Row::of(get()).header(&["30"]),
            wait(secs(30)),
        ),
        (
            "header past the cap",
            Row::of(get()).header(&["31"]),
            stop(ServerDelayExceedsCap),
        ),
        (
            "a date exactly the cap ahead",
            Row::of(get()).header(&["Tue, 14 Nov 2023 22:13:50 GMT"]),
            wait(secs(30)),
        ),
        (
            "a date 1 s more than the cap ahead",
            Row::of(get()).header(&["Tue, 14 Nov 2023 22:13:51 GMT"]),
            stop(ServerDelayExceedsCap),
        ),
        ("zero", parsed(Duration::ZERO), wait(ms(200))),
        (
            "shorter than the client delay",
            parsed(ms(100)),
            wait(ms(200)),
        ),
        (
            "1 ns longer than the client delay",
            parsed(ms(200) + ns(1)),
            wait(ms(200) + ns(1)),
        ),
        (
            "zero jitter does not shorten it",
            Row::of(Attempt {
                sample_ppm: 0,
                ..get()
            })
            .parsed(secs(5)),
            wait(secs(5)),
        ),
        (
            "a tiny sample does not shorten it",
            Row::of(Attempt {
                sample_ppm: 1,
                ..get()
            })
            .parsed(secs(5)),
            wait(secs(5)),
        ),
    ]);
}

#[test]
fn the_final_wait_must_fit_the_budget_strictly() {
    // A 20 s server delay and the 1 s reserve need more than 21 s left of 120 s.
    let at = |elapsed| Row::of(Attempt { elapsed, ..get() });
    check(&[
        (
            "1 ns more than needed left",
            at(secs(99) - ns(1)).parsed(secs(20)),
            wait(secs(20)),
        ),
        (
            "exactly 21 s left",
            at(secs(99)).parsed(secs(20)),
            stop(BudgetExhausted),
        ),
        (
            "header, 1 ns more left",
            at(secs(99) - ns(1)).header(&["20"]),
            wait(secs(20)),
        ),
        (
            "header, exactly 21 s left",
            at(secs(99)).header(&["20"]),
            stop(BudgetExhausted),
        ),
        (
            "the larger client delay is what must fit",
            Row::of(Attempt {
                retry_index: 2,
                ..get()
            })
            .parsed(ms(100)),
            wait(ms(800)),
        ),
    ]);
}

#[test]
fn sample_ppm_scales_only_the_client_delay_floored_to_the_nanosecond() {
    // The rule order: floor(min(base·2^i, max_delay) · sample_ppm / 1_000_000) in whole nanoseconds.
    let sample = |retry_index, sample_ppm| {
        Row::of(Attempt {
            retry_index,
            sample_ppm,
            ..get()
        })
    };
    check(&[
        ("0", sample(0, 0), wait(secs(0))),
        ("1", sample(0, 1), wait(ns(200))),
        ("999_999", sample(0, 999_999), wait(ns(199_999_800))),
        ("1_000_000", sample(0, 1_000_000), wait(ms(200))),
        ("1_000_001", sample(0, 1_000_001), stop(InvalidInput)),
        ("1 on the third retry", sample(2, 1), wait(ns(800))),
        (
            "999_999 on the third retry",
            sample(2, 999_999),
            wait(ns(799_999_200)),
        ),
        ("half", sample(2, 500_000), wait(ms(400))),
        (
            "999_999 of the cap",
            sample(999, 999_999).settings(Settings {
                max_retries: 1000,
                ..SETTINGS
            }),
            wait(ns(29_999_970_000)),
        ),
    ]);
    let ceiling = ms(200);
    assert_eq!(jitter_delay(ceiling, 0), Some(Duration::ZERO));
    assert_eq!(jitter_delay(ceiling, 1), Some(ns(200)));
    assert_eq!(jitter_delay(ceiling, 999_999), Some(ns(199_999_800)));
    assert_eq!(jitter_delay(ceiling, 1_000_000), Some(ceiling));
    assert_eq!(jitter_delay(ceiling, 1_000_001), None);
    assert_eq!(jitter_delay(ns(3), 333_334), Some(ns(1)));
}

/// `n` nanoseconds as a `Duration`, for counts past `u64`.
fn nanos(n: u128) -> Duration {
    Duration::new((n / 1_000_000_000) as u64, (n % 1_000_000_000) as u32)
}

#[test]
fn backoff_and_budgets_saturate_at_the_largest_values() {
    let max = Duration::MAX.as_nanos();
    assert_eq!(nanos(max), Duration::MAX);
    let huge = |retry_index, sample_ppm| {
        Row::of(Attempt {
            retry_index,
            sample_ppm,
            elapsed: Duration::ZERO,
            ..get()
        })
        .settings(HUGE)
    };
    check(&[
        (
            "2^93 ns fits under Duration::MAX",
            huge(93, 1_000_000),
            wait(nanos(1 << 93)),
        ),
        (
            "2^94 ns is capped at Duration::MAX, which cannot fit",
            huge(94, 1_000_000),
            stop(BudgetExhausted),
        ),
        (
            "half of Duration::MAX, floored",
            huge(999, 500_000),
            wait(nanos(max / 2)),
        ),
        (
            "all of Duration::MAX",
            huge(999, 1_000_000),
            stop(BudgetExhausted),
        ),
        (
            "999_999 of Duration::MAX",
            huge(999, 999_999),
            wait(nanos(max - max.div_ceil(1_000_000))),
        ),
        (
            "a server delay of Duration::MAX − 1 ns",
            huge(0, 1_000_000).parsed(Duration::MAX - ns(1)),
            wait(Duration::MAX - ns(1)),
        ),
        (
            "a server delay of Duration::MAX",
            huge(0, 1_000_000).parsed(Duration::MAX),
            stop(BudgetExhausted),
        ),
        (
            "a reserve of Duration::MAX − 1 ns",
            huge(0, 0).settings(Settings {
                request_reserve: Duration::MAX - ns(1),
                ..HUGE
            }),
            wait(secs(0)),
        ),
        (
            "a reserve of Duration::MAX − 1 ns and a 1 ns delay",
            huge(0, 1_000_000).settings(Settings {
                request_reserve: Duration::MAX - ns(1),
                ..HUGE
            }),
            stop(BudgetExhausted),
        ),
        (
            "every duration at Duration::MAX but the reserve",
            huge(0, 1_000_000).settings(Settings {
                base_delay: Duration::MAX,
                request_reserve: Duration::MAX - ns(1),
                ..HUGE
            }),
            stop(BudgetExhausted),
        ),
        (
            "Duration::MAX elapsed",
            Row::of(Attempt {
                elapsed: Duration::MAX,
                ..get()
            }),
            stop(BudgetExhausted),
        ),
        (
            "retry_index u32::MAX",
            huge(u32::MAX, 1_000_000),
            stop(AttemptsExhausted),
        ),
    ]);
    for index in [0, 1, 7, 8, 63, 64, 127, 128, 1000, u32::MAX] {
        let capped = backoff_ceiling(&SETTINGS, index).unwrap();
        assert_eq!(capped, ms(200 << index.min(8)).min(secs(30)), "{index}");
    }
    assert_eq!(backoff_ceiling(&HUGE, 93), Some(nanos(1 << 93)));
    assert_eq!(backoff_ceiling(&HUGE, 94), Some(Duration::MAX));
    assert_eq!(backoff_ceiling(&HUGE, u32::MAX), Some(Duration::MAX));
    let zero = Settings {
        base_delay: Duration::ZERO,
        ..HUGE
    };
    assert_eq!(backoff_ceiling(&zero, u32::MAX), Some(Duration::ZERO));
    let invalid = Settings {
        base_delay: secs(31),
        ..SETTINGS
    };
    assert_eq!(backoff_ceiling(&invalid, 0), None);
    assert_eq!(jitter_delay(Duration::MAX, 1_000_000), Some(Duration::MAX));
    assert_eq!(jitter_delay(Duration::MAX, 1_000_001), None);
}
