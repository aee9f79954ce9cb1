extern crate std;

use std::format;
use std::string::{String, ToString};

use proptest::prelude::*;

use super::*;

/// A duration field as the policy records will declare it.
#[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
struct Wrap(#[serde(with = "super")] Duration);

fn write(d: Duration) -> String {
    match serde_json::to_value(Wrap(d)) {
        Ok(serde_json::Value::String(text)) => text,
        other => panic!("{d:?} was written as {other:?}"),
    }
}

fn read(text: &str) -> Result<Duration, String> {
    serde_json::from_value::<Wrap>(serde_json::Value::String(text.into()))
        .map(|Wrap(d)| d)
        .map_err(|e| e.to_string())
}

/// Asserts that each string is refused, with a message naming it and `why`.
fn refuses(texts: &[&str], why: &str) {
    for text in texts {
        let message = read(text).expect_err(text);
        assert!(message.contains(why), "{text:?}: {message}");
        assert!(
            message.contains(&format!("invalid duration {text:?}")),
            "{message}"
        );
    }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

#[test]
fn writes_the_largest_unit_that_holds_the_duration_exactly() {
    assert_eq!(write(secs(2 * 3600)), "2h");
    assert_eq!(write(secs(25 * 3600)), "25h");
    assert_eq!(write(secs(120)), "2m");
    assert_eq!(write(secs(10)), "10s");
    assert_eq!(write(ms(100)), "100ms");
    assert_eq!(write(ms(1500)), "1500ms");
    assert_eq!(write(Duration::from_micros(250)), "250us");
    assert_eq!(write(Duration::from_nanos(1)), "1ns");
    assert_eq!(write(Duration::from_nanos(1_000_000_001)), "1000000001ns");
}

#[test]
fn writes_ninety_seconds_as_one_number_and_one_unit() {
    assert_eq!(write(secs(90)), "90s");
    assert_eq!(write(secs(5400)), "90m");
}

#[test]
fn writes_zero_as_seconds_and_the_extremes_as_exact_counts() {
    assert_eq!(write(Duration::ZERO), "0s");
    assert_eq!(write(Duration::MAX), "18446744073709551615999999999ns");
    assert_eq!(
        write(Duration::from_nanos(u64::MAX)),
        "18446744073709551615ns"
    );
    assert_eq!(write(secs(u64::MAX)), "18446744073709551615s");
}

#[test]
fn writes_a_json_string_inside_a_record() {
    #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    struct Record {
        #[serde(with = "super")]
        window: Duration,
        #[serde(with = "super")]
        bucket: Duration,
    }
    let record = Record {
        window: secs(10),
        bucket: ms(100),
    };
    let json = serde_json::to_string(&record).unwrap();
    assert_eq!(json, r#"{"window":"10s","bucket":"100ms"}"#);
    assert_eq!(serde_json::from_str::<Record>(&json).unwrap(), record);
    let spelled = r#"{"window": "1m30s", "bucket": "0.25s"}"#;
    let read = serde_json::from_str::<Record>(spelled).unwrap();
    assert_eq!(
        read,
        Record {
            window: secs(90),
            bucket: ms(250)
        }
    );
}

#[test]
fn round_trips_the_edge_values() {
    for d in [
        Duration::ZERO,
        Duration::from_nanos(1),
        Duration::MAX,
        Duration::MAX - Duration::from_nanos(1),
        Duration::from_nanos(u64::MAX),
        secs(u64::MAX),
        ms(1500),
        Duration::new(1, 1),
    ] {
        assert_eq!(read(&write(d)), Ok(d), "{d:?}");
    }
}

#[test]
fn reads_each_unit() {
    assert_eq!(read("7ns"), Ok(Duration::from_nanos(7)));
    assert_eq!(read("7us"), Ok(Duration::from_micros(7)));
    assert_eq!(read("7\u{b5}s"), Ok(Duration::from_micros(7)));
    assert_eq!(read("7\u{3bc}s"), Ok(Duration::from_micros(7)));
    assert_eq!(read("7ms"), Ok(ms(7)));
    assert_eq!(read("7s"), Ok(secs(7)));
    assert_eq!(read("7m"), Ok(secs(7 * 60)));
    assert_eq!(read("7h"), Ok(secs(7 * 3600)));
    assert_eq!(read("7d"), Ok(secs(7 * 86_400)));
    assert_eq!(read("0s"), Ok(Duration::ZERO));
    assert_eq!(read("007s"), Ok(secs(7)));
}

#[test]
fn reads_parts_as_their_sum() {
    assert_eq!(read("1m30s"), Ok(secs(90)));
    assert_eq!(read("1h 30m"), Ok(secs(5400)));
    assert_eq!(read("1h   30m"), Ok(secs(5400)));
    let all = Duration::new(86_400 + 2 * 3600 + 3 * 60 + 4, 5_006_007);
    assert_eq!(read("1d2h3m4s5ms6us7ns"), Ok(all));
    assert_eq!(read("1d 2h 3m 4s 5ms 6\u{b5}s 7ns"), Ok(all));
    assert_eq!(read("1.5h 1.5m"), Ok(secs(5400 + 90)));
}

#[test]
fn reads_exact_decimals() {
    assert_eq!(read("1.5s"), Ok(ms(1500)));
    assert_eq!(read("0.25ms"), Ok(Duration::from_micros(250)));
    assert_eq!(read("0.000000001s"), Ok(Duration::from_nanos(1)));
    assert_eq!(read("0.0000000001h"), Ok(Duration::from_nanos(360)));
    assert_eq!(read("0.00000000001d"), Ok(Duration::from_nanos(864)));
    assert_eq!(read("1.0ns"), Ok(Duration::from_nanos(1)));
    assert_eq!(read("1.500000000000000000000000000000s"), Ok(ms(1500)));
    assert_eq!(read("18446744073709551615.999999999s"), Ok(Duration::MAX));
}

#[test]
fn refuses_anything_finer_than_a_nanosecond() {
    refuses(
        &[
            "1.5ns",
            "0.1ns",
            "1.0000000001s",
            "0.0001us",
            "0.0000000000000000000000001d",
        ],
        "not a whole number of nanoseconds",
    );
    // 0.000000000000001d is 86.4 ns: exact digits, inexact value.
    refuses(&["0.000000000000001d"], "not a whole number of nanoseconds");
}

#[test]
fn refuses_the_empty_string() {
    refuses(&[""], "it is empty");
}

#[test]
fn refuses_a_number_without_a_unit() {
    refuses(&["10", "1.5", "1m30"], "a number needs a unit");
}

#[test]
fn refuses_unknown_units() {
    refuses(
        &["10x", "10S", "10MS", "10sec", "10min", "1y", "1w"],
        "unknown unit",
    );
    refuses(&["10%"], r#"unknown unit "%""#);
    refuses(&["1.2.3s"], r#"unknown unit ".""#);
    assert!(read("10sec").unwrap_err().contains(r#"unknown unit "sec""#));
}

#[test]
fn refuses_signs() {
    refuses(
        &["-1s", "+1s", "1m-30s", "1m+30s", "-0s"],
        "a duration takes no sign",
    );
}

#[test]
fn refuses_digits_other_than_ascii() {
    // Fullwidth, Arabic-Indic and Devanagari digits.
    refuses(
        &["\u{ff11}s", "\u{661}s", "1\u{967}s"],
        "is not an ASCII digit",
    );
    refuses(&["1s\u{966}ms"], "is not an ASCII digit");
}

#[test]
fn refuses_other_characters_where_a_number_should_be() {
    refuses(&["s", "ms10", "1s,2s", "1s_2s"], "where a number should be");
}

#[test]
fn refuses_whitespace_around_the_string_or_inside_a_part() {
    refuses(
        &[" 1s", "1s ", "1s\n", "\t1s", " "],
        "starts or ends with whitespace",
    );
    refuses(
        &["10 s", "1h 30 m"],
        "a number and its unit are written together",
    );
    refuses(&["1s\t2s", "1s\u{a0}2s"], "where a number should be");
}

#[test]
fn refuses_a_decimal_point_without_digits_on_both_sides() {
    refuses(
        &[".5s", "1.s", "1..5s", "1s.5ms"],
        "a decimal point needs a digit",
    );
}

#[test]
fn refuses_units_out_of_order_or_repeated() {
    refuses(
        &["30s1m", "1s1s", "1us1\u{b5}s", "1s 1h", "0s0s"],
        "from largest to smallest",
    );
}

#[test]
fn refuses_more_than_the_longest_duration() {
    refuses(
        &[
            "18446744073709551616s",
            "18446744073709551616000000000ns",
            "18446744073709551615s 999ms 999us 1000ns",
            "307445734561825860m 16s",
            "18446744073709551615.999999999s1ns",
            "213503982334602d",
            "340282366920938463463374607431768211456ns",
            "99999999999999999999999999999999999999999999999999d",
            "1.5d 99999999999999999999999999999999999999999999999999s",
        ],
        "longer than the longest duration",
    );
    assert_eq!(read("18446744073709551615999999999ns"), Ok(Duration::MAX));
    assert_eq!(
        read("213503982334601d"),
        Ok(secs(213_503_982_334_601 * 86_400))
    );
    assert_eq!(read("307445734561825860m 15s"), Ok(secs(u64::MAX)));
}

#[test]
fn refuses_values_that_are_not_strings() {
    for json in ["10", "1.5", "null", "true", "[]", r#"{"secs":1,"nanos":0}"#] {
        let message = serde_json::from_str::<Wrap>(json).unwrap_err().to_string();
        assert!(message.contains(EXPECTED), "{json}: {message}");
    }
}

#[test]
fn messages_name_the_input_the_reason_and_the_expected_form() {
    assert_eq!(
        read("10x").unwrap_err(),
        "invalid duration \"10x\": unknown unit \"x\" (the units are ns, us, µs, ms, s, m, \
             h and d, in lower case); expected a duration such as \"100ms\" or \"10s\""
    );
}

/// Durations from every corner: arbitrary, whole units, and the extremes.
fn durations() -> impl Strategy<Value = Duration> {
    prop_oneof![
        (any::<u64>(), 0..1_000_000_000u32).prop_map(|(s, n)| Duration::new(s, n)),
        (any::<u64>(), 0..1_000u32).prop_map(|(s, n)| Duration::new(s, n * 1_000_000)),
        (0..=u64::MAX / 3600).prop_map(|h| secs(h * 3600)),
        (0..=u64::MAX / 60).prop_map(|m| secs(m * 60)),
        any::<u64>().prop_map(Duration::from_nanos),
        any::<u64>().prop_map(Duration::from_micros),
        Just(Duration::MAX),
        Just(Duration::ZERO),
    ]
}

/// The parts of a string, largest unit first, and each part's value by `Duration`'s own
/// arithmetic (`None` past `Duration::MAX`): the naive model `parse` is checked against.
fn model(unit: usize, n: u64, micro_sign: bool) -> (&'static str, Option<Duration>) {
    match unit {
        0 => ("d", secs(n).checked_mul(86_400)),
        1 => ("h", secs(n).checked_mul(3_600)),
        2 => ("m", secs(n).checked_mul(60)),
        3 => ("s", Some(secs(n))),
        4 => ("ms", Some(ms(n))),
        5 if micro_sign => ("\u{b5}s", Some(Duration::from_micros(n))),
        5 => ("us", Some(Duration::from_micros(n))),
        _ => ("ns", Some(Duration::from_nanos(n))),
    }
}

proptest! {
    #[test]
    fn every_duration_round_trips(d in durations()) {
        let text = write(d);
        prop_assert_eq!(read(&text), Ok(d), "{}", text);
    }

    #[test]
    fn writes_no_count_that_a_larger_unit_would_hold(d in durations()) {
        let text = write(d);
        let digits: String = text.chars().take_while(char::is_ascii_digit).collect();
        let count: u128 = digits.parse().unwrap();
        let factor = match &text[digits.len()..] {
            "h" => None,
            "m" => Some(60),
            "s" if count == 0 => None,
            "s" => Some(60),
            "ms" | "us" | "ns" => Some(1000),
            unit => panic!("unit {unit:?}"),
        };
        prop_assert!(factor.is_none_or(|factor| !count.is_multiple_of(factor)), "{}", text);
    }

    #[test]
    fn reads_decimal_seconds_exactly(s in any::<u64>(), n in 0..1_000_000_000u32) {
        let d = Duration::new(s, n);
        let text = format!("{s}.{n:09}s");
        prop_assert_eq!(read(&text), Ok(d));
        // The same without trailing zeros: "1.5s", "7s".
        let trimmed = text.trim_end_matches(['0', 's']).trim_end_matches('.');
        prop_assert_eq!(read(&format!("{trimmed}s")), Ok(d));
    }

    #[test]
    fn reads_parts_as_the_sum_duration_computes(
        parts in proptest::collection::btree_map(
            0..7usize,
            prop_oneof![0..1_000u64, any::<u64>()],
            1..5,
        ),
        spaced in any::<bool>(),
        micro_sign in any::<bool>(),
    ) {
        let mut text = String::new();
        let mut expected = Some(Duration::ZERO);
        for (unit, n) in parts {
            let (name, value) = model(unit, n, micro_sign);
            if spaced && !text.is_empty() {
                text.push(' ');
            }
            text.push_str(&n.to_string());
            text.push_str(name);
            expected = expected.zip(value).and_then(|(sum, value)| sum.checked_add(value));
        }
        prop_assert_eq!(read(&text).ok(), expected, "{}", text);
    }
}
