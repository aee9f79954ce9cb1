//! What goes to Redis and comes back: key names, clock readings in microseconds, TTLs, and
//! the decoding of integer and float replies.

use std::time::Duration;

use redis::Value;

use crate::Time;

/// The largest time and span the scripts carry, in microseconds: 2^53, below which every
/// integer is exact in Lua's doubles (about 285 years; on a Unix clock, the year 2255).
pub(crate) const MAX_MICROS: u64 = 1 << 53;

/// The longest TTL set on a key, in milliseconds (2^44 ms, about 557 years): what a limiter
/// that never becomes fresh again (a bucket that does not refill) gets.
pub(crate) const MAX_TTL_MS: u64 = 1 << 44;

/// The shortest TTL set on a key, in milliseconds: ten seconds, so that the keys of a
/// limiter whose span is shorter than a round trip, or than the difference between Redis's
/// clock and the caller's, do not expire while their state still counts.
pub(crate) const MIN_TTL_MS: u64 = 10_000;

/// The name a limiter with an empty name gets, so that a hash tag is never empty.
const UNNAMED: &str = "ironward";

/// Whole microseconds in `d`, rounded up, at most [`MAX_MICROS`].
pub(crate) fn micros_up(d: Duration) -> u64 {
    let micros = d.as_nanos().div_ceil(1000);
    u64::try_from(micros).unwrap_or(u64::MAX).min(MAX_MICROS)
}

/// A span (a period, a window) as the scripts carry it: whole microseconds, rounded up, at
/// least 1.
pub(crate) fn span_micros(d: Duration) -> u64 {
    micros_up(d).max(1)
}

/// The latest reading, in the scripts' microseconds, at which the settle of a reservation
/// taken at `t` with `timeout` still counts: `t` plus `timeout` in whole microseconds,
/// rounded down, at most [`MAX_MICROS`].
///
/// Down, because the core lets a settle count while its reading is at most `at + timeout`
/// in nanoseconds, and for whole-microsecond readings those are exactly the readings up to
/// `t` plus the whole microseconds of `timeout`: a time-out of zero counts a settle at the
/// reading the estimate was taken at, and not one a microsecond later.
pub(crate) fn deadline(t: u64, timeout: Duration) -> u64 {
    let micros = u64::try_from(timeout.as_micros()).unwrap_or(u64::MAX);
    t.saturating_add(micros).min(MAX_MICROS)
}

/// The TTL of a limiter's keys: twice `fresh`, the time after which a limiter left alone is
/// as good as new, in whole milliseconds rounded up, from [`MIN_TTL_MS`] to [`MAX_TTL_MS`].
///
/// Twice, as go-zero's token limiter does: the TTL runs on Redis's clock and the limiter on
/// the caller's, so the key outlives the state it holds by a whole span of slack.
pub(crate) fn ttl_ms(fresh: Duration) -> u64 {
    let ms = fresh.as_nanos().saturating_mul(2).div_ceil(1_000_000);
    u64::try_from(ms)
        .unwrap_or(u64::MAX)
        .clamp(MIN_TTL_MS, MAX_TTL_MS)
}

/// `numbers` as a script unpacks them with `struct.unpack('<dd...')`: one string of
/// little-endian doubles, which Redis reads with one call rather than a `tonumber` each.
pub(crate) fn packed<const N: usize>(numbers: [f64; N]) -> Vec<u8> {
    numbers
        .iter()
        .flat_map(|number| number.to_le_bytes())
        .collect()
}

/// The name a limiter's keys start with: `name`, or `"ironward"` when it is empty.
pub(crate) fn name(name: &str) -> Box<str> {
    if name.is_empty() { UNNAMED } else { name }.into()
}

/// The Redis key of one part of a limiter's state: `{name:key}.part`, or `{name}.part` for
/// the budget of requests without a key.
///
/// The braces are a Redis Cluster hash tag: only what is between them is hashed, so every
/// part of one key's state lands in the same slot and one script can touch them all. The
/// tag is never empty (Redis would then hash the whole name), as the name is not.
pub(crate) fn key(name: &str, key: Option<&[u8]>, part: &str) -> Vec<u8> {
    let length = name.len() + key.map_or(0, |key| key.len() + 1) + part.len() + 3;
    let mut out = Vec::with_capacity(length);
    out.push(b'{');
    out.extend_from_slice(name.as_bytes());
    if let Some(key) = key {
        out.push(b':');
        out.extend_from_slice(key);
    }
    out.extend_from_slice(b"}.");
    out.extend_from_slice(part.as_bytes());
    out
}

/// A clock reading as a script takes it, with what rounding it added.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Reading {
    /// The caller's `now` in whole microseconds, rounded up; `None` to read Redis's `TIME`.
    micros: Option<u64>,
    /// Nanoseconds the rounding added to `now` (below 1000), so that a wait counted from the
    /// rounded reading can be counted from `now` instead.
    gap: u64,
}

impl Reading {
    /// The reading of `now` under `time`.
    pub(crate) fn new(time: Time, now: Duration) -> Self {
        match time {
            Time::Caller => {
                let micros = micros_up(now);
                let gap = u128::from(micros) * 1000;
                let gap = gap.saturating_sub(now.as_nanos());
                Self {
                    micros: Some(micros),
                    // Below 1000 unless `now` was past the largest reading, where it is 0.
                    gap: u64::try_from(gap).unwrap_or(0),
                }
            }
            Time::Server => Self {
                micros: None,
                gap: 0,
            },
        }
    }

    /// The script's `ARGV[1]`: the microseconds, or `"server"`.
    pub(crate) fn arg(&self) -> String {
        match self.micros {
            Some(micros) => micros.to_string(),
            None => String::from("server"),
        }
    }

    /// The reading as a packed script reads it: the microseconds, or -1 for `"server"`
    /// (below 2^53 µs, about 285 years, a double holds them exactly; above, `tonumber` of
    /// [`arg`](Reading::arg) rounds them the same way).
    pub(crate) fn number(&self) -> f64 {
        // `as` rounds to the nearest double, as `tonumber` does.
        self.micros.map_or(-1.0, |micros| micros as f64)
    }

    /// A wait of `micros` counted from `t`, the reading the script decided at, counted
    /// from `now` instead; a negative count (the scripts' "never") is `Duration::MAX`.
    pub(crate) fn wait(&self, t: u64, micros: i64) -> Duration {
        match u64::try_from(micros) {
            Ok(micros) => self.wait_nanos(t, Duration::from_micros(micros)),
            Err(_) => Duration::MAX,
        }
    }

    /// A wait counted from `t` (whole microseconds), the reading the script decided at,
    /// counted from `now` instead: `t` is the rounded reading, or the latest reading seen
    /// when `now` is earlier, and a caller whose clock stepped back waits from its own.
    ///
    /// Zero stays zero (what is there at `t` is there now, as the limiter reads `now` as
    /// `t`), and `Duration::MAX` stays never. With Redis's clock the wait is Redis's.
    pub(crate) fn wait_nanos(&self, t: u64, wait: Duration) -> Duration {
        if wait.is_zero() || wait == Duration::MAX {
            return wait;
        }
        let behind = self.micros.map_or(0, |micros| t.saturating_sub(micros));
        wait.saturating_add(Duration::from_micros(behind))
            .saturating_add(Duration::from_nanos(self.gap))
    }
}

/// A float as the scripts read it back exactly: the shortest decimal that round-trips
/// (Lua's `tonumber` is the C library's correctly rounded `strtod`).
pub(crate) fn float(x: f64) -> String {
    format!("{x:e}")
}

/// The items of an array reply of exactly `N` items.
pub(crate) fn items<const N: usize>(value: &Value) -> Option<&[Value; N]> {
    match value {
        Value::Array(items) => items.as_slice().try_into().ok(),
        _ => None,
    }
}

/// An integer reply.
pub(crate) fn int(value: &Value) -> Option<i64> {
    match value {
        Value::Int(n) => Some(*n),
        _ => None,
    }
}

/// An integer reply that is a time or a wait the scripts give: from 0 to [`MAX_MICROS`].
pub(crate) fn micros(value: &Value) -> Option<u64> {
    int(value)
        .and_then(|n| u64::try_from(n).ok())
        .filter(|&n| n <= MAX_MICROS)
}

/// A wait reply: [`micros`], or -1 for never.
pub(crate) fn wait(value: &Value) -> Option<i64> {
    int(value).filter(|&n| n == -1 || (0..=MAX_MICROS as i64).contains(&n))
}

/// A float the scripts send as a string (`"%.17g"`), finite.
pub(crate) fn finite(value: &Value) -> Option<f64> {
    let text = match value {
        Value::BulkString(bytes) => std::str::from_utf8(bytes).ok()?,
        Value::SimpleString(text) => text.as_str(),
        _ => return None,
    };
    text.parse::<f64>().ok().filter(|x| x.is_finite())
}

/// What a reply was, for an error that says which one did not make sense: its debug form,
/// cut to 200 characters.
pub(crate) fn describe(value: &Value) -> String {
    let mut text = format!("{value:?}");
    if let Some((at, _)) = text.char_indices().nth(200) {
        text.truncate(at);
        text.push('…');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_share_a_hash_tag() {
        assert_eq!(key("api", Some(b"alice"), "ts"), b"{api:alice}.ts");
        assert_eq!(key("api", None, "tokens"), b"{api}.tokens");
        // An empty key still makes a tag that is not empty.
        assert_eq!(key("api", Some(b""), "ts"), b"{api:}.ts");
        assert_eq!(&*name(""), "ironward");
    }

    #[test]
    fn readings_round_up_to_whole_microseconds() {
        let reading = Reading::new(Time::Caller, Duration::from_nanos(1_500));
        assert_eq!(reading.arg(), "2");
        assert_eq!(reading.wait(2, 3), Duration::from_nanos(3_500));
        // Room at the rounded reading is room now.
        assert_eq!(reading.wait(2, 0), Duration::ZERO);
        let whole = Reading::new(Time::Caller, Duration::from_micros(7));
        assert_eq!(
            (whole.arg(), whole.wait(7, 0)),
            ("7".into(), Duration::ZERO)
        );
        assert_eq!(whole.wait(7, -1), Duration::MAX);
        // A clock 5 µs behind the latest reading waits 5 µs more, from its own reading.
        assert_eq!(whole.wait(12, 3), Duration::from_micros(8));
        assert_eq!(whole.wait(12, 0), Duration::ZERO);
        let server = Reading::new(Time::Server, Duration::from_nanos(1_500));
        assert_eq!(
            (server.arg(), server.wait(9, 3)),
            ("server".into(), Duration::from_micros(3))
        );
    }

    #[test]
    fn readings_saturate_at_the_largest_exact_microsecond() {
        let reading = Reading::new(Time::Caller, Duration::MAX);
        assert_eq!(reading.arg(), MAX_MICROS.to_string());
        assert_eq!(reading.wait(MAX_MICROS, 0), Duration::ZERO);
        assert_eq!(
            reading.wait(MAX_MICROS, i64::MAX),
            Duration::from_micros(i64::MAX as u64)
        );
        assert_eq!(micros_up(Duration::ZERO), 0);
        assert_eq!(span_micros(Duration::ZERO), 1);
        assert_eq!(span_micros(Duration::from_nanos(1_001)), 2);
    }

    #[test]
    fn deadlines_round_the_time_out_down_and_saturate() {
        assert_eq!(deadline(5, Duration::ZERO), 5);
        assert_eq!(deadline(5, Duration::from_nanos(1_999)), 6);
        assert_eq!(deadline(5, Duration::from_secs(1)), 1_000_005);
        assert_eq!(deadline(MAX_MICROS - 1, Duration::MAX), MAX_MICROS);
    }

    #[test]
    fn ttls_are_twice_the_time_to_be_fresh() {
        assert_eq!(ttl_ms(Duration::from_secs(60)), 120_000);
        assert_eq!(ttl_ms(Duration::from_millis(5_000_001) / 1000), 10_001);
        assert_eq!(ttl_ms(Duration::from_nanos(1)), MIN_TTL_MS);
        assert_eq!(ttl_ms(Duration::ZERO), MIN_TTL_MS);
        assert_eq!(ttl_ms(Duration::MAX), MAX_TTL_MS);
    }

    #[test]
    fn floats_round_trip_through_their_text() {
        for x in [0.1, 1.0 / 3.0, 1e-300, f64::MAX, -0.0, 123.456] {
            let text = float(x);
            assert_eq!(
                text.parse::<f64>().unwrap().to_bits(),
                x.to_bits(),
                "{text}"
            );
        }
    }

    #[test]
    fn replies_of_the_wrong_shape_decode_to_none() {
        let pair = Value::Array(vec![Value::Int(1), Value::Int(2)]);
        assert!(items::<2>(&pair).is_some());
        assert!(items::<3>(&pair).is_none());
        assert_eq!(micros(&Value::Int(-5)), None);
        assert_eq!(wait(&Value::Int(-1)), Some(-1));
        assert_eq!(wait(&Value::Int(-2)), None);
        assert_eq!(finite(&Value::BulkString(b"0.25".to_vec())), Some(0.25));
        assert_eq!(finite(&Value::BulkString(b"inf".to_vec())), None);
        assert_eq!(finite(&Value::Int(1)), None);
        assert!(
            describe(&Value::BulkString(vec![b'x'; 1000]))
                .chars()
                .count()
                <= 201
        );
    }
}
