//! Why a service config is rejected: [`ConfigError`].

use core::fmt;

use super::policy::PolicyError;

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
