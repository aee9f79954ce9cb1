//! [`HedgingPlan`]: one call's hedged attempts under a gRPC A6 hedging policy.

use core::fmt;
use core::time::Duration;

use super::code::{Code, Codes};
use super::outcome::{AttemptEnd, Halt, Pushback};
use super::policy::{HedgingPolicy, PolicyError};
use crate::Budget;
#[cfg(target_has_atomic = "64")]
use crate::SharedBudget;
use crate::budget::Teller;

/// A set of attempts of one call, by number (0 is the first): those in flight, or those to
/// cancel. A call makes at most 5 attempts, so the set is a byte.
///
/// # Examples
///
/// ```
/// use ironward::grpc::{AttemptEnd, Code, HEDGING_POLICY, HedgingPlan, Verdict};
/// use core::time::Duration;
///
/// let zero = Duration::ZERO;
/// let mut plan = HedgingPlan::new(&HEDGING_POLICY, None, zero)?;
/// let _ = plan.send(zero, None);
/// let _ = plan.send(Duration::from_millis(500), None);
/// assert_eq!(plan.in_flight().iter().collect::<Vec<_>>(), [0, 1]);
/// let Verdict::Commit { attempt, cancel } = plan.on_outcome(1, AttemptEnd::new(Code::Ok), zero, None)
/// else { panic!("a success commits") };
/// assert_eq!((attempt, cancel.len()), (1, 1));
/// assert!(cancel.contains(0));
/// # Ok::<(), ironward::grpc::PolicyError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Attempts(u8);

impl Attempts {
    /// No attempt.
    pub const EMPTY: Attempts = Attempts(0);

    /// Whether attempt `n` is in the set.
    #[must_use]
    pub const fn contains(self, n: u32) -> bool {
        n < 8 && self.0 & 1 << n != 0
    }

    /// Whether the set holds no attempt.
    #[must_use]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// How many attempts the set holds.
    #[must_use]
    pub const fn len(self) -> u32 {
        self.0.count_ones()
    }

    /// The attempts in the set, first sent first.
    pub fn iter(self) -> impl Iterator<Item = u32> {
        (0..8).filter(move |&n| self.contains(n))
    }

    const fn with(self, n: u32) -> Attempts {
        Attempts(self.0 | 1 << n)
    }

    const fn without(self, n: u32) -> Attempts {
        Attempts(self.0 & !(1 << n))
    }
}

impl fmt::Debug for Attempts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

/// What to do about the next hedge at `now`: the answer of [`HedgingPlan::send`].
#[must_use = "a hedge that is not sent leaves the plan counting an attempt that never went"]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Hedge {
    /// Send attempt `n` now (0 is the first), with `n` in `grpc-previous-rpc-attempts` when
    /// it is above 0.
    Send(u32),
    /// The next hedge is due this long from now; ask again then.
    Wait(Duration),
    /// No more hedges will be sent, for this reason. The attempts in flight carry on; when
    /// none is ([`HedgingPlan::in_flight`] is empty), the call has failed with the last
    /// attempt's status.
    Halt(Halt),
}

/// What an attempt's outcome means for the call: the answer of [`HedgingPlan::on_outcome`].
#[must_use = "a verdict that is not followed leaves attempts running that should be cancelled"]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// The call takes this attempt's result (a success, a fatal code, or a committed
    /// attempt): return it, and cancel the attempts in `cancel`.
    Commit {
        /// The attempt whose result the call returns.
        attempt: u32,
        /// The attempts still in flight, to be cancelled.
        cancel: Attempts,
    },
    /// The attempt failed with a non-fatal code and the call goes on: wait for the attempts
    /// in flight and for the next hedge ([`HedgingPlan::next`], [`HedgingPlan::send`]).
    Pending,
    /// The attempt failed, none is in flight and no more will be sent: the call fails with
    /// this attempt's status.
    Fail(Halt),
    /// The attempt was not in flight (never sent, already ended, or cancelled by a commit):
    /// nothing changed, and the budget was not touched.
    Ignored,
}

/// How an attempt ended, read by the caller rather than from a gRPC status: what
/// [`HedgingPlan::on_end`] takes from a caller that hedges something other than gRPC.
///
/// # Examples
///
/// ```
/// use ironward::grpc::{Ending, Pushback};
///
/// let fatal = Ending::Failed { fatal: true, pushback: Pushback::Absent };
/// assert_ne!(fatal, Ending::Succeeded);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Ending {
    /// The attempt succeeded: the call takes it (A6's `OK`).
    Succeeded,
    /// The attempt failed.
    Failed {
        /// Whether the failure ends the call (A6: a code not in `nonFatalStatusCodes`);
        /// otherwise the others race on, and the next hedge goes at once.
        fatal: bool,
        /// What the server said about the next attempt, as `grpc-retry-pushback-ms` would.
        pushback: Pushback,
    },
}

/// An attempt's end as the rules read it.
#[derive(Debug, Clone, Copy)]
struct Read {
    ok: bool,
    committed: bool,
    fatal: bool,
    pushback: Pushback,
}

impl Read {
    const fn of(end: Ending) -> Self {
        match end {
            Ending::Succeeded => Read {
                ok: true,
                committed: false,
                fatal: false,
                pushback: Pushback::Absent,
            },
            Ending::Failed { fatal, pushback } => Read {
                ok: false,
                committed: false,
                fatal,
                pushback,
            },
        }
    }
}

/// One call's hedged attempts under a gRPC A6 hedging policy.
///
/// gRPC A6, "Hedging Policy": the first attempt is sent at once; while none has answered,
/// another after each `hedgingDelay`, up to `maxAttempts` (at most 5). Sans-I/O, the caller
/// drives it:
///
/// - [`next`](HedgingPlan::next)`(now)` says how long until the next hedge is due (`None`:
///   no more will be sent);
/// - [`send`](HedgingPlan::send)`(now, budget)` at that time answers which attempt to send
///   ([`Hedge::Send`]), or why none goes;
/// - [`on_outcome`](HedgingPlan::on_outcome)`(attempt, outcome, now, budget)` when an attempt
///   ends, and [`commit`](HedgingPlan::commit)`(attempt)` when one's response headers arrive,
///   answer which attempt the call takes and which to cancel.
///
/// How an outcome is read follows A6's "Summary of Retry and Hedging Logic":
///
/// 1. `OK` commits to the attempt (the budget gets its `tokenRatio` back) and cancels the rest.
/// 2. A committed attempt, or a fatal code (one not in `nonFatalStatusCodes`), commits to it
///    and cancels the rest; a fatal code is not counted against the budget.
/// 3. A non-fatal code takes a token from the budget and sends the next hedge at once,
///    "shortcutting its hedging delay"; the one after it is due `hedgingDelay` after that.
///    If the token leaves the budget at or below half, no more hedges are sent.
/// 4. A pushback that says stop (negative, malformed, repeated) sends no more hedges, and is
///    counted as a failure whatever the code.
/// 5. A pushback of `n` ms sends the next hedge `n` ms from now (the one after at
///    `n + hedgingDelay`).
///
/// Throttling (A6): the first attempt is always sent; a later hedge is sent only while the
/// budget is above half. A hedge due while the budget is at or below half is not sent, and
/// no more are ("the hedged request is cancelled"). A hedge that would be sent at or after
/// the call's deadline is not sent either; when the deadline passes, the caller cancels what
/// is in flight, as A6 says the call then fails "regardless of in-flight RPCs".
///
/// grpc-go does not implement hedging, so where A6 is silent this follows the reading above:
/// a hedge is due `hedgingDelay` after the previous one was actually sent (a late `send`
/// delays the rest rather than bunching them), and a throttled hedge ends the hedging.
///
/// # Edge cases
///
/// A `now` earlier than one already seen is read as the latest seen. An outcome for an
/// attempt that is not in flight, including any number of 8 or more, is [`Verdict::Ignored`].
/// Times saturate at `Duration::MAX`.
///
/// # Examples
///
/// A6's example: a 500 ms delay, four attempts, and the third answering first.
///
/// ```
/// use core::time::Duration;
/// use ironward::grpc::{AttemptEnd, Code, HEDGING_POLICY, Hedge, HedgingPlan, Verdict};
///
/// let ms = Duration::from_millis;
/// let mut plan = HedgingPlan::new(&HEDGING_POLICY, None, ms(0))?;
/// assert_eq!(plan.send(ms(0), None), Hedge::Send(0));
/// assert_eq!(plan.next(ms(1)), Some(ms(499)));
/// assert_eq!(plan.send(ms(1), None), Hedge::Wait(ms(499)));
/// assert_eq!(plan.send(ms(500), None), Hedge::Send(1));
/// assert_eq!(plan.send(ms(1000), None), Hedge::Send(2));
/// assert_eq!(plan.in_flight().len(), 3);
///
/// let verdict = plan.on_outcome(2, AttemptEnd::new(Code::Ok), ms(1200), None);
/// let Verdict::Commit { attempt, cancel } = verdict else { panic!("a success commits") };
/// assert_eq!(attempt, 2);
/// assert_eq!(cancel.iter().collect::<Vec<_>>(), [0, 1]);
/// assert_eq!(plan.next(ms(1500)), None, "no hedge after a commit");
/// # Ok::<(), ironward::grpc::PolicyError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HedgingPlan {
    /// The policy's attempts, capped at 5.
    most: u32,
    delay: Duration,
    non_fatal: Codes,
    /// Attempts sent so far.
    sent: u32,
    flying: Attempts,
    /// When the next hedge is due.
    due: Duration,
    /// Why no more hedges will be sent, once something has said so.
    halt: Option<Halt>,
    /// The attempt the call is committed to, once it is.
    committed: Option<u32>,
    deadline: Option<Duration>,
    /// The latest `now` seen.
    latest: Duration,
}

impl HedgingPlan {
    /// The plan of a call that starts at `now`, under `policy`, ending at `deadline` on the
    /// caller's clock (`None`: no deadline). Its first attempt is due at once.
    ///
    /// # Errors
    ///
    /// The rule of gRPC A6 the policy breaks ([`HedgingPolicy::validate`]).
    pub fn new(
        policy: &HedgingPolicy,
        deadline: Option<Duration>,
        now: Duration,
    ) -> Result<Self, PolicyError> {
        policy.validate()?;
        Ok(Self {
            most: policy.attempts(),
            delay: policy.hedging_delay,
            non_fatal: policy.non_fatal_status_codes,
            sent: 0,
            flying: Attempts::EMPTY,
            due: now,
            halt: None,
            committed: None,
            deadline,
            latest: now,
        })
    }

    /// How long from `now` until the next hedge is due (zero: now), or `None` when no more
    /// will be sent: the attempts are spent, the call is committed, the server's pushback or
    /// the budget stopped the hedging, or the next would start at or after the deadline.
    ///
    /// It reads the budget only in [`send`](HedgingPlan::send), so a due hedge may still be
    /// throttled there.
    #[must_use]
    pub fn next(&self, now: Duration) -> Option<Duration> {
        let now = now.max(self.latest);
        match self.halted(now) {
            Some(_) => None,
            None => Some(self.due.saturating_sub(now)),
        }
    }

    /// The attempts in flight: sent, and neither ended nor cancelled.
    #[must_use]
    pub fn in_flight(&self) -> Attempts {
        self.flying
    }

    /// Attempts sent so far.
    #[must_use]
    pub fn attempts(&self) -> u32 {
        self.sent
    }

    /// The next hedge at `now`: send it ([`Hedge::Send`], and the plan counts it in flight),
    /// not yet ([`Hedge::Wait`]), or never ([`Hedge::Halt`]). `budget` is the channel's retry
    /// throttling (`None`: none); a hedge after the first is sent only while it is above half.
    pub fn send(&mut self, now: Duration, budget: Option<&Budget>) -> Hedge {
        // `Teller` holds a `&mut`; a copy of the budget answers `can_retry` alike.
        let mut copy = budget.copied();
        self.dispatch(now, Teller::own(copy.as_mut()))
    }

    /// [`send`](HedgingPlan::send), asking a retry budget shared by `&` across threads.
    #[cfg(target_has_atomic = "64")]
    pub fn send_shared(&mut self, now: Duration, budget: Option<&SharedBudget>) -> Hedge {
        self.dispatch(now, Teller::shared(budget))
    }

    /// [`send`](HedgingPlan::send) with any budget.
    fn dispatch(&mut self, now: Duration, budget: Teller<'_>) -> Hedge {
        let now = self.see(now);
        if let Some(stop) = self.halted(now) {
            return Hedge::Halt(stop);
        }
        if self.due > now {
            return Hedge::Wait(self.due - now);
        }
        if self.sent > 0 && !budget.can_retry() {
            self.halt = Some(Halt::Throttled);
            return Hedge::Halt(Halt::Throttled);
        }
        let attempt = self.sent;
        self.sent += 1;
        self.flying = self.flying.with(attempt);
        self.due = now.saturating_add(self.delay);
        Hedge::Send(attempt)
    }

    /// Attempt `attempt`'s response headers arrived: the call is committed to it (gRPC A6,
    /// "Committing"), no more hedges are sent, and the attempts returned are to be
    /// cancelled. `None` when the attempt is not in flight or the call is already committed
    /// (to it or to another): nothing changes.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::grpc::{HEDGING_POLICY, HedgingPlan};
    ///
    /// let now = Duration::ZERO;
    /// let policy = ironward::grpc::HedgingPolicy { hedging_delay: now, ..HEDGING_POLICY };
    /// let mut plan = HedgingPlan::new(&policy, None, now)?;
    /// for _ in 0..3 {
    ///     let _ = plan.send(now, None);
    /// }
    /// let cancel = plan.commit(1).expect("attempt 1 is in flight");
    /// assert_eq!(cancel.iter().collect::<Vec<_>>(), [0, 2]);
    /// assert_eq!(plan.commit(2), None);
    /// assert_eq!(plan.next(now), None);
    /// # Ok::<(), ironward::grpc::PolicyError>(())
    /// ```
    #[must_use = "the attempts returned are still running until they are cancelled"]
    pub fn commit(&mut self, attempt: u32) -> Option<Attempts> {
        if self.committed.is_some() || !self.flying.contains(attempt) {
            return None;
        }
        Some(self.commit_to(attempt))
    }

    /// Attempt `attempt` ended with `outcome` at `now`: whether the call takes its result,
    /// waits for others, or has failed. `budget` is the channel's retry throttling (`None`:
    /// none), told of the outcome as gRPC A6 counts it.
    pub fn on_outcome(
        &mut self,
        attempt: u32,
        outcome: AttemptEnd<'_>,
        now: Duration,
        budget: Option<&mut Budget>,
    ) -> Verdict {
        self.conclude(attempt, outcome, now, Teller::own(budget))
    }

    /// [`on_outcome`](HedgingPlan::on_outcome), reporting to a retry budget shared by `&`
    /// across threads: the same verdict, the budget told alike.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::SharedBudget;
    /// use ironward::grpc::{AttemptEnd, Code, HEDGING_POLICY, Hedge, HedgingPlan, Verdict};
    ///
    /// let budget = SharedBudget::new(10, 0.1);
    /// let now = Duration::ZERO;
    /// let mut plan = HedgingPlan::new(&HEDGING_POLICY, None, now)?;
    /// assert_eq!(plan.send_shared(now, Some(&budget)), Hedge::Send(0));
    /// let unavailable = AttemptEnd::new(Code::Unavailable);
    /// let verdict = plan.on_outcome_shared(0, unavailable, now, Some(&budget));
    /// assert_eq!((verdict, budget.tokens()), (Verdict::Pending, 9.0));
    /// assert_eq!(plan.send_shared(now, Some(&budget)), Hedge::Send(1));
    /// # Ok::<(), ironward::grpc::PolicyError>(())
    /// ```
    #[cfg(target_has_atomic = "64")]
    pub fn on_outcome_shared(
        &mut self,
        attempt: u32,
        outcome: AttemptEnd<'_>,
        now: Duration,
        budget: Option<&SharedBudget>,
    ) -> Verdict {
        self.conclude(attempt, outcome, now, Teller::shared(budget))
    }

    /// Attempt `attempt` ended at `now` as the caller reads it, without a gRPC status: a
    /// success, or a failure that is fatal or not, with the server's pushback if any.
    ///
    /// The same rules as [`on_outcome`](HedgingPlan::on_outcome), for a caller that hedges
    /// something other than a gRPC call (ironward-tokio's `call::Hedge`): `on_outcome` is
    /// this with the end read from the code, the policy's `non_fatal_status_codes` and the
    /// pushback's raw values.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::SharedBudget;
    /// use ironward::grpc::{Ending, HEDGING_POLICY, Hedge, HedgingPlan, Pushback, Verdict};
    ///
    /// let ms = Duration::from_millis;
    /// let budget = SharedBudget::new(10, 0.1);
    /// let mut plan = HedgingPlan::new(&HEDGING_POLICY, None, ms(0))?;
    /// assert_eq!(plan.send_shared(ms(0), Some(&budget)), Hedge::Send(0));
    /// // A failure that lets the others race, whose server asks for 300 ms.
    /// let busy = Ending::Failed { fatal: false, pushback: Pushback::Wait(ms(300)) };
    /// assert_eq!(plan.on_end_shared(0, busy, ms(10), Some(&budget)), Verdict::Pending);
    /// assert_eq!((plan.next(ms(10)), budget.tokens()), (Some(ms(300)), 9.0));
    /// # Ok::<(), ironward::grpc::PolicyError>(())
    /// ```
    pub fn on_end(
        &mut self,
        attempt: u32,
        end: Ending,
        now: Duration,
        budget: Option<&mut Budget>,
    ) -> Verdict {
        self.settle(attempt, Read::of(end), now, Teller::own(budget))
    }

    /// [`on_end`](HedgingPlan::on_end), reporting to a retry budget shared by `&` across
    /// threads.
    #[cfg(target_has_atomic = "64")]
    pub fn on_end_shared(
        &mut self,
        attempt: u32,
        end: Ending,
        now: Duration,
        budget: Option<&SharedBudget>,
    ) -> Verdict {
        self.settle(attempt, Read::of(end), now, Teller::shared(budget))
    }

    /// [`on_outcome`](HedgingPlan::on_outcome) with any budget.
    fn conclude(
        &mut self,
        attempt: u32,
        outcome: AttemptEnd<'_>,
        now: Duration,
        budget: Teller<'_>,
    ) -> Verdict {
        let read = Read {
            ok: outcome.code == Code::Ok,
            committed: outcome.committed,
            fatal: !self.non_fatal.contains(outcome.code),
            pushback: Pushback::from_values(outcome.pushback),
        };
        self.settle(attempt, read, now, budget)
    }

    /// An attempt's end, read, with any budget: the one body of A6's rules for both readings.
    fn settle(
        &mut self,
        attempt: u32,
        read: Read,
        now: Duration,
        mut budget: Teller<'_>,
    ) -> Verdict {
        let now = self.see(now);
        if !self.flying.contains(attempt) {
            return Verdict::Ignored;
        }
        if self.committed == Some(attempt) {
            // Its headers committed the call; a success still gives the ratio back (A6:
            // "every successful RPC"), a failure is not counted.
            if read.ok {
                budget.pass();
            }
            self.flying = Attempts::EMPTY;
            return Verdict::Commit {
                attempt,
                cancel: Attempts::EMPTY,
            };
        }
        if read.ok {
            budget.pass();
            return self.commit_verdict(attempt);
        }
        if read.committed {
            return self.commit_verdict(attempt);
        }
        let pushback = read.pushback;
        if pushback == Pushback::Halt {
            budget.fail();
            self.halt.get_or_insert(Halt::Pushback);
        }
        if read.fatal {
            return self.commit_verdict(attempt);
        }
        self.flying = self.flying.without(attempt);
        // A pushback that said stop has counted this failure already.
        if pushback != Pushback::Halt {
            budget.fail();
        }
        if !budget.can_retry() {
            self.halt.get_or_insert(Halt::Throttled);
        }
        if self.halt.is_none() {
            // A6: a non-fatal code shortcuts the delay; a pushback sets it. A hedge already
            // due earlier stays due. (A hedge held back by the deadline may so come due
            // before it.)
            let due = match pushback {
                Pushback::Wait(wait) => now.saturating_add(wait),
                Pushback::Absent | Pushback::Halt => now,
            };
            self.due = match pushback {
                Pushback::Wait(_) => due,
                Pushback::Absent | Pushback::Halt => self.due.min(due),
            };
        }
        match self.halted(now) {
            Some(stop) if self.flying.is_empty() => {
                self.halt = Some(stop);
                Verdict::Fail(stop)
            }
            _ => Verdict::Pending,
        }
    }

    /// The later of `now` and the latest reading, which becomes the latest.
    fn see(&mut self, now: Duration) -> Duration {
        self.latest = self.latest.max(now);
        self.latest
    }

    /// Why no more hedges will be sent from `now` on, if none will.
    fn halted(&self, now: Duration) -> Option<Halt> {
        if let Some(stop) = self.halt {
            return Some(stop);
        }
        if self.sent >= self.most {
            return Some(Halt::AttemptsSpent);
        }
        // The first attempt is the call itself; only hedges wait on the deadline.
        // The next hedge starts at `due`, or `now` if that is later.
        let start = self.due.max(now);
        if self.sent > 0 && self.deadline.is_some_and(|deadline| start >= deadline) {
            return Some(Halt::Deadline);
        }
        None
    }

    fn commit_verdict(&mut self, attempt: u32) -> Verdict {
        let cancel = self.commit_to(attempt);
        self.flying = Attempts::EMPTY;
        Verdict::Commit { attempt, cancel }
    }

    /// Commits the call to `attempt`: the others in flight are returned, to be cancelled.
    fn commit_to(&mut self, attempt: u32) -> Attempts {
        let cancel = self.flying.without(attempt);
        self.flying = Attempts::EMPTY.with(attempt);
        self.committed = Some(attempt);
        self.halt = Some(Halt::Committed);
        cancel
    }
}
