//! Properties of `http_retry` over hostile inputs: no input panics; every wait is at least the
//! server's delay, at most the cap, and fits the budget with the reserve; `decide` agrees with
//! a naive model of the rule order written in `u128` nanoseconds; dates round-trip through a
//! naive formatter.

use std::time::Duration;

use proptest::prelude::*;

use ironward::http_retry::{
    Attempt, Call, Decision, Fault, Reading, Run, Settings, Step, StopReason, backoff_ceiling,
    decide, decide_response, idempotent_method, jitter_delay, parse_http_date, retry_after_delay,
    retryable_status, sample_ppm,
};

const EARLIEST: i64 = -11_644_473_600;
const LATEST: i64 = 253_402_300_799;
const LARGEST_DELTA: u64 = 9_223_372_036_854_775;

fn nanos(d: Duration) -> u128 {
    d.as_nanos()
}

fn from_nanos(n: u128) -> Duration {
    Duration::new((n / 1_000_000_000) as u64, (n % 1_000_000_000) as u32)
}

/// Durations from zero to `Duration::MAX`, favouring the edges and the MoonBit package's scale.
fn duration() -> impl Strategy<Value = Duration> {
    prop_oneof![
        Just(Duration::ZERO),
        Just(Duration::MAX),
        Just(Duration::MAX - Duration::from_nanos(1)),
        (0u64..=1_000).prop_map(Duration::from_nanos),
        (0u64..=200_000).prop_map(Duration::from_millis),
        (any::<u64>(), 0u32..1_000_000_000).prop_map(|(s, n)| Duration::new(s, n)),
    ]
}

/// Settings of every kind, most of them valid: sorted so base ≤ cap and reserve < budget.
fn settings() -> impl Strategy<Value = Settings> {
    let retries = prop_oneof![0u32..=5, 995u32..=1005, any::<u32>()];
    let valid = (
        retries.clone(),
        duration(),
        duration(),
        duration(),
        duration(),
    )
        .prop_map(|(max_retries, a, b, c, d)| Settings {
            max_retries: max_retries.min(1000),
            base_delay: a.min(b),
            max_delay: a.max(b),
            request_reserve: c.min(d),
            total_budget: c.max(d).max(Duration::from_nanos(1)),
        });
    let any = (retries, duration(), duration(), duration(), duration()).prop_map(
        |(max_retries, base_delay, max_delay, total_budget, request_reserve)| Settings {
            max_retries,
            base_delay,
            max_delay,
            total_budget,
            request_reserve,
        },
    );
    prop_oneof![Just(Settings::default()), valid, any]
}

const METHODS: [&str; 12] = [
    "GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE", "POST", "PATCH", "get", "", "G T", "GÉT",
];

fn method() -> impl Strategy<Value = String> {
    prop_oneof![
        proptest::sample::select(&METHODS[..]).prop_map(str::to_owned),
        "[!-~]{0,8}",
        "\\PC{0,8}",
    ]
}

/// The fields of a `Attempt`, with the method owned so that the strategy can hold it.
type Fields = (String, u16, u32, Duration, bool, bool, u32);

fn fields() -> impl Strategy<Value = Fields> {
    (
        method(),
        prop_oneof![
            proptest::sample::select(&[408u16, 429, 500, 502, 503, 504][..]),
            any::<u16>()
        ],
        prop_oneof![0u32..=4, 990u32..=1001, any::<u32>()],
        duration(),
        prop_oneof![4 => Just(true), 1 => Just(false)],
        any::<bool>(),
        prop_oneof![
            Just(0u32),
            Just(1),
            Just(999_999),
            Just(1_000_000),
            Just(1_000_001),
            0u32..=1_000_000,
            any::<u32>(),
        ],
    )
}

fn request(fields: &Fields) -> Attempt<'_> {
    let (method, status, retry_index, elapsed, body_replayable, replay_safe, sample_ppm) = fields;
    Attempt {
        method,
        status: *status,
        retry_index: *retry_index,
        elapsed: *elapsed,
        body_replayable: *body_replayable,
        replay_safe: *replay_safe,
        sample_ppm: *sample_ppm,
    }
}

fn now() -> impl Strategy<Value = i64> {
    prop_oneof![
        4 => EARLIEST..=LATEST,
        1 => any::<i64>(),
        1 => proptest::sample::select(&[EARLIEST, LATEST, EARLIEST - 1, LATEST + 1][..]),
    ]
}

/// An IMF-fixdate for `unix` seconds, by walking the calendar a year and a month at a time
/// from 1970: slow, obvious, and sharing nothing with the crate's arithmetic.
fn imf(unix: i64) -> String {
    let leap = |y: i64| (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let year_days = |y: i64| if leap(y) { 366 } else { 365 };
    let (mut days, second_of_day) = (unix.div_euclid(86_400), unix.rem_euclid(86_400));
    // 1970-01-01 was a Thursday.
    let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][days.rem_euclid(7) as usize];
    let mut year = 1970;
    while days < 0 {
        year -= 1;
        days += year_days(year);
    }
    while days >= year_days(year) {
        days -= year_days(year);
        year += 1;
    }
    let lengths = [
        31,
        if leap(year) { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    let names = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let mut month = 0;
    while days >= lengths[month] {
        days -= lengths[month];
        month += 1;
    }
    format!(
        "{weekday}, {:02} {} {year:04} {:02}:{:02}:{:02} GMT",
        days + 1,
        names[month],
        second_of_day / 3600,
        second_of_day / 60 % 60,
        second_of_day % 60
    )
}

/// `Retry-After` values: delta-seconds, dates, near misses and garbage.
fn header_value() -> impl Strategy<Value = String> {
    prop_oneof![
        (0u64..=100).prop_map(|n| n.to_string()),
        any::<u64>().prop_map(|n| n.to_string()),
        (EARLIEST..=LATEST).prop_map(imf),
        "[ \t]{0,3}[0-9]{1,20}[ \t]{0,3}",
        "[ -~]{0,40}",
        "\\PC{0,40}",
    ]
}

/// The module's rule order, naively: every quantity in `u128` nanoseconds, where nothing
/// can overflow, the backoff by doubling step by step.
fn model(settings: &Settings, request: &Attempt<'_>, server: Option<Duration>) -> Decision {
    use StopReason::*;
    let stop = Decision::Stop;
    let (base, cap) = (nanos(settings.base_delay), nanos(settings.max_delay));
    let (budget, reserve) = (
        nanos(settings.total_budget),
        nanos(settings.request_reserve),
    );
    if settings.max_retries > 1000 || base > cap || reserve >= budget {
        return stop(InvalidSettings);
    }
    let tchar = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    let token = !request.method.is_empty() && request.method.chars().all(tchar);
    if request.sample_ppm > 1_000_000 || !(100..=599).contains(&request.status) || !token {
        return stop(InvalidInput);
    }
    if ![408, 429, 500, 502, 503, 504].contains(&request.status) {
        return stop(NotRetryable);
    }
    let idempotent = ["GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"].contains(&request.method);
    if !request.body_replayable || !(idempotent || request.replay_safe) {
        return stop(NotReplayable);
    }
    if request.retry_index >= settings.max_retries {
        return stop(AttemptsExhausted);
    }
    let mut ceiling = base.min(cap);
    for _ in 0..request.retry_index {
        ceiling = (ceiling * 2).min(cap);
    }
    let client = ceiling * u128::from(request.sample_ppm) / 1_000_000;
    let remaining = budget.saturating_sub(nanos(request.elapsed));
    if client + reserve >= remaining {
        return stop(BudgetExhausted);
    }
    let server = server.map_or(0, nanos);
    if server > cap {
        return stop(ServerDelayExceedsCap);
    }
    let wait = client.max(server);
    if wait + reserve >= remaining {
        return stop(BudgetExhausted);
    }
    Decision::Wait(from_nanos(wait))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn no_input_makes_any_function_panic(
        settings in settings(),
        fields in fields(),
        server in proptest::option::of(duration()),
        values in proptest::collection::vec(header_value(), 0..3),
        now in now(),
        text in "\\PC{0,64}",
    ) {
        let request = request(&fields);
        let values: Vec<&str> = values.iter().map(String::as_str).collect();
        let _ = decide(&settings, &request, server);
        let _ = decide_response(&settings, &request, &values, now);
        let _ = backoff_ceiling(&settings, request.retry_index);
        let _ = jitter_delay(settings.max_delay, request.sample_ppm);
        let _ = (idempotent_method(request.method), retryable_status(request.status));
        let _ = (parse_http_date(&text), retry_after_delay(&text, now));
    }

    #[test]
    fn every_wait_covers_the_server_delay_stays_under_the_cap_and_fits_the_budget(
        settings in settings(),
        fields in fields(),
        server in proptest::option::of(duration()),
    ) {
        let request = request(&fields);
        if let Decision::Wait(wait) = decide(&settings, &request, server) {
            prop_assert!(wait >= server.unwrap_or_default());
            prop_assert!(wait <= settings.max_delay);
            prop_assert!(
                nanos(request.elapsed) + nanos(wait) + nanos(settings.request_reserve)
                    < nanos(settings.total_budget)
            );
        }
    }

    #[test]
    fn every_wait_from_a_header_covers_the_delay_it_asks_for(
        settings in settings(),
        fields in fields(),
        value in header_value(),
        now in now(),
    ) {
        let request = request(&fields);
        if let Decision::Wait(wait) = decide_response(&settings, &request, &[&value], now) {
            let server = retry_after_delay(&value, now);
            prop_assert!(server.is_some());
            prop_assert!(wait >= server.unwrap());
            prop_assert!(wait <= settings.max_delay);
            prop_assert!(
                nanos(request.elapsed) + nanos(wait) + nanos(settings.request_reserve)
                    < nanos(settings.total_budget)
            );
        }
    }

    #[test]
    fn decide_agrees_with_a_naive_model_of_the_rules(
        settings in settings(),
        fields in fields(),
        server in proptest::option::of(duration()),
    ) {
        let request = request(&fields);
        prop_assert_eq!(decide(&settings, &request, server), model(&settings, &request, server));
    }

    #[test]
    fn decide_response_is_decide_on_the_parsed_header(
        settings in settings(),
        fields in fields(),
        values in proptest::collection::vec(header_value(), 0..3),
        now in EARLIEST..=LATEST,
    ) {
        // Rules 1 to 6 answer first; then no field is no minimum, one valid field is its
        // delay, and anything else is InvalidRetryAfter.
        let request = request(&fields);
        let refs: Vec<&str> = values.iter().map(String::as_str).collect();
        let baseline = decide(&settings, &request, None);
        let expected = match (&refs[..], baseline) {
            (_, Decision::Stop(reason)) => Decision::Stop(reason),
            ([], _) => baseline,
            ([value], _) => match retry_after_delay(value, now) {
                Some(delay) => decide(&settings, &request, Some(delay)),
                None => Decision::Stop(StopReason::InvalidRetryAfter),
            },
            _ => Decision::Stop(StopReason::InvalidRetryAfter),
        };
        prop_assert_eq!(decide_response(&settings, &request, &refs, now), expected);
    }

    #[test]
    fn every_second_in_range_round_trips_through_a_naive_formatter(
        unix in prop_oneof![
            EARLIEST..=LATEST,
            EARLIEST..=EARLIEST + 86_400 * 800,
            LATEST - 86_400 * 800..=LATEST,
            -86_400 * 800..=86_400 * 800i64,
        ],
        now in EARLIEST..=LATEST,
    ) {
        let date = imf(unix);
        prop_assert_eq!(parse_http_date(&date), Some(unix), "{}", date);
        let ahead = u64::try_from(unix - now).unwrap_or(0);
        prop_assert_eq!(retry_after_delay(&date, now), Some(Duration::from_secs(ahead)));
    }

    #[test]
    fn an_accepted_date_is_always_the_canonical_form_of_its_value(
        unix in EARLIEST..=LATEST,
        position in 0usize..29,
        byte in prop_oneof![32u8..=126, Just(b'0'), Just(b'9'), Just(b' ')],
    ) {
        // Change one byte of a valid date: whatever is still accepted must read back exactly.
        let mut bytes = imf(unix).into_bytes();
        bytes[position] = byte;
        let text = String::from_utf8(bytes).unwrap();
        if let Some(parsed) = parse_http_date(&text) {
            prop_assert_eq!(imf(parsed), text);
        }
    }

    #[test]
    fn delta_seconds_are_read_exactly_up_to_the_bound(
        seconds in prop_oneof![
            any::<u64>(),
            0u64..=1_000,
            LARGEST_DELTA - 3..=LARGEST_DELTA + 3,
        ],
        zeros in 0usize..5,
        before in "[ \t]{0,3}",
        after in "[ \t]{0,3}",
        now in now(),
    ) {
        let value = format!("{before}{}{seconds}{after}", "0".repeat(zeros));
        let expected = (seconds <= LARGEST_DELTA && (EARLIEST..=LATEST).contains(&now))
            .then(|| Duration::from_secs(seconds));
        prop_assert_eq!(retry_after_delay(&value, now), expected);
    }

    // One backoff model: the client delay of rule 6 is `Settings::backoff()`'s full jitter,
    // to the nanosecond, for every setting, retry and draw.
    #[test]
    fn the_client_delay_is_the_cores_full_jitter_backoff(
        settings in settings(),
        retry_index in prop_oneof![0u32..=10, 90u32..=130, any::<u32>()],
        roll in prop_oneof![0.0f64..1.0, any::<f64>(), Just(1.0), Just(f64::NAN)],
    ) {
        prop_assume!(settings.valid());
        let ppm = sample_ppm(roll);
        let client = backoff_ceiling(&settings, retry_index)
            .and_then(|ceiling| jitter_delay(ceiling, ppm));
        let backoff = settings.backoff();
        let retry = retry_index.saturating_add(1);
        prop_assert_eq!(backoff_ceiling(&settings, retry_index), Some(backoff.ceiling(retry)));
        prop_assert_eq!(client, Some(backoff.delay(retry, roll, None)));
        // And it is what `decide` waits when the budget has room and the server names none.
        let roomy = Settings { total_budget: Duration::MAX, request_reserve: Duration::ZERO, ..settings };
        let attempt = Attempt {
            method: "GET",
            status: 503,
            retry_index: retry_index.min(roomy.max_retries.saturating_sub(1)),
            elapsed: Duration::ZERO,
            body_replayable: true,
            replay_safe: false,
            sample_ppm: ppm,
        };
        if roomy.max_retries > 0 {
            let expected = backoff.delay(attempt.retry_index + 1, roll, None);
            if expected < Duration::MAX {
                prop_assert_eq!(decide(&roomy, &attempt, None), Decision::Wait(expected));
            }
        }
    }

    // A retry loop over `Run` decides each failed response exactly as `decide_response` does
    // with the index, the elapsed time and the sample the loop would compute by hand.
    #[test]
    fn a_run_decides_each_failure_as_decide_response(
        settings in settings(),
        (method, body_replayable, replay_safe) in (method(), any::<bool>(), any::<bool>()),
        failures in proptest::collection::vec(
            (
                prop_oneof![Just(503u16), Just(429), Just(200), Just(404), any::<u16>()],
                prop_oneof![Just(None), Just(Some("1")), Just(Some("soon"))],
                0u64..5_000,
                0.0f64..1.0,
                prop_oneof![Just(None), Just(Some(Fault::Sent)), Just(Some(Fault::Unsent)), Just(Some(Fault::Final))],
            ),
            1..8,
        ),
    ) {
        let unix = Duration::from_secs(1_700_000_000);
        let call = Call { method: &method, body_replayable, replay_safe };
        let mut run = Run::new(settings, &call, Duration::ZERO);
        let mut now = Duration::ZERO;
        for (index, (status, retry_after, gap, roll, fault)) in failures.into_iter().enumerate() {
            if run.attempt(now, None).is_err() {
                prop_assert!(index > 0);
                break;
            }
            now += Duration::from_millis(gap);
            let reading = Reading { now, unix, roll };
            let attempt = Attempt {
                method: &method,
                status: if fault.is_some() { 503 } else { status },
                retry_index: index as u32,
                elapsed: now,
                body_replayable,
                replay_safe: replay_safe || fault == Some(Fault::Unsent),
                sample_ppm: sample_ppm(roll),
            };
            let (step, expected) = match fault {
                Some(Fault::Final) => (
                    run.error(Fault::Final, reading, None),
                    Decision::Stop(StopReason::NotRetryable),
                ),
                Some(fault) => (run.error(fault, reading, None), decide(&settings, &attempt, None)),
                None if status < 400 => {
                    prop_assert_eq!(run.response(status, [], reading, None), Step::Done);
                    break;
                }
                None => {
                    let values: Vec<&str> = retry_after.into_iter().collect();
                    let fields = values.iter().map(|v| v.as_bytes());
                    (
                        run.response(status, fields, reading, None),
                        decide_response(&settings, &attempt, &values, 1_700_000_000),
                    )
                }
            };
            match expected {
                Decision::Wait(wait) => {
                    prop_assert_eq!(step, Step::Wait(wait));
                    now = now.saturating_add(wait);
                }
                Decision::Stop(reason) => {
                    prop_assert_eq!(step, Step::Stop(reason.into()));
                    prop_assert_eq!(run.retried().stop, Some(reason.into()));
                    break;
                }
            }
        }
    }
}

#[test]
fn the_naive_formatter_writes_known_dates() {
    assert_eq!(imf(784_111_777), "Sun, 06 Nov 1994 08:49:37 GMT");
    assert_eq!(imf(EARLIEST), "Mon, 01 Jan 1601 00:00:00 GMT");
    assert_eq!(imf(LATEST), "Fri, 31 Dec 9999 23:59:59 GMT");
    assert_eq!(imf(-1), "Wed, 31 Dec 1969 23:59:59 GMT");
    assert_eq!(imf(951_782_400), "Tue, 29 Feb 2000 00:00:00 GMT");
}
