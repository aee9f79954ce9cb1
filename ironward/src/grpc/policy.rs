//! The policy records of gRPC A6: [`RetryPolicy`], [`HedgingPolicy`] and [`Throttling`], and
//! the one error their validation answers, [`PolicyError`].

use core::fmt;
use core::time::Duration;

use super::code::{Code, Codes};
use crate::Budget;

/// The most attempts a call makes, whatever a policy asks: gRPC A6's client-side maximum.
///
/// A6 caps `maxAttempts` at 5 "without being considered a validation error", because a service
/// config can reach the client through DNS and must not make it multiply its traffic (grpc-go's
/// `defaultMaxCallAttempts`).
pub const MAX_ATTEMPTS: u32 = 5;

/// The most tokens a throttling policy may hold: A6 bounds `maxTokens` to `(0, 1000]`.
const MOST_TOKENS: u32 = 1000;

/// The retry policy of one method: how many attempts, how long between them, and which status
/// codes are worth another attempt.
///
/// The `retryPolicy` of gRPC proposal A6 field for field. A policy is a plain record; it is
/// checked by [`validate`](RetryPolicy::validate), which [`RetryPlan::new`](super::RetryPlan::new)
/// calls, so an invalid policy is an error before the first attempt rather than a guess after
/// it. With the `serde` feature it is read and written in the service config's JSON form,
/// `{"maxAttempts": 4, "initialBackoff": "0.1s", ...}`, and validated as it is read.
///
/// # Default
///
/// A6's example policy ([`RETRY_POLICY`]):
///
/// | field | value | A6 writes |
/// | --- | --- | --- |
/// | `max_attempts` | 4 | `"maxAttempts": 4` |
/// | `initial_backoff` | 100 ms | `"initialBackoff": "0.1s"` |
/// | `max_backoff` | 1 s | `"maxBackoff": "1s"` |
/// | `backoff_multiplier` | 2.0 | `"backoffMultiplier": 2` |
/// | `retryable_status_codes` | `UNAVAILABLE` | `"retryableStatusCodes": ["UNAVAILABLE"]` |
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::grpc::{Code, Codes, PolicyError, RETRY_POLICY, RetryPolicy};
///
/// let policy = RetryPolicy { max_attempts: 9, ..RETRY_POLICY };
/// assert_eq!(policy.validate(), Ok(()));
/// assert_eq!(policy.attempts(), 5, "A6 reads more than 5 as 5");
///
/// let empty = RetryPolicy { retryable_status_codes: Codes::EMPTY, ..RETRY_POLICY };
/// assert_eq!(empty.validate(), Err(PolicyError::NoRetryableCodes));
/// assert!(RETRY_POLICY.retryable_status_codes.contains(Code::Unavailable));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryPolicy {
    /// The most attempts, the first included: at least 2; above [`MAX_ATTEMPTS`] is read as
    /// 5.
    pub max_attempts: u32,
    /// The ceiling of the first retry's backoff; above zero.
    pub initial_backoff: Duration,
    /// The most any backoff's ceiling grows to; above zero.
    pub max_backoff: Duration,
    /// What each retry multiplies the ceiling by; above zero and finite (below 1 shrinks it,
    /// as A6 and grpc-go allow).
    pub backoff_multiplier: f64,
    /// The codes that are retried; not empty.
    pub retryable_status_codes: Codes,
}

/// gRPC A6's example retry policy; [`RetryPolicy::default`] is this value.
pub const RETRY_POLICY: RetryPolicy = RetryPolicy {
    max_attempts: 4,
    initial_backoff: Duration::from_millis(100),
    max_backoff: Duration::from_secs(1),
    backoff_multiplier: 2.0,
    retryable_status_codes: Codes::of(&[Code::Unavailable]),
};

impl Default for RetryPolicy {
    /// gRPC A6's example, [`RETRY_POLICY`].
    fn default() -> Self {
        RETRY_POLICY
    }
}

impl RetryPolicy {
    /// Whether the policy is one gRPC A6 accepts, and if not, the first rule it breaks.
    ///
    /// The rules of A6's "Validation of retryPolicy", as grpc-go's `service_config.go`
    /// applies them: `maxAttempts` at least 2, both backoffs above zero, the multiplier above
    /// zero (and finite: JSON cannot write anything else), and at least one retryable code.
    #[must_use = "a policy that is not valid retries by no rule"]
    pub fn validate(&self) -> Result<(), PolicyError> {
        attempts(self.max_attempts)?;
        if self.initial_backoff.is_zero() {
            return Err(PolicyError::InitialBackoff);
        }
        if self.max_backoff.is_zero() {
            return Err(PolicyError::MaxBackoff);
        }
        // `!(x > 0)` rather than `x <= 0` so that NaN is refused too.
        if !(self.backoff_multiplier > 0.0 && self.backoff_multiplier.is_finite()) {
            return Err(PolicyError::BackoffMultiplier);
        }
        if self.retryable_status_codes.is_empty() {
            return Err(PolicyError::NoRetryableCodes);
        }
        Ok(())
    }

    /// The most attempts a call makes under this policy: `max_attempts` capped at
    /// [`MAX_ATTEMPTS`].
    #[must_use]
    pub fn attempts(&self) -> u32 {
        self.max_attempts.min(MAX_ATTEMPTS)
    }
}

/// The hedging policy of one method: how many attempts in parallel, how far apart, and which
/// status codes let the others carry on.
///
/// The `hedgingPolicy` of gRPC proposal A6: the first attempt goes at once, another after each
/// `hedging_delay` without an answer, up to `max_attempts`; the first success or fatal code
/// ends the call. A zero delay (A6: `"0s"`, or the field left out) sends every attempt at
/// once. With the `serde` feature it is read and written in the service config's JSON form,
/// validated as it is read.
///
/// # Default
///
/// A6's example policy ([`HEDGING_POLICY`]): `maxAttempts` 4, `hedgingDelay` `"0.5s"`,
/// `nonFatalStatusCodes` `UNAVAILABLE`, `INTERNAL`, `ABORTED`.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::grpc::{Code, HEDGING_POLICY, HedgingPolicy, PolicyError};
///
/// assert_eq!(HEDGING_POLICY.hedging_delay, Duration::from_millis(500));
/// assert!(HEDGING_POLICY.non_fatal_status_codes.contains(Code::Aborted));
/// let once = HedgingPolicy { max_attempts: 1, ..HEDGING_POLICY };
/// assert_eq!(once.validate(), Err(PolicyError::MaxAttempts));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HedgingPolicy {
    /// The most attempts, the first included: at least 2; above [`MAX_ATTEMPTS`] is read as
    /// 5.
    pub max_attempts: u32,
    /// How long after one attempt the next is sent while none has answered; zero sends all
    /// at once.
    pub hedging_delay: Duration,
    /// The codes that fail one attempt without ending the call; may be empty.
    pub non_fatal_status_codes: Codes,
}

/// gRPC A6's example hedging policy; [`HedgingPolicy::default`] is this value.
pub const HEDGING_POLICY: HedgingPolicy = HedgingPolicy {
    max_attempts: 4,
    hedging_delay: Duration::from_millis(500),
    non_fatal_status_codes: Codes::of(&[Code::Unavailable, Code::Internal, Code::Aborted]),
};

impl Default for HedgingPolicy {
    /// gRPC A6's example, [`HEDGING_POLICY`].
    fn default() -> Self {
        HEDGING_POLICY
    }
}

impl HedgingPolicy {
    /// Whether the policy is one gRPC A6 accepts: `maxAttempts` at least 2 (A6's "Validation
    /// of hedgingPolicy"; the delay and the codes may be anything).
    #[must_use = "a policy that is not valid hedges by no rule"]
    pub fn validate(&self) -> Result<(), PolicyError> {
        attempts(self.max_attempts).map(|_| ())
    }

    /// The most attempts a call makes under this policy: `max_attempts` capped at
    /// [`MAX_ATTEMPTS`].
    #[must_use]
    pub fn attempts(&self) -> u32 {
        self.max_attempts.min(MAX_ATTEMPTS)
    }
}

/// Retry throttling for every call to one server: the `retryThrottling` of gRPC A6, which
/// becomes a [`Budget`]. With the `serde` feature it is read and written in the service
/// config's JSON form, `{"maxTokens": 10, "tokenRatio": 0.1}`, validated as it is read.
///
/// # Default
///
/// A6's example: `maxTokens` 10, `tokenRatio` 0.1 (what [`Budget::default`] holds).
///
/// # Examples
///
/// ```
/// use ironward::grpc::{PolicyError, Throttling};
///
/// let throttling = Throttling { max_tokens: 10, token_ratio: 0.5466 };
/// assert_eq!(throttling.budget().map(|b| b.token_ratio()), Ok(0.546));
/// let none = Throttling { max_tokens: 0, ..throttling };
/// assert_eq!(none.budget(), Err(PolicyError::MaxTokens));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Throttling {
    /// The tokens the budget holds and starts with: in `1..=1000`.
    pub max_tokens: u32,
    /// The tokens a successful call gives back, truncated to three decimal places: at least
    /// 0.001 once truncated.
    pub token_ratio: f64,
}

impl Default for Throttling {
    /// gRPC A6's example: 10 tokens, 0.1 back per success.
    fn default() -> Self {
        Throttling {
            max_tokens: 10,
            token_ratio: 0.1,
        }
    }
}

impl Throttling {
    /// Whether A6 accepts the policy: `maxTokens` in `(0, 1000]` and a `tokenRatio` above
    /// zero once truncated to three decimal places (so 0.0005, which [`Budget`] would read as
    /// 0, is an error here rather than a budget that never refills).
    #[must_use = "a policy that is not valid throttles by no rule"]
    pub fn validate(&self) -> Result<(), PolicyError> {
        if self.max_tokens == 0 || self.max_tokens > MOST_TOKENS {
            return Err(PolicyError::MaxTokens);
        }
        let finite = self.token_ratio.is_finite();
        if !finite || Budget::new(self.max_tokens, self.token_ratio).token_ratio() <= 0.0 {
            return Err(PolicyError::TokenRatio);
        }
        Ok(())
    }

    /// A full budget for this policy, or the rule it breaks.
    #[must_use = "a budget that is not kept throttles nothing"]
    pub fn budget(&self) -> Result<Budget, PolicyError> {
        self.validate()?;
        Ok(Budget::new(self.max_tokens, self.token_ratio))
    }
}

/// `max_attempts` as a policy may hold it: at least 2, capped at 5.
fn attempts(max_attempts: u32) -> Result<u32, PolicyError> {
    if max_attempts < 2 {
        Err(PolicyError::MaxAttempts)
    } else {
        Ok(max_attempts.min(MAX_ATTEMPTS))
    }
}

/// Why gRPC A6 rejects a policy: the rule it breaks.
///
/// # Examples
///
/// ```
/// use ironward::grpc::PolicyError;
///
/// assert_eq!(PolicyError::MaxAttempts.to_string(), "max attempts must be at least 2");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PolicyError {
    /// `maxAttempts` below 2: a policy of one attempt retries nothing, and A6 requires more.
    MaxAttempts,
    /// `initialBackoff` of zero (or, in a service config, negative).
    InitialBackoff,
    /// `maxBackoff` of zero (or, in a service config, negative).
    MaxBackoff,
    /// `backoffMultiplier` zero, negative, NaN or infinite.
    BackoffMultiplier,
    /// `retryableStatusCodes` empty: grpc-go rejects such a policy, as it could retry nothing.
    NoRetryableCodes,
    /// `maxTokens` outside `(0, 1000]`, or not a whole number.
    MaxTokens,
    /// `tokenRatio` not above zero at three decimal places, or not finite.
    TokenRatio,
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::MaxAttempts => "max attempts must be at least 2",
            Self::InitialBackoff => "initial backoff must be above zero",
            Self::MaxBackoff => "max backoff must be above zero",
            Self::BackoffMultiplier => "backoff multiplier must be above zero and finite",
            Self::NoRetryableCodes => "retryable status codes must not be empty",
            Self::MaxTokens => "max tokens must be a whole number in (0, 1000]",
            Self::TokenRatio => "token ratio must be at least 0.001",
        })
    }
}

impl core::error::Error for PolicyError {}

#[cfg(test)]
mod tests {
    use super::*;

    // grpc-go `service_config_test.go`, `TestParseRetryPolicy` (its invalid cases, as
    // records): each breaks one rule.
    #[test]
    fn each_rule_of_a6_has_its_error() {
        let ms = Duration::from_millis;
        let cases = [
            (
                RetryPolicy {
                    max_attempts: 0,
                    ..RETRY_POLICY
                },
                PolicyError::MaxAttempts,
            ),
            (
                RetryPolicy {
                    max_attempts: 1,
                    ..RETRY_POLICY
                },
                PolicyError::MaxAttempts,
            ),
            (
                RetryPolicy {
                    initial_backoff: ms(0),
                    ..RETRY_POLICY
                },
                PolicyError::InitialBackoff,
            ),
            (
                RetryPolicy {
                    max_backoff: ms(0),
                    ..RETRY_POLICY
                },
                PolicyError::MaxBackoff,
            ),
            (
                RetryPolicy {
                    backoff_multiplier: 0.0,
                    ..RETRY_POLICY
                },
                PolicyError::BackoffMultiplier,
            ),
            (
                RetryPolicy {
                    retryable_status_codes: Codes::EMPTY,
                    ..RETRY_POLICY
                },
                PolicyError::NoRetryableCodes,
            ),
        ];
        for (policy, error) in cases {
            assert_eq!(policy.validate(), Err(error), "{policy:?}");
        }
        for m in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -1.0] {
            let policy = RetryPolicy {
                backoff_multiplier: m,
                ..RETRY_POLICY
            };
            assert_eq!(policy.validate(), Err(PolicyError::BackoffMultiplier));
        }
        let shrinking = RetryPolicy {
            backoff_multiplier: 0.5,
            ..RETRY_POLICY
        };
        assert_eq!(shrinking.validate(), Ok(()));
    }

    // gRPC A6: "Values greater than 5 are treated as 5 without being considered a validation
    // error"; grpc-go `test/retry_test.go`, `TestMaxCallAttempts` (the default maximum of 5).
    #[test]
    fn more_than_five_attempts_are_read_as_five() {
        for (asked, made) in [(2, 2), (5, 5), (6, 5), (8, 5), (u32::MAX, 5)] {
            let retry = RetryPolicy {
                max_attempts: asked,
                ..RETRY_POLICY
            };
            assert_eq!((retry.validate(), retry.attempts()), (Ok(()), made));
            let hedging = HedgingPolicy {
                max_attempts: asked,
                ..HEDGING_POLICY
            };
            assert_eq!((hedging.validate(), hedging.attempts()), (Ok(()), made));
        }
    }

    // grpc-go `service_config.go`: maxTokens in (0, 1000], tokenRatio above 0.
    #[test]
    fn throttling_is_held_to_what_a6_allows() {
        let t = |max_tokens, token_ratio| Throttling {
            max_tokens,
            token_ratio,
        };
        assert_eq!(t(1, 0.001).validate(), Ok(()));
        assert_eq!(t(1000, 1000.0).validate(), Ok(()));
        assert_eq!(t(0, 0.1).validate(), Err(PolicyError::MaxTokens));
        assert_eq!(t(1001, 0.1).validate(), Err(PolicyError::MaxTokens));
        for ratio in [0.0, -0.1, 0.0009, f64::NAN, f64::INFINITY] {
            assert_eq!(
                t(10, ratio).validate(),
                Err(PolicyError::TokenRatio),
                "{ratio}"
            );
        }
        assert_eq!(t(10, 0.5466).budget().unwrap().token_ratio(), 0.546);
    }
}
