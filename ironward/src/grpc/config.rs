//! [`ServiceConfig`]: the retry and hedging parts of a gRPC service config, read from its JSON
//! (feature `serde`).

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;
use core::time::Duration;

use serde::de::{self, Deserializer};
use serde::ser::{SerializeStruct, Serializer};
use serde::{Deserialize, Serialize};

use super::error::ConfigError;
use super::json::{Proto, ProtoDuration};
use super::policy::{HedgingPolicy, RetryPolicy, Throttling};

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
/// Written back (`Serialize`), it is the same JSON form with only these parts: durations as
/// `"0.1s"`, codes by name, empty names left out. What is written reads back as an equal
/// config; a duration past the protobuf range is an error rather than a string that would not.
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

impl Serialize for ServiceConfig {
    /// The service config's JSON, `methodConfig` and `retryThrottling` only: what
    /// [`Deserialize`] reads back as an equal config.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut out = serializer.serialize_struct("ServiceConfig", 2)?;
        out.serialize_field("methodConfig", &self.methods)?;
        match &self.throttling {
            Some(throttling) => out.serialize_field("retryThrottling", throttling)?,
            None => out.skip_field("retryThrottling")?,
        }
        out.end()
    }
}

impl Serialize for MethodConfig {
    /// One `methodConfig` entry: `name`, the policy under its key, and `timeout` if set.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut out = serializer.serialize_struct("MethodConfig", 3)?;
        out.serialize_field("name", &self.name)?;
        match &self.policy {
            Some(Policy::Retry(retry)) => out.serialize_field("retryPolicy", retry)?,
            Some(Policy::Hedging(hedging)) => out.serialize_field("hedgingPolicy", hedging)?,
            None => out.skip_field("retryPolicy")?,
        }
        match self.timeout {
            Some(timeout) => out.serialize_field("timeout", &Proto(timeout))?,
            None => out.skip_field("timeout")?,
        }
        out.end()
    }
}

impl Serialize for Name {
    /// `{"service": ..., "method": ...}`, leaving out what is empty (`{}` is the default).
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut out = serializer.serialize_struct("Name", 2)?;
        for (key, value) in [("service", &self.service), ("method", &self.method)] {
            if value.is_empty() {
                out.skip_field(key)?;
            } else {
                out.serialize_field(key, value)?;
            }
        }
        out.end()
    }
}
