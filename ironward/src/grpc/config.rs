//! [`ServiceConfig`]: the retry and hedging parts of a gRPC service config, read from its JSON
//! (feature `serde`).

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use core::time::Duration;

use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};

use super::code::{Code, Codes};
use super::policy::{HedgingPolicy, PolicyError, RetryPolicy, Throttling};

/// The retry and hedging parts of a gRPC service config: each method's policy and timeout,
/// and the channel's retry throttling, validated as they are read.
///
/// It reads the JSON form of the service config (`grpc.service_config.ServiceConfig` in proto
/// JSON, as gRPC A6 and grpc-go's `service_config.go` read it): `methodConfig`, a list of
/// entries each naming its methods (`name`: a list of `{service, method}`) with an optional
/// `retryPolicy` or `hedgingPolicy` and an optional `timeout`, and `retryThrottling`. Keys are
/// the proto JSON names (`maxAttempts`) or the proto field names (`max_attempts`); any other
/// key of the service config (`loadBalancingConfig`, `waitForReady`, ...) is ignored, as this
/// reads only the parts that retry.
///
/// Durations are the protobuf JSON strings: seconds with up to nine decimals and an `s`
/// (`"1s"`, `"0.1s"`, `".01s"`, `"1.5s"`), at most 315 576 000 000 s. Rejected: no `s`
/// (`"5"`, `"5m"`), a sign (`"-1s"`, `"+1s"`; `"-0s"` is zero), more than nine decimals, no
/// digit (`"s"`, `".s"`), anything but ASCII digits, and anything but a string. Status codes
/// are names in any case (`"UNAVAILABLE"`, `"unavailable"`) or numbers (`14`).
///
/// [`method`](ServiceConfig::method) finds a method's entry as the service config says: the
/// entry naming the service and the method, else the one naming the service alone (every
/// method of it), else the one with an empty name (every method of every service). A name
/// given twice is an error.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::grpc::{Policy, ServiceConfig};
///
/// let config: ServiceConfig = serde_json::from_str(r#"{
///     "methodConfig": [{
///         "name": [{"service": "pkg.Service"}],
///         "timeout": "2s",
///         "retryPolicy": {
///             "maxAttempts": 4,
///             "initialBackoff": "0.1s",
///             "maxBackoff": "1s",
///             "backoffMultiplier": 2,
///             "retryableStatusCodes": ["UNAVAILABLE"]
///         }
///     }],
///     "retryThrottling": {"maxTokens": 10, "tokenRatio": 0.1}
/// }"#)?;
/// let method = config.method("pkg.Service", "Method").expect("the service's entry");
/// assert_eq!(method.timeout, Some(Duration::from_secs(2)));
/// let Some(Policy::Retry(retry)) = method.policy else { panic!("a retry policy") };
/// assert_eq!(retry.initial_backoff, Duration::from_millis(100));
/// assert!(config.method("other.Service", "Method").is_none());
/// assert_eq!(config.retry_throttling().map(|t| t.max_tokens), Some(10));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ServiceConfig {
    methods: Vec<MethodConfig>,
    /// Each `(service, method)` name to its entry in `methods`.
    index: BTreeMap<(String, String), usize>,
    throttling: Option<Throttling>,
}

/// One `methodConfig` entry: the methods it names, and what applies to them.
#[derive(Debug, Clone, PartialEq)]
pub struct MethodConfig {
    /// The methods it applies to; an empty [`Name`] is every method of every service.
    pub name: Vec<Name>,
    /// How calls to these methods are retried or hedged; `None` for neither.
    pub policy: Option<Policy>,
    /// The longest a call may take, all its attempts included; `None` for no timeout.
    pub timeout: Option<Duration>,
}

/// The policy of a method: gRPC A6 gives a method a retry policy or a hedging policy, never
/// both.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Policy {
    /// `retryPolicy`.
    Retry(RetryPolicy),
    /// `hedgingPolicy`.
    Hedging(HedgingPolicy),
}

/// A name in a `methodConfig` entry: a service (`"pkg.Service"`) and a method of it, where an
/// empty method is every method of the service, and an empty service every service.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Name {
    /// The full service name, package included; empty for every service.
    pub service: String,
    /// The method name; empty for every method of the service.
    pub method: String,
}

/// Why a service config is rejected.
///
/// # Examples
///
/// ```
/// use ironward::grpc::{ConfigError, PolicyError};
///
/// let error = ConfigError::RetryPolicy(PolicyError::NoRetryableCodes);
/// assert_eq!(error.to_string(), "invalid retry policy: retryable status codes must not be empty");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConfigError {
    /// A `retryPolicy` breaks a rule of gRPC A6.
    RetryPolicy(PolicyError),
    /// A `hedgingPolicy` breaks a rule of gRPC A6.
    HedgingPolicy(PolicyError),
    /// `retryThrottling` breaks a rule of gRPC A6.
    RetryThrottling(PolicyError),
    /// An entry has both a `retryPolicy` and a `hedgingPolicy`, which A6 forbids.
    BothPolicies,
    /// Two names (in one entry or in two) are the same service and method (grpc-go:
    /// "duplicated name").
    DuplicateName,
    /// A name has a method but no service, which names nothing (grpc-go: "cannot combine
    /// empty 'service' and non-empty 'method'").
    MethodWithoutService,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::RetryPolicy(e) => write!(f, "invalid retry policy: {e}"),
            Self::HedgingPolicy(e) => write!(f, "invalid hedging policy: {e}"),
            Self::RetryThrottling(e) => write!(f, "invalid retry throttling: {e}"),
            Self::BothPolicies => f.write_str("a method has both a retry and a hedging policy"),
            Self::DuplicateName => f.write_str("a method name is given twice"),
            Self::MethodWithoutService => f.write_str("a method name has no service"),
        }
    }
}

impl core::error::Error for ConfigError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::RetryPolicy(e) | Self::HedgingPolicy(e) | Self::RetryThrottling(e) => Some(e),
            _ => None,
        }
    }
}

impl ServiceConfig {
    /// A service config of these entries and this throttling, validated as one read from JSON
    /// is.
    ///
    /// # Errors
    ///
    /// The first rule broken, in the order of the entries and then the throttling.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::grpc::{ConfigError, MethodConfig, Name, ServiceConfig};
    ///
    /// let entry = MethodConfig { name: vec![Name::default()], policy: None, timeout: None };
    /// let twice = ServiceConfig::new(vec![entry.clone(), entry], None);
    /// assert_eq!(twice, Err(ConfigError::DuplicateName));
    /// ```
    pub fn new(
        methods: Vec<MethodConfig>,
        throttling: Option<Throttling>,
    ) -> Result<Self, ConfigError> {
        let mut index = BTreeMap::new();
        for (at, entry) in methods.iter().enumerate() {
            match entry.policy {
                Some(Policy::Retry(retry)) => retry.validate().map_err(ConfigError::RetryPolicy)?,
                Some(Policy::Hedging(hedging)) => {
                    hedging.validate().map_err(ConfigError::HedgingPolicy)?;
                }
                None => {}
            }
            for name in &entry.name {
                if name.service.is_empty() && !name.method.is_empty() {
                    return Err(ConfigError::MethodWithoutService);
                }
                let key = (name.service.clone(), name.method.clone());
                if index.insert(key, at).is_some() {
                    return Err(ConfigError::DuplicateName);
                }
            }
        }
        if let Some(throttling) = throttling {
            throttling
                .validate()
                .map_err(ConfigError::RetryThrottling)?;
        }
        Ok(Self {
            methods,
            index,
            throttling,
        })
    }

    /// The entry that applies to `service`'s `method`: the one naming both, else the one
    /// naming the service alone, else the default (an empty name); `None` when none does.
    #[must_use]
    pub fn method(&self, service: &str, method: &str) -> Option<&MethodConfig> {
        let find = |service: &str, method: &str| {
            // A `BTreeMap` of owned keys is searched by building one: a lookup allocates two
            // short strings, once per call, not per attempt.
            let key = (String::from(service), String::from(method));
            self.index.get(&key).map(|&at| &self.methods[at])
        };
        find(service, method)
            .or_else(|| find(service, ""))
            .or_else(|| find("", ""))
    }

    /// Every `methodConfig` entry, in the order written.
    #[must_use]
    pub fn methods(&self) -> &[MethodConfig] {
        &self.methods
    }

    /// The channel's retry throttling, if the config sets it: one
    /// [`Budget`](crate::Budget) ([`Throttling::budget`]) for every call to the server.
    #[must_use]
    pub fn retry_throttling(&self) -> Option<Throttling> {
        self.throttling
    }
}

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

/// A protobuf JSON duration (`"1.5s"`), non-negative; see [`ServiceConfig`] for the rules.
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

/// A protobuf JSON duration as serde reads it.
struct ProtoDuration(Duration);

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
    /// A `retryPolicy` as the service config writes it, validated (see [`ServiceConfig`]).
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        RetryPolicy::try_from(RawRetry::deserialize(deserializer)?)
            .map_err(|e| de::Error::custom(ConfigError::RetryPolicy(e)))
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
    /// A `hedgingPolicy` as the service config writes it, validated (see [`ServiceConfig`]).
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        HedgingPolicy::try_from(RawHedging::deserialize(deserializer)?)
            .map_err(|e| de::Error::custom(ConfigError::HedgingPolicy(e)))
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

#[derive(Deserialize)]
struct RawName {
    #[serde(default)]
    service: Option<String>,
    #[serde(default)]
    method: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawMethod {
    #[serde(default)]
    name: Option<Vec<RawName>>,
    #[serde(alias = "retry_policy")]
    retry_policy: Option<RetryPolicy>,
    #[serde(alias = "hedging_policy")]
    hedging_policy: Option<HedgingPolicy>,
    timeout: Option<ProtoDuration>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawConfig {
    #[serde(alias = "method_config")]
    method_config: Option<Vec<RawMethod>>,
    #[serde(alias = "retry_throttling")]
    retry_throttling: Option<Throttling>,
}

impl<'de> Deserialize<'de> for ServiceConfig {
    /// A service config's JSON, validated (see [`ServiceConfig`]).
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = RawConfig::deserialize(deserializer)?;
        let mut methods = Vec::new();
        for entry in raw.method_config.unwrap_or_default() {
            let policy = match (entry.retry_policy, entry.hedging_policy) {
                (Some(_), Some(_)) => return Err(de::Error::custom(ConfigError::BothPolicies)),
                (Some(retry), None) => Some(Policy::Retry(retry)),
                (None, Some(hedging)) => Some(Policy::Hedging(hedging)),
                (None, None) => None,
            };
            let name = entry
                .name
                .unwrap_or_default()
                .into_iter()
                .map(|n| Name {
                    service: n.service.unwrap_or_default(),
                    method: n.method.unwrap_or_default(),
                })
                .collect();
            methods.push(MethodConfig {
                name,
                policy,
                timeout: entry.timeout.map(|d| d.0),
            });
        }
        ServiceConfig::new(methods, raw.retry_throttling).map_err(de::Error::custom)
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
}
