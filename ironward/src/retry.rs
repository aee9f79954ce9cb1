//! One retry engine: after a failed attempt of any operation, wait how long, or stop and why.
//!
//! Every retry loop asks the same questions, whatever it retries: may another attempt be made,
//! how long should it wait first, does the time left allow it, how long may the next attempt
//! take, and what happened in the end. An [`Engine`] answers them for one call, from what the
//! caller passes in: the [`Rules`], the clock reading, the draw, and for each failed attempt a
//! [`Failure`] that says what the caller's classifier made of it. It reads no clock, draws no
//! number, sends and sleeps nothing, and allocates nothing, so a loop over it is tested on a
//! passed-in clock and waits exactly what the tests say.
//!
//! What the engine keeps is what the loops of the core share:
//!
//! - a maximum of attempts, the first included ([`Backoff::attempts`]);
//! - a total time budget with a reserve for each attempt, and the time each attempt may take
//!   ([`Timeout`]): what is left of the budget, or the caller's shorter per-attempt timeout;
//! - the re-check after a wait: [`Engine::attempt`] stops a retry when what is left at the
//!   waking time no longer holds the reserve (the caller may have slept longer than asked);
//! - the backoff, drawn from the core's [`Backoff`] with any [`Jitter`], the draw passed in;
//! - a wait the failure itself names (a server's `Retry-After`), which lengthens the backoff
//!   and is never clipped to its cap: one longer than the cap stops;
//! - the shared retry budget (a [`Budget`], or a [`SharedBudget`] by `&`), told of every
//!   attempt as gRPC A6 counts them: a success passes, a retryable failure fails, a final one
//!   is neither; a wait is taken only while it allows a retry, and first attempts are never
//!   held back;
//! - the [`Retried`] record: attempts made, time waited, and why the call stopped.
//!
//! What is worth retrying is not the engine's to say: a classifier does that, for HTTP the
//! status, the method and RFC 9110's idempotence ([`http_retry::Run`] is this engine under
//! those rules), for an `async fn` whatever its caller decides.
//!
//! # How a failure is decided
//!
//! [`Engine::failed`] applies these in order; the first that applies gives the answer.
//!
//! 1. The clock reading is taken (one earlier than a reading already seen is read as it).
//! 2. [`Class::Final`]`(s)`: stop with `s`, telling the retry budget nothing.
//!    [`Class::Barred`]`(s)`: the retry budget counts a failure, then stop with `s`.
//!    [`Class::Retryable`]: the retry budget counts a failure, and the rules go on.
//! 3. The failed attempt was the last of [`Backoff::attempts`] → [`Cause::AttemptsExhausted`].
//! 4. The backoff is [`Backoff::delay`]`(n, roll, previous)` for the `n`-th attempt's failure
//!    (`previous`, the last wait, is what [`Jitter::Decorrelated`] grows from). With `left`
//!    what is left of [`Rules::total_budget`], the retry needs
//!    `backoff + request_reserve < left`, strictly, else [`Cause::BudgetExhausted`].
//! 5. The named wait ([`Failure::named`]): `Err(s)`, one the caller could not read, stops with
//!    `s`; one longer than [`Backoff::cap`] → [`Cause::ServerDelayExceedsCap`].
//! 6. The wait is the longer of the backoff and the named wait; it needs
//!    `wait + request_reserve < left`, else [`Cause::BudgetExhausted`].
//! 7. The retry budget is at or below half → [`Cause::Throttled`].
//! 8. [`Next::Wait`] with that wait.
//!
//! This is `http_retry`'s [rule order](crate::http_retry#rule-order) from its rule 5 on, with
//! its rules 1 to 4 (settings, input, status, replay) as the classifier: the budget is checked
//! against the backoff alone before the named wait is read, so a retry that could not fit even
//! without it stops for the budget whatever the server said.
//!
//! # Edge cases
//!
//! Nothing panics, for any input. A draw that is NaN or negative is read as 0, one of 1 or more
//! as just below 1 (as everywhere in the core). A clock that steps back is read as the latest
//! reading. Sums saturate at [`Duration::MAX`] and a saturated sum never fits, so a budget of
//! [`Duration::MAX`] is as good as none and a wait of [`Duration::MAX`] never fits it. Counts
//! saturate at `u32::MAX`: a backoff of `u32::MAX` attempts retries until its time budget or
//! its retry budget says no. An `attempts` of 0 or 1 retries nothing. A reserve that fills the
//! budget stops every retry for the budget.
//!
//! # Why the gRPC plan is not an engine
//!
//! [`grpc::RetryPlan`] decides by gRPC A6 as grpc-go's `stream.go` does, and four of its rules
//! differ from these: it asks the retry budget before it counts the attempts (so a throttled
//! last attempt halts as throttled, not as spent), a pushback replaces the backoff exactly
//! (never lengthens it, has no cap) and restarts it from its first step, its backoff's ceiling
//! is A6's `f64` product (a multiplier below 1 shrinks it, where [`Backoff`] reads one below 1
//! as 1), and once ended it answers every later outcome as committed. Bending the engine to
//! each of those would make every rule here a switch. It shares instead what is the same: the
//! retry budget's accounting, and the wait arithmetic near [`Duration::MAX`] (its deadline is a
//! time budget with no reserve, checked by the same strict, saturating comparison).
//!
//! [`Duration::MAX`]: core::time::Duration::MAX
//! [`Budget`]: crate::Budget
//! [`SharedBudget`]: crate::SharedBudget
//! [`Backoff`]: crate::Backoff
//! [`Backoff::attempts`]: crate::Backoff::attempts
//! [`Backoff::cap`]: crate::Backoff::cap
//! [`Backoff::delay`]: crate::Backoff::delay
//! [`Jitter`]: crate::Jitter
//! [`Jitter::Decorrelated`]: crate::Jitter::Decorrelated
//! [`http_retry::Run`]: crate::http_retry::Run
//! [`grpc::RetryPlan`]: crate::grpc::RetryPlan
//!
//! # Examples
//!
//! A generic retry loop around an operation, on a clock that moves only when the loop says:
//! each attempt takes 50 ms and each wait is slept by adding it, so every wait and every count
//! below is exact.
//!
//! ```
//! use core::time::Duration;
//! use ironward::retry::{Cause, Engine, Failure, Next, Retried, Rules};
//! use ironward::{Backoff, Jitter};
//!
//! let ms = Duration::from_millis;
//! let rules = Rules {
//!     backoff: Backoff { base: ms(100), factor: 2.0, cap: ms(2_000), attempts: 5, jitter: Jitter::Full },
//!     total_budget: ms(3_000),
//!     request_reserve: ms(200),
//! };
//!
//! /// What each attempt answers in turn: a value, or a failure naming a wait or not; past the
//! /// end, a failure naming none.
//! type Answer = Result<&'static str, Option<Duration>>;
//!
//! fn call(rules: Rules, answers: &[Answer]) -> (Result<&'static str, Cause>, Retried, Duration) {
//!     let mut now = Duration::ZERO; // the caller's clock
//!     let mut engine = Engine::new(rules, now);
//!     let result = loop {
//!         if let Err(stop) = engine.attempt(now, None) {
//!             break Err(stop);
//!         }
//!         let made = engine.retried().attempts as usize;
//!         now += Duration::from_millis(50); // the attempt
//!         let named = match answers.get(made - 1).copied().unwrap_or(Err(None)) {
//!             Ok(value) => {
//!                 engine.succeeded(None);
//!                 break Ok(value);
//!             }
//!             Err(named) => named,
//!         };
//!         let roll = [0.5, 0.25, 0.75][(made - 1) % 3]; // the caller's draws
//!         let failure = Failure { named: Ok(named), ..Failure::retryable(now, roll) };
//!         match engine.failed(failure, None) {
//!             Next::Wait(wait) => now += wait, // the caller's sleep
//!             Next::Stop(stop) => break Err(stop),
//!         }
//!     };
//!     (result, engine.retried(), now)
//! }
//!
//! // Two failures, then a value. Full jitter at 0.5 halves the first ceiling, 100 ms; the
//! // second failure names 600 ms, longer than its backoff (a quarter of 200 ms).
//! let (result, retried, now) = call(rules, &[Err(None), Err(Some(ms(600))), Ok("done")]);
//! assert_eq!(result, Ok("done"));
//! assert_eq!((retried.attempts, retried.waited, now), (3, ms(650), ms(800)));
//!
//! // Failing throughout: waits of 50, 50, 300 and 400 ms, then the fifth attempt is the last.
//! let (result, retried, now) = call(rules, &[]);
//! assert_eq!(result, Err(Cause::AttemptsExhausted));
//! assert_eq!((retried.attempts, retried.waited, now), (5, ms(800), ms(1_050)));
//!
//! // Each failure names 900 ms: at 1.95 s the 1.05 s left cannot hold another 900 ms and
//! // the 200 ms reserve.
//! let (result, retried, now) = call(rules, &[Err(Some(ms(900))); 5]);
//! assert_eq!(result, Err(Cause::BudgetExhausted));
//! assert_eq!((retried.attempts, retried.waited, now), (3, ms(1_800), ms(1_950)));
//! ```

mod engine;
pub(crate) mod room;
mod terms;

pub use engine::Engine;
pub use terms::{Cause, Class, Failure, Next, Retried, Rules, Timeout};

#[cfg(test)]
mod tests;
