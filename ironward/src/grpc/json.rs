//! The JSON forms of the gRPC service config's pieces (feature `serde`): protobuf durations
//! (`"0.1s"`), status codes by name or number, and the policy records, read and validated, and
//! written back so that what is written reads back the same.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use core::time::Duration;

use serde::de::{self, Deserializer, Visitor};
use serde::ser::{SerializeSeq, SerializeStruct, Serializer};
use serde::{Deserialize, Serialize};

use super::code::{Code, Codes};
use super::error::ConfigError;
use super::policy::{HedgingPolicy, PolicyError, RetryPolicy, Throttling};

/// The most seconds a protobuf `Duration` holds: 10 000 years.
const MOST_SECONDS: u64 = 315_576_000_000;

/// Why a duration string is not a protobuf JSON duration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DurationError {
    Unit,
    Negative,
    Malformed,
    Range,
}

impl fmt::Display for DurationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Unit => "malformed duration: missing seconds unit",
            Self::Negative => "negative duration",
            Self::Malformed => "malformed duration",
            Self::Range => "duration out of range (above 315576000000s)",
        })
    }
}

/// A protobuf JSON duration (`"1.5s"`), non-negative; see
/// [`ServiceConfig`](super::ServiceConfig) for the rules.
fn proto_duration(text: &str) -> Result<Duration, DurationError> {
    let body = text.strip_suffix('s').ok_or(DurationError::Unit)?;
    let (negative, body) = match body.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, body),
    };
    let (whole, fraction) = body.split_once('.').unwrap_or((body, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if (whole.is_empty() && fraction.is_empty())
        || !digits(whole)
        || !digits(fraction)
        || fraction.len() > 9
    {
        return Err(DurationError::Malformed);
    }
    let mut seconds: u64 = 0;
    for b in whole.bytes() {
        seconds = seconds
            .checked_mul(10)
            .and_then(|s| s.checked_add(u64::from(b - b'0')))
            .ok_or(DurationError::Range)?;
    }
    if seconds > MOST_SECONDS {
        return Err(DurationError::Range);
    }
    let mut nanos: u32 = 0;
    for place in 0..9 {
        let digit = fraction.as_bytes().get(place).map_or(0, |b| b - b'0');
        nanos = nanos * 10 + u32::from(digit);
    }
    let duration = Duration::new(seconds, nanos);
    if negative && !duration.is_zero() {
        return Err(DurationError::Negative);
    }
    Ok(duration)
}

/// `d` in the protobuf JSON form: whole seconds, then as many decimals as it needs, and `s`
/// (`"0.1s"`, `"1.5s"`, `"2s"`, `"0.000000001s"`). `None` past the form's 315 576 000 000 s.
fn duration_text(d: Duration) -> Option<String> {
    if d.as_secs() > MOST_SECONDS {
        return None;
    }
    let nanos = d.subsec_nanos();
    if nanos == 0 {
        return Some(alloc::format!("{}s", d.as_secs()));
    }
    let decimals = alloc::format!("{nanos:09}");
    Some(alloc::format!(
        "{}.{}s",
        d.as_secs(),
        decimals.trim_end_matches('0')
    ))
}

/// A duration written in the protobuf JSON form, an error past its range.
pub(super) struct Proto(pub(super) Duration);

impl Serialize for Proto {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match duration_text(self.0) {
            Some(text) => serializer.serialize_str(&text),
            None => Err(serde::ser::Error::custom(DurationError::Range)),
        }
    }
}

/// A protobuf JSON duration as serde reads it.
pub(super) struct ProtoDuration(pub(super) Duration);

impl<'de> Deserialize<'de> for ProtoDuration {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Text;
        impl Visitor<'_> for Text {
            type Value = ProtoDuration;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a protobuf duration string such as \"0.1s\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ProtoDuration, E> {
                proto_duration(v).map(ProtoDuration).map_err(E::custom)
            }
        }
        deserializer.deserialize_str(Text)
    }
}

impl<'de> Deserialize<'de> for Code {
    /// A status code as the service config writes it: a name in any case, or a number.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Either;
        impl Visitor<'_> for Either {
            type Value = Code;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a grpc status code, such as \"UNAVAILABLE\" or 14")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Code, E> {
                v.parse().map_err(E::custom)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Code, E> {
                u32::try_from(v)
                    .ok()
                    .and_then(Code::from_number)
                    .ok_or_else(|| E::custom("unknown grpc status code"))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Code, E> {
                u64::try_from(v)
                    .map_err(|_| E::custom("unknown grpc status code"))
                    .and_then(|v| self.visit_u64(v))
            }
        }
        deserializer.deserialize_any(Either)
    }
}

impl Serialize for Code {
    /// The canonical name, as the service config writes it (`"UNAVAILABLE"`).
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl Serialize for Codes {
    /// The names of the codes in the set, in the order of their numbers.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.len() as usize))?;
        for code in self.iter() {
            seq.serialize_element(&code)?;
        }
        seq.end()
    }
}

impl<'de> Deserialize<'de> for Codes {
    /// A list of status codes, each a name or a number.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Vec::<Code>::deserialize(deserializer).map(|codes| codes.into_iter().collect())
    }
}

/// `retryPolicy` as written; every field may be missing, which validation then rejects.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawRetry {
    #[serde(alias = "max_attempts")]
    max_attempts: Option<i64>,
    #[serde(alias = "initial_backoff")]
    initial_backoff: Option<ProtoDuration>,
    #[serde(alias = "max_backoff")]
    max_backoff: Option<ProtoDuration>,
    #[serde(alias = "backoff_multiplier")]
    backoff_multiplier: Option<f64>,
    #[serde(alias = "retryable_status_codes")]
    retryable_status_codes: Option<Codes>,
}

/// `maxAttempts` as a policy holds it: a negative count is 0 (rejected), a huge one `u32::MAX`
/// (read as 5).
fn attempts(written: Option<i64>) -> u32 {
    written.map_or(0, |n| u32::try_from(n.max(0)).unwrap_or(u32::MAX))
}

impl TryFrom<RawRetry> for RetryPolicy {
    type Error = PolicyError;
    fn try_from(raw: RawRetry) -> Result<Self, PolicyError> {
        let policy = RetryPolicy {
            max_attempts: attempts(raw.max_attempts),
            initial_backoff: raw.initial_backoff.map_or(Duration::ZERO, |d| d.0),
            max_backoff: raw.max_backoff.map_or(Duration::ZERO, |d| d.0),
            backoff_multiplier: raw.backoff_multiplier.unwrap_or(0.0),
            retryable_status_codes: raw.retryable_status_codes.unwrap_or_default(),
        };
        policy.validate()?;
        Ok(policy)
    }
}

impl<'de> Deserialize<'de> for RetryPolicy {
    /// A `retryPolicy` as the service config writes it, validated (see
    /// [`ServiceConfig`](super::ServiceConfig)).
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        RetryPolicy::try_from(RawRetry::deserialize(deserializer)?)
            .map_err(|e| de::Error::custom(ConfigError::RetryPolicy(e)))
    }
}

impl Serialize for RetryPolicy {
    /// The `retryPolicy` JSON of the service config, durations in the protobuf form.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut out = serializer.serialize_struct("RetryPolicy", 5)?;
        out.serialize_field("maxAttempts", &self.max_attempts)?;
        out.serialize_field("initialBackoff", &Proto(self.initial_backoff))?;
        out.serialize_field("maxBackoff", &Proto(self.max_backoff))?;
        out.serialize_field("backoffMultiplier", &self.backoff_multiplier)?;
        out.serialize_field("retryableStatusCodes", &self.retryable_status_codes)?;
        out.end()
    }
}

/// `hedgingPolicy` as written.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawHedging {
    #[serde(alias = "max_attempts")]
    max_attempts: Option<i64>,
    #[serde(alias = "hedging_delay")]
    hedging_delay: Option<ProtoDuration>,
    #[serde(alias = "non_fatal_status_codes")]
    non_fatal_status_codes: Option<Codes>,
}

impl TryFrom<RawHedging> for HedgingPolicy {
    type Error = PolicyError;
    fn try_from(raw: RawHedging) -> Result<Self, PolicyError> {
        let policy = HedgingPolicy {
            max_attempts: attempts(raw.max_attempts),
            hedging_delay: raw.hedging_delay.map_or(Duration::ZERO, |d| d.0),
            non_fatal_status_codes: raw.non_fatal_status_codes.unwrap_or_default(),
        };
        policy.validate()?;
        Ok(policy)
    }
}

impl<'de> Deserialize<'de> for HedgingPolicy {
    /// A `hedgingPolicy` as the service config writes it, validated (see
    /// [`ServiceConfig`](super::ServiceConfig)).
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        HedgingPolicy::try_from(RawHedging::deserialize(deserializer)?)
            .map_err(|e| de::Error::custom(ConfigError::HedgingPolicy(e)))
    }
}

impl Serialize for HedgingPolicy {
    /// The `hedgingPolicy` JSON of the service config.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut out = serializer.serialize_struct("HedgingPolicy", 3)?;
        out.serialize_field("maxAttempts", &self.max_attempts)?;
        out.serialize_field("hedgingDelay", &Proto(self.hedging_delay))?;
        out.serialize_field("nonFatalStatusCodes", &self.non_fatal_status_codes)?;
        out.end()
    }
}

/// `retryThrottling` as written: `maxTokens` is read as a number so that a fraction is the
/// policy's error rather than a type error.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawThrottling {
    #[serde(alias = "max_tokens")]
    max_tokens: Option<f64>,
    #[serde(alias = "token_ratio")]
    token_ratio: Option<f64>,
}

impl TryFrom<RawThrottling> for Throttling {
    type Error = PolicyError;
    fn try_from(raw: RawThrottling) -> Result<Self, PolicyError> {
        let written = raw.max_tokens.unwrap_or(0.0);
        // In range and whole: `as` truncates, so a fraction does not survive the round trip.
        let whole = (0.0..=1000.0).contains(&written) && f64::from(written as u32) == written;
        let policy = Throttling {
            max_tokens: if whole { written as u32 } else { 0 },
            token_ratio: raw.token_ratio.unwrap_or(0.0),
        };
        policy.validate()?;
        Ok(policy)
    }
}

impl<'de> Deserialize<'de> for Throttling {
    /// A `retryThrottling` as the service config writes it, validated: `maxTokens` a whole
    /// number in `(0, 1000]`, `tokenRatio` at least 0.001 once truncated.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Throttling::try_from(RawThrottling::deserialize(deserializer)?)
            .map_err(|e| de::Error::custom(ConfigError::RetryThrottling(e)))
    }
}

impl Serialize for Throttling {
    /// The `retryThrottling` JSON of the service config.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut out = serializer.serialize_struct("Throttling", 2)?;
        out.serialize_field("maxTokens", &self.max_tokens)?;
        out.serialize_field("tokenRatio", &self.token_ratio)?;
        out.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // grpc-go `internal/serviceconfig/duration_test.go`, `TestDuration_MarshalUnmarshal`: its
    // non-negative cases, and the malformed ones.
    #[test]
    fn reads_protobuf_durations_as_grpc_go_does() {
        let ms = Duration::from_millis;
        assert_eq!(proto_duration("1s"), Ok(ms(1000)));
        assert_eq!(proto_duration(".050s"), Ok(ms(50)));
        assert_eq!(proto_duration("0.1s"), Ok(ms(100)));
        assert_eq!(proto_duration("1.5s"), Ok(ms(1500)));
        assert_eq!(proto_duration("1.s"), Ok(ms(1000)));
        assert_eq!(proto_duration("0.000000001s"), Ok(Duration::from_nanos(1)));
        assert_eq!(
            proto_duration("9223372036.854775807s"),
            Ok(Duration::new(9_223_372_036, 854_775_807))
        );
        // grpc-go clamps this to Go's largest duration; a Rust `Duration` holds it.
        assert_eq!(
            proto_duration("315576000000s"),
            Ok(Duration::from_secs(MOST_SECONDS))
        );
        assert_eq!(proto_duration("315576000001s"), Err(DurationError::Range));
        assert_eq!(
            proto_duration("99999999999999999999999s"),
            Err(DurationError::Range)
        );
        for malformed in [
            "5.3.2s",
            "x.3s",
            "3.xs",
            "3.1234567890s",
            ".s",
            "s",
            "+1s",
            " 1s",
        ] {
            assert_eq!(
                proto_duration(malformed),
                Err(DurationError::Malformed),
                "{malformed}"
            );
        }
        for unitless in ["5m", "5", "", "1S", "1s "] {
            assert_eq!(
                proto_duration(unitless),
                Err(DurationError::Unit),
                "{unitless}"
            );
        }
        // The negative cases grpc-go reads; every duration here must be non-negative.
        for negative in ["-100.700s", "-.001s", "-0.200s", "-1s"] {
            assert_eq!(
                proto_duration(negative),
                Err(DurationError::Negative),
                "{negative}"
            );
        }
        assert_eq!(proto_duration("-0s"), Ok(Duration::ZERO));
    }

    #[test]
    fn writes_protobuf_durations_that_read_back() {
        let cases = [
            (Duration::ZERO, "0s"),
            (Duration::from_millis(100), "0.1s"),
            (Duration::from_millis(1500), "1.5s"),
            (Duration::from_secs(2), "2s"),
            (Duration::from_nanos(1), "0.000000001s"),
            (
                Duration::new(MOST_SECONDS, 999_999_999),
                "315576000000.999999999s",
            ),
        ];
        for (d, text) in cases {
            assert_eq!(duration_text(d).as_deref(), Some(text));
            assert_eq!(proto_duration(text), Ok(d));
        }
        assert_eq!(duration_text(Duration::from_secs(MOST_SECONDS + 1)), None);
        assert_eq!(duration_text(Duration::MAX), None);
    }
}
