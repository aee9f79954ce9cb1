//! gRPC retries and hedging by gRPC proposal A6 ("gRPC Retry Design"), without I/O.
//!
//! A6 gives a method one of two policies: a [`RetryPolicy`] sends an attempt, and after a
//! retryable failure another, with an exponential backoff between them; a [`HedgingPolicy`]
//! sends several attempts a [`hedging_delay`](HedgingPolicy::hedging_delay) apart and keeps
//! the first that answers. Both are throttled per server by a [`Budget`](crate::Budget)
//! ([`Throttling`], A6's `retryThrottling`), honour the server's pushback
//! (`grpc-retry-pushback-ms`, read by [`Pushback`]), stop at the call's deadline, and never
//! make more than [`MAX_ATTEMPTS`] attempts.
//!
//! As everywhere in the core, nothing here sends, sleeps, reads a clock or draws a number: a
//! [`RetryPlan`] or a [`HedgingPlan`] is told what happened (the [`AttemptEnd`] of an attempt, the
//! clock reading `now`, a draw from `[0, 1)`, the budget) and answers what to do next. The
//! caller (a tower layer, a test) sends, waits and cancels.
//!
//! | piece | answers |
//! | --- | --- |
//! | [`Code`], [`Codes`] | the 17 status codes, by number and by their service config names; a set of them |
//! | [`RetryPolicy`], [`HedgingPolicy`], [`Throttling`] | A6's policy records, each with its validation ([`PolicyError`]) |
//! | [`RetryPlan`] | after each attempt: done, wait this long ([`RetryStep::Wait`]), or stop, and why ([`Halt`]) |
//! | [`HedgingPlan`] | when the next hedge is due, and on each outcome which attempt the call commits to and which to cancel |
//! | [`ServiceConfig`] (feature `serde`) | the service config's `methodConfig` and `retryThrottling`, validated as they are read, and the policy for a method |
//!
//! # Where this follows grpc-go, and where it differs
//!
//! The retry decision is grpc-go's `csAttempt.shouldRetry` (`stream.go`) step for step (see
//! [`RetryPlan`]), and validation is grpc-go's `service_config.go`. grpc-go does not
//! implement hedging; the [`HedgingPlan`] follows A6's text ("Hedging Policy", "Summary of
//! Retry and Hedging Logic"). The deliberate differences:
//!
//! - **The deadline is checked before the wait.** grpc-go sleeps the backoff and only then
//!   finds the deadline passed (its `TODO(dfawley)`); a plan stops at once with
//!   [`Halt::Deadline`] when the next attempt would start at or after the deadline. The call
//!   ends with the same status, sooner.
//! - **The backoff is rounded to the nearest nanosecond**, where grpc-go truncates its
//!   `float64` product; the two differ by under a nanosecond.
//! - **The jitter is A6's `random(0.8, 1.2)`** ([`A6_JITTER`]), as A6 reads today and
//!   grpc-go draws it; A6 first wrote `random(0, ceiling)`, which [`RetryPlan::with_jitter`]
//!   with [`Jitter::Full`](crate::Jitter::Full) gives. Under `random(0.8, 1.2)` a wait may
//!   pass `maxBackoff` by a fifth, as A6 notes; under full jitter it never passes it.
//! - **Status code names are read in any case** (A6: "the case-insensitive string form");
//!   grpc-go reads only the upper-case names.
//! - **Service config keys are the proto JSON names** (`maxAttempts`, or the proto field's
//!   own `max_attempts`), where grpc-go's `encoding/json` also matches any other case
//!   (`MaxAttempts`). `maxTokens` must be a whole number, as A6 says, where grpc-go reads a
//!   float. A duration must be non-negative, as every duration in a policy is.
//! - **`tokenRatio` is truncated to three decimal places** as A6 says ([`Budget`](crate::Budget)
//!   does it); grpc-go keeps every decimal. A ratio that truncates to zero is rejected.
//! - **Durations up to A6's 315 576 000 000 s are held exactly**, where grpc-go clamps any
//!   past Go's largest duration (about 292 years) to it.
//! - **Transparent retries** (A6: an attempt the server never saw, retried without counting)
//!   are the transport's to detect and are not part of a plan: the caller resends such an
//!   attempt without reporting it.
//! - **An outcome after the end** (a [`RetryPlan`] that has answered `Done` or `Halt`) answers
//!   [`Halt::Committed`] and counts nothing, rather than deciding a call twice.
//!
//! Where A6 is silent on hedging, and grpc-go has nothing to follow, a [`HedgingPlan`]:
//!
//! - counts the next hedge's delay from when the last one was actually sent, so a late
//!   [`send`](HedgingPlan::send) delays the rest rather than bunching them;
//! - ends the hedging when a due hedge is throttled (A6: "the hedged request is cancelled"),
//!   rather than trying again at the next delay;
//! - reads an attempt's response headers ([`commit`](HedgingPlan::commit)) as A6's commit: the
//!   call takes that attempt, whatever it ends with, and cancels the others;
//! - counts a non-fatal failure whose pushback also said stop as one failure, not two (A6
//!   counts each reason, a pushback that says stop on a fatal code included).
//!
//! # Budgets
//!
//! Every decision takes the channel's budget as `Option<&mut Budget>` (`None`: the service
//! config sets no `retryThrottling`), and has a `_shared` twin taking a
//! [`SharedBudget`](crate::SharedBudget), which many calls share by `&` without a lock: the
//! same decision, the budget told and asked alike.
//!
//! # Draws
//!
//! A draw outside `[0, 1)` is read as everywhere in the core: NaN and negatives as 0, 1 and
//! above (infinity included) as the largest `f64` below 1. So a NaN draw waits the shortest
//! backoff, never panics, and never waits longer than a draw in range could.
//!
//! # Examples
//!
//! ```
//! use core::time::Duration;
//! use ironward::Budget;
//! use ironward::grpc::{AttemptEnd, Code, Halt, RETRY_POLICY, RetryPlan, RetryStep};
//!
//! let ms = Duration::from_millis;
//! let mut budget = Budget::default();
//! let mut plan = RetryPlan::new(&RETRY_POLICY, None, ms(0))?;
//! let mut now = ms(0);
//! // Every attempt fails with UNAVAILABLE: four attempts, then the policy is spent.
//! let waits: Vec<_> = core::iter::from_fn(|| {
//!     now += ms(5);
//!     match plan.on_outcome(AttemptEnd::new(Code::Unavailable), now, 0.5, Some(&mut budget)) {
//!         RetryStep::Wait(wait) => { now += wait; Some(Ok(wait)) }
//!         RetryStep::Halt(stop) => Some(Err(stop)),
//!         RetryStep::Done => None,
//!     }
//! })
//! .take_while(Result::is_ok)
//! .collect();
//! assert_eq!(waits, [Ok(ms(100)), Ok(ms(200)), Ok(ms(400))]);
//! assert_eq!(plan.attempts(), 4);
//! # Ok::<(), ironward::grpc::PolicyError>(())
//! ```

mod code;
#[cfg(feature = "serde")]
mod config;
mod error;
mod hedge;
#[cfg(feature = "serde")]
mod json;
mod outcome;
mod policy;
mod retry;

pub use code::{Code, Codes, UnknownCode};
#[cfg(feature = "serde")]
#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
pub use config::{MethodConfig, Name, Policy, ServiceConfig};
pub use error::ConfigError;
pub use hedge::{Attempts, Ending, Hedge, HedgingPlan, Verdict};
pub use outcome::{AttemptEnd, Halt, PREVIOUS_ATTEMPTS, PUSHBACK, Pushback};
pub use policy::{
    HEDGING_POLICY, HedgingPolicy, MAX_ATTEMPTS, PolicyError, RETRY_POLICY, RetryPolicy, Throttling,
};
pub use retry::{A6_JITTER, RetryPlan, RetryStep};
