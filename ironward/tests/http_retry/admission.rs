//! Rules 1 to 5 of the rule order of `ironward::http_retry` as tables: the MoonBit package's scenarios, then
//! settings, malformed input, status, replay safety and the retry count, each on both sides
//! of its bounds.

use std::time::Duration;

use ironward::http_retry::{
    Attempt, SETTINGS, Settings, StopReason::*, idempotent_method, retryable_status,
};

use crate::http_retry::table::{EARLIEST, LATEST, Row, check, stop, wait};
use crate::http_retry::{get, ms, ns, secs};

#[test]
fn the_moonbit_packages_three_scenarios_decide_as_its_readme_says() {
    check(&[
        (
            "rate-limited GET: zero jitter cannot shorten the server's minimum",
            Row::of(Attempt {
                status: 429,
                elapsed: ms(100),
                sample_ppm: 0,
                ..get()
            })
            .header(&["5"]),
            wait(secs(5)),
        ),
        (
            "deduplicated POST: the base delay",
            Row::of(Attempt {
                method: "POST",
                replay_safe: true,
                ..get()
            }),
            wait(ms(200)),
        ),
        (
            "deadline exhausted: 20 s left cannot hold Retry-After 20 plus the 1 s reserve",
            Row::of(Attempt {
                elapsed: secs(100),
                ..get()
            })
            .header(&["20"]),
            stop(BudgetExhausted),
        ),
    ]);
}

#[test]
fn settings_are_checked_first_at_each_bound() {
    // The rule order: max_retries ≤ 1000, base_delay ≤ max_delay, request_reserve < total_budget.
    let with = |settings: Settings| Row::of(get()).settings(settings);
    check(&[
        ("the defaults", with(Settings::default()), wait(ms(200))),
        (
            "1000 retries",
            Row::of(Attempt {
                retry_index: 999,
                ..get()
            })
            .settings(Settings {
                max_retries: 1000,
                ..SETTINGS
            }),
            wait(secs(30)),
        ),
        (
            "1001 retries",
            with(Settings {
                max_retries: 1001,
                ..SETTINGS
            }),
            stop(InvalidSettings),
        ),
        (
            "u32::MAX retries",
            with(Settings {
                max_retries: u32::MAX,
                ..SETTINGS
            }),
            stop(InvalidSettings),
        ),
        (
            "base equal to the cap",
            with(Settings {
                base_delay: secs(30),
                ..SETTINGS
            }),
            wait(secs(30)),
        ),
        (
            "base 1 ns past the cap",
            with(Settings {
                base_delay: secs(30) + ns(1),
                ..SETTINGS
            }),
            stop(InvalidSettings),
        ),
        (
            "zero base",
            with(Settings {
                base_delay: Duration::ZERO,
                ..SETTINGS
            }),
            wait(secs(0)),
        ),
        (
            "reserve 1 ns under the budget, zero client delay: fits",
            Row::of(Attempt {
                elapsed: Duration::ZERO,
                ..get()
            })
            .settings(Settings {
                base_delay: Duration::ZERO,
                request_reserve: secs(120) - ns(1),
                ..SETTINGS
            }),
            wait(secs(0)),
        ),
        (
            "reserve 1 ns under the budget, 200 ms client delay: valid but over budget",
            Row::of(Attempt {
                elapsed: Duration::ZERO,
                ..get()
            })
            .settings(Settings {
                request_reserve: secs(120) - ns(1),
                ..SETTINGS
            }),
            stop(BudgetExhausted),
        ),
        (
            "reserve equal to the budget",
            with(Settings {
                request_reserve: secs(120),
                ..SETTINGS
            }),
            stop(InvalidSettings),
        ),
        (
            "reserve past the budget",
            with(Settings {
                request_reserve: secs(121),
                ..SETTINGS
            }),
            stop(InvalidSettings),
        ),
        (
            "all zero",
            with(Settings {
                max_retries: 0,
                base_delay: Duration::ZERO,
                max_delay: Duration::ZERO,
                total_budget: Duration::ZERO,
                request_reserve: Duration::ZERO,
            }),
            stop(InvalidSettings),
        ),
        (
            "all Duration::MAX",
            with(Settings {
                base_delay: Duration::MAX,
                max_delay: Duration::MAX,
                total_budget: Duration::MAX,
                request_reserve: Duration::MAX,
                ..SETTINGS
            }),
            stop(InvalidSettings),
        ),
    ]);
    assert_eq!(Settings::default(), SETTINGS);
    assert_eq!(
        (
            SETTINGS.max_retries,
            SETTINGS.base_delay,
            SETTINGS.max_delay
        ),
        (3, ms(200), secs(30))
    );
    assert_eq!(
        (SETTINGS.total_budget, SETTINGS.request_reserve),
        (secs(120), secs(1))
    );
}

#[test]
fn malformed_input_stops_before_any_rule_about_retrying() {
    // Rule 2; a method must be an RFC 9110 §5.6.2 token.
    let input = stop(InvalidInput);
    let method = |method| Row::of(Attempt { method, ..get() });
    let status = |status| Row::of(Attempt { status, ..get() });
    let ppm = |sample_ppm| {
        Row::of(Attempt {
            sample_ppm,
            ..get()
        })
    };
    check(&[
        ("sample 1_000_000", ppm(1_000_000), wait(ms(200))),
        ("sample 1_000_001", ppm(1_000_001), input),
        ("sample u32::MAX", ppm(u32::MAX), input),
        ("status 0", status(0), input),
        ("status 99", status(99), input),
        ("status 100", status(100), stop(NotRetryable)),
        ("status 599", status(599), stop(NotRetryable)),
        ("status 600", status(600), input),
        ("status u16::MAX", status(u16::MAX), input),
        ("empty method", method(""), input),
        ("leading space", method(" GET"), input),
        ("trailing space", method("GET "), input),
        ("inner space", method("G ET"), input),
        ("line break", method("GET\r\n"), input),
        ("non-ASCII letter", method("GÉT"), input),
        ("parentheses", method("(GET)"), input),
        ("slash", method("GET/1.1"), input),
        ("a token in lower case", method("get"), stop(NotReplayable)),
        (
            "every tchar punctuation mark",
            Row::of(Attempt {
                method: "!#$%&'*+-.^_`|~",
                replay_safe: true,
                ..get()
            }),
            wait(ms(200)),
        ),
        (
            "now at the first second of 1601",
            Row::of(get()).now(EARLIEST),
            wait(ms(200)),
        ),
        (
            "now at the last second of 9999",
            Row::of(get()).now(LATEST),
            wait(ms(200)),
        ),
        (
            "now a second before 1601",
            Row::of(get()).now(EARLIEST - 1),
            input,
        ),
        (
            "now a second after 9999",
            Row::of(get()).now(LATEST + 1),
            input,
        ),
        ("now i64::MIN", Row::of(get()).now(i64::MIN), input),
        ("now i64::MAX", Row::of(get()).now(i64::MAX), input),
    ]);
}

#[test]
fn only_transient_statuses_are_retried() {
    // The MoonBit package's defaults: 408, 429, 500, 502, 503, 504.
    for status in 100..=599 {
        let expected = if [408, 429, 500, 502, 503, 504].contains(&status) {
            wait(ms(200))
        } else {
            stop(NotRetryable)
        };
        assert_eq!(
            Row::of(Attempt { status, ..get() }).decide(),
            expected,
            "{status}"
        );
        assert_eq!(retryable_status(status), expected == wait(ms(200)));
    }
    assert!(!retryable_status(0) && !retryable_status(u16::MAX));
}

#[test]
fn only_replayable_requests_are_retried() {
    // RFC 9110 §9.2.2 idempotent methods; other methods need replay_safe; all need the body.
    let method = |method| Row::of(Attempt { method, ..get() });
    let mut table = Vec::new();
    for idempotent in ["GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"] {
        table.push((idempotent, method(idempotent), wait(ms(200))));
        assert!(idempotent_method(idempotent));
    }
    for other in [
        "POST", "PATCH", "CONNECT", "get", "Put", "M-SEARCH", "PROPFIND",
    ] {
        table.push((other, method(other), stop(NotReplayable)));
        assert!(!idempotent_method(other));
    }
    table.extend([
        (
            "POST the server deduplicates",
            Row::of(Attempt {
                method: "POST",
                replay_safe: true,
                ..get()
            }),
            wait(ms(200)),
        ),
        (
            "GET whose body cannot be replayed",
            Row::of(Attempt {
                body_replayable: false,
                ..get()
            }),
            stop(NotReplayable),
        ),
        (
            "GET whose body cannot be replayed, even if marked replay-safe",
            Row::of(Attempt {
                body_replayable: false,
                replay_safe: true,
                ..get()
            }),
            stop(NotReplayable),
        ),
        (
            "deduplicated POST whose body cannot be replayed",
            Row::of(Attempt {
                method: "POST",
                replay_safe: true,
                body_replayable: false,
                ..get()
            }),
            stop(NotReplayable),
        ),
        (
            "GET marked replay-safe",
            Row::of(Attempt {
                replay_safe: true,
                ..get()
            }),
            wait(ms(200)),
        ),
    ]);
    check(&table);
}

#[test]
fn retries_stop_at_max_retries() {
    let retry = |retry_index| {
        Row::of(Attempt {
            retry_index,
            ..get()
        })
    };
    check(&[
        ("first retry", retry(0), wait(ms(200))),
        ("second retry", retry(1), wait(ms(400))),
        ("third and last retry", retry(2), wait(ms(800))),
        (
            "retry_index equal to max_retries",
            retry(3),
            stop(AttemptsExhausted),
        ),
        ("one past", retry(4), stop(AttemptsExhausted)),
        ("u32::MAX", retry(u32::MAX), stop(AttemptsExhausted)),
        (
            "no retries allowed",
            retry(0).settings(Settings {
                max_retries: 0,
                ..SETTINGS
            }),
            stop(AttemptsExhausted),
        ),
        (
            "the 1000th retry of 1000, capped at 30 s",
            retry(999).settings(Settings {
                max_retries: 1000,
                ..SETTINGS
            }),
            wait(secs(30)),
        ),
        (
            "the 1001st of 1000",
            retry(1000).settings(Settings {
                max_retries: 1000,
                ..SETTINGS
            }),
            stop(AttemptsExhausted),
        ),
    ]);
}
