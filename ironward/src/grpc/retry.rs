//! [`RetryPlan`]: one call's retries under a gRPC A6 retry policy.

use core::time::Duration;

use super::code::Code;
use super::outcome::{AttemptEnd, Halt, Pushback};
use super::policy::{PolicyError, RetryPolicy};
#[cfg(target_has_atomic = "64")]
use crate::SharedBudget;
use crate::budget::Teller;
use crate::internal::float::{duration, nanos_f64, powi, round_nanos};
use crate::retry::room::fits;
use crate::{Backoff, Budget, Jitter};

/// The jitter gRPC A6 applies to a retry's backoff: the ceiling times `random(0.8, 1.2)`, as
/// A6 writes it today and grpc-go's `stream.go` draws it. [`RetryPlan::with_jitter`] takes
/// [`Jitter::Full`] for the original A6 text, `random(0, ceiling)`.
pub const A6_JITTER: Jitter = Jitter::Spread(0.2);

/// What to do after an attempt: the call is done, wait and send it again, or stop.
#[must_use = "a step that is not followed leaves the call neither retried nor ended"]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RetryStep {
    /// The attempt succeeded: return its response.
    Done,
    /// Wait this long, then send the next attempt (with
    /// [`previous_attempts`](RetryPlan::previous_attempts) in `grpc-previous-rpc-attempts`).
    Wait(Duration),
    /// Make no further attempt, for this reason: return the last attempt's status.
    Halt(Halt),
}

/// One call's retries under a gRPC A6 retry policy, from its first attempt to its last.
///
/// Sans-I/O: the caller sends each attempt, and reports how it ended to
/// [`on_outcome`](RetryPlan::on_outcome) with the clock reading, a draw from `[0, 1)` and the
/// channel's retry [`Budget`] (`None` when the service config sets no `retryThrottling`). The
/// plan answers [`RetryStep::Done`], [`RetryStep::Wait`] or [`RetryStep::Halt`], in the order grpc-go's
/// `csAttempt.shouldRetry` (`stream.go`) decides:
///
/// 1. `OK` ends the call, and gives the budget its `tokenRatio` back.
/// 2. A committed call (its response headers arrived) is never retried, and counts nothing.
/// 3. A pushback that says stop (negative, malformed, repeated) stops, counted as a failure.
/// 4. A code the policy does not retry stops, and is not counted: a malformed request is not
///    a sign of an overloaded server.
/// 5. A retryable code takes a token; if that leaves the budget at or below half, stop.
/// 6. After the policy's attempts (at most 5), stop.
/// 7. The wait is the pushback, exactly, if the server sent one, and then the backoff starts
///    again from its first step; otherwise A6's backoff: the `n`-th retry since the last
///    pushback has the ceiling `min(initialBackoff · multiplier^(n−1), maxBackoff)`, drawn
///    by [`A6_JITTER`] (or the jitter chosen by [`with_jitter`](RetryPlan::with_jitter)).
/// 8. A wait that would start the next attempt at or after the call's deadline stops.
///
/// # Not the retry engine
///
/// The core's [`retry::Engine`](crate::retry::Engine) keeps the rules the HTTP loop and a
/// generic loop share; A6 differs from them in the budget's place in the order (asked before
/// the attempts are counted), in a pushback that replaces the backoff exactly and restarts
/// it, in A6's own `f64` ceiling and in a plan that ends. So the plan shares the engine's
/// pieces rather than its order: the budget teller, and the fit of a wait to what is left
/// near `Duration::MAX` (a deadline is a time budget with no reserve). The
/// [`retry`](crate::retry#why-the-grpc-plan-is-not-an-engine) module says why at length.
///
/// # Edge cases
///
/// The draw is read as everywhere in the core: NaN and negatives are 0, 1 and above just
/// below 1. A `now` earlier than one already seen is read as the latest seen. Waits saturate at
/// `Duration::MAX`, and a wait that would end past `Duration::MAX` ends at it, so a deadline
/// there is never passed by overflow. Once the plan has answered `Done` or `Halt`, every later
/// outcome answers `Halt(Committed)` and touches no budget.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::Budget;
/// use ironward::grpc::{AttemptEnd, Code, Halt, RETRY_POLICY, RetryPlan, RetryStep};
///
/// let ms = Duration::from_millis;
/// let mut budget = Budget::new(10, 0.1);
/// let deadline = Some(ms(5_000));
/// let mut plan = RetryPlan::new(&RETRY_POLICY, deadline, ms(0))?;
/// assert_eq!(plan.previous_attempts(), 0);
///
/// // UNAVAILABLE is retryable: the first retry's ceiling is 100 ms, drawn within ±20 %.
/// let step = plan.on_outcome(AttemptEnd::new(Code::Unavailable), ms(10), 0.5, Some(&mut budget));
/// assert_eq!(step, RetryStep::Wait(ms(100)));
/// assert_eq!(plan.previous_attempts(), 1);
///
/// // The server pushes back 2 s: the retry waits exactly that.
/// let pushed = AttemptEnd { pushback: &["2000"], ..AttemptEnd::new(Code::Unavailable) };
/// assert_eq!(plan.on_outcome(pushed, ms(120), 0.5, Some(&mut budget)), RetryStep::Wait(ms(2000)));
///
/// // INVALID_ARGUMENT is not retryable.
/// let invalid = AttemptEnd::new(Code::InvalidArgument);
/// let step = plan.on_outcome(invalid, ms(2200), 0.5, Some(&mut budget));
/// assert_eq!(step, RetryStep::Halt(Halt::NotRetryable));
/// assert_eq!(budget.tokens(), 8.0, "two retryable failures took a token each");
/// # Ok::<(), ironward::grpc::PolicyError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPlan {
    policy: RetryPolicy,
    /// The policy's attempts, capped at 5.
    most: u32,
    /// Attempts made so far, the one in flight included.
    made: u32,
    /// Backoff retries since the last pushback: grpc-go's `numRetriesSincePushback`.
    since_pushback: u32,
    deadline: Option<Duration>,
    jitter: Jitter,
    /// The latest `now` seen.
    latest: Duration,
    /// Whether the plan has answered `Done` or `Halt`.
    ended: bool,
}

impl RetryPlan {
    /// The plan of a call whose first attempt is sent at `now`, under `policy`, ending at
    /// `deadline` on the caller's clock (`None`: no deadline).
    ///
    /// # Errors
    ///
    /// The first rule of gRPC A6 the policy breaks ([`RetryPolicy::validate`]).
    pub fn new(
        policy: &RetryPolicy,
        deadline: Option<Duration>,
        now: Duration,
    ) -> Result<Self, PolicyError> {
        policy.validate()?;
        Ok(Self {
            policy: *policy,
            most: policy.attempts(),
            made: 1,
            since_pushback: 0,
            deadline,
            jitter: A6_JITTER,
            latest: now,
            ended: false,
        })
    }

    /// This plan drawing its backoff with `jitter` instead of [`A6_JITTER`]:
    /// [`Jitter::Full`] is the first text of A6, `random(0, ceiling)`, which never passes
    /// `maxBackoff`.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::Jitter;
    /// use ironward::grpc::{AttemptEnd, Code, RETRY_POLICY, RetryPlan, RetryStep};
    ///
    /// let ms = Duration::from_millis;
    /// let mut plan = RetryPlan::new(&RETRY_POLICY, None, ms(0))?.with_jitter(Jitter::Full);
    /// let step = plan.on_outcome(AttemptEnd::new(Code::Unavailable), ms(0), 0.25, None);
    /// assert_eq!(step, RetryStep::Wait(ms(25)));
    /// # Ok::<(), ironward::grpc::PolicyError>(())
    /// ```
    #[must_use]
    pub fn with_jitter(mut self, jitter: Jitter) -> Self {
        self.jitter = jitter;
        self
    }

    /// The policy the plan follows.
    #[must_use]
    pub fn policy(&self) -> &RetryPolicy {
        &self.policy
    }

    /// Attempts made so far, the first and the one in flight included.
    #[must_use]
    pub fn attempts(&self) -> u32 {
        self.made
    }

    /// The value of `grpc-previous-rpc-attempts` for the attempt in flight (or about to be
    /// sent after a [`RetryStep::Wait`]): the number of attempts before it. gRPC A6 sends no such
    /// entry on the first attempt, whose count is 0.
    #[must_use]
    pub fn previous_attempts(&self) -> u32 {
        self.made - 1
    }

    /// The attempt in flight has ended with `outcome` at `now`: whether and when to send the
    /// next, with `roll` the draw for its jitter and `budget` the channel's retry throttling.
    pub fn on_outcome(
        &mut self,
        outcome: AttemptEnd<'_>,
        now: Duration,
        roll: f64,
        budget: Option<&mut Budget>,
    ) -> RetryStep {
        self.conclude(outcome, now, roll, Teller::own(budget))
    }

    /// [`on_outcome`](RetryPlan::on_outcome), reporting to a retry budget shared by `&`
    /// across threads: the same decision, the budget told and asked alike.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::SharedBudget;
    /// use ironward::grpc::{AttemptEnd, Code, Halt, RETRY_POLICY, RetryPlan, RetryStep};
    ///
    /// let budget = SharedBudget::new(2, 0.1);
    /// let mut plan = RetryPlan::new(&RETRY_POLICY, None, Duration::ZERO)?;
    /// // The failure takes the budget to 1 of 2: not above half, so no retry.
    /// let unavailable = AttemptEnd::new(Code::Unavailable);
    /// let step = plan.on_outcome_shared(unavailable, Duration::ZERO, 0.5, Some(&budget));
    /// assert_eq!(step, RetryStep::Halt(Halt::Throttled));
    /// assert_eq!(budget.tokens(), 1.0);
    /// # Ok::<(), ironward::grpc::PolicyError>(())
    /// ```
    #[cfg(target_has_atomic = "64")]
    pub fn on_outcome_shared(
        &mut self,
        outcome: AttemptEnd<'_>,
        now: Duration,
        roll: f64,
        budget: Option<&SharedBudget>,
    ) -> RetryStep {
        self.conclude(outcome, now, roll, Teller::shared(budget))
    }

    /// [`on_outcome`](RetryPlan::on_outcome) with any budget.
    fn conclude(
        &mut self,
        outcome: AttemptEnd<'_>,
        now: Duration,
        roll: f64,
        budget: Teller<'_>,
    ) -> RetryStep {
        let now = now.max(self.latest);
        self.latest = now;
        let step = self.decide(outcome, now, roll, budget);
        match step {
            RetryStep::Wait(_) => self.made += 1,
            RetryStep::Done | RetryStep::Halt(_) => self.ended = true,
        }
        step
    }

    fn decide(
        &mut self,
        outcome: AttemptEnd<'_>,
        now: Duration,
        roll: f64,
        mut budget: Teller<'_>,
    ) -> RetryStep {
        if self.ended {
            return RetryStep::Halt(Halt::Committed);
        }
        if outcome.code == Code::Ok {
            budget.pass();
            return RetryStep::Done;
        }
        if outcome.committed {
            return RetryStep::Halt(Halt::Committed);
        }
        let pushback = Pushback::from_values(outcome.pushback);
        if pushback == Pushback::Halt {
            budget.fail();
            return RetryStep::Halt(Halt::Pushback);
        }
        if !self.policy.retryable_status_codes.contains(outcome.code) {
            return RetryStep::Halt(Halt::NotRetryable);
        }
        // grpc-go counts the failure before it checks the attempts, so the last attempt's
        // failure takes a token too.
        budget.fail();
        if !budget.can_retry() {
            return RetryStep::Halt(Halt::Throttled);
        }
        if self.made >= self.most {
            return RetryStep::Halt(Halt::AttemptsSpent);
        }
        let wait = match pushback {
            Pushback::Wait(wait) => wait,
            Pushback::Absent | Pushback::Halt => self.backoff(roll),
        };
        // A deadline is a time budget with no reserve: the next attempt must start strictly
        // before it, by the retry engine's saturating fit of a wait to what is left.
        let left = |deadline: Duration| deadline.saturating_sub(now);
        if self
            .deadline
            .is_some_and(|deadline| !fits(wait, Duration::ZERO, left(deadline)))
        {
            return RetryStep::Halt(Halt::Deadline);
        }
        match pushback {
            Pushback::Wait(_) => self.since_pushback = 0,
            Pushback::Absent | Pushback::Halt => {
                self.since_pushback = self.since_pushback.saturating_add(1);
            }
        }
        RetryStep::Wait(wait)
    }

    /// The next backoff: A6's ceiling for the retries since the last pushback, jittered.
    fn backoff(&self, roll: f64) -> Duration {
        let ceiling = ceiling(&self.policy, self.since_pushback);
        // The one jitter rule of the core: `Backoff::delay` on a backoff whose every
        // ceiling is this one.
        Backoff {
            base: ceiling,
            factor: 1.0,
            cap: ceiling,
            attempts: 0,
            jitter: self.jitter,
        }
        .delay(1, roll, None)
    }
}

/// A6's ceiling after `steps` backoffs since the last pushback:
/// `min(initialBackoff · multiplier^steps, maxBackoff)`, in `f64` nanoseconds as grpc-go's
/// `stream.go` computes it (so a multiplier below 1 shrinks it), rounded to the nearest.
pub(crate) fn ceiling(policy: &RetryPolicy, steps: u32) -> Duration {
    let grown = nanos_f64(policy.initial_backoff) * powi(policy.backoff_multiplier, steps);
    let most = nanos_f64(policy.max_backoff);
    // `min` reads a NaN product (never, for a valid policy) as the cap; the second `min`
    // holds the ceiling to the cap exactly where the float rounded the cap up (past 2^53 ns).
    duration(round_nanos(grown.min(most))).min(policy.max_backoff)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grpc::RETRY_POLICY;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn the_ceiling_grows_by_the_multiplier_up_to_the_cap() {
        let steps: [u64; 6] = [100, 200, 400, 800, 1000, 1000];
        for (n, want) in steps.into_iter().enumerate() {
            assert_eq!(ceiling(&RETRY_POLICY, n as u32), MS(want));
        }
        assert_eq!(ceiling(&RETRY_POLICY, u32::MAX), MS(1000));
        let shrinking = RetryPolicy {
            backoff_multiplier: 0.5,
            ..RETRY_POLICY
        };
        assert_eq!(ceiling(&shrinking, 1), MS(50));
        assert_eq!(ceiling(&shrinking, u32::MAX), Duration::ZERO);
        let huge = RetryPolicy {
            initial_backoff: Duration::MAX,
            max_backoff: Duration::MAX,
            ..RETRY_POLICY
        };
        assert_eq!(ceiling(&huge, 3), Duration::MAX);
        // Past 2^53 ns the float rounds the cap up; the ceiling is held to it exactly.
        let rounded = RetryPolicy {
            initial_backoff: Duration::MAX,
            max_backoff: Duration::from_secs(513_130_722_921_813),
            backoff_multiplier: 0.01,
            ..RETRY_POLICY
        };
        assert_eq!(ceiling(&rounded, 0), rounded.max_backoff);
    }

    #[test]
    fn a6_jitter_spreads_the_ceiling_a_fifth_either_way() {
        let plan = RetryPlan::new(&RETRY_POLICY, None, MS(0)).unwrap();
        assert_eq!(plan.backoff(0.0), MS(80));
        assert_eq!(plan.backoff(0.5), MS(100));
        assert_eq!(plan.backoff(1.0), MS(120));
        assert_eq!(plan.backoff(f64::NAN), MS(80));
    }
}
