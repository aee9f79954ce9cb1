//! The front door for any async call: a circuit breaker, a timeout that stops at the
//! deadline around it, a retry, a hedge, a rate limit, a fallback, a concurrency gate and an
//! adaptive limit, each a value with one method, `piece.call(|| fut).await`, on the same core
//! decisions and shared forms as ironward-tower's layers; and a [`Pipeline`] that runs them as
//! one value.
//!
//! | piece | what it does | refuses with |
//! | --- | --- | --- |
//! | [`Breaker`] | either breaker family, picked by its policy value (`Breaker::new(SRE)`, `Breaker::new(CLASSIC)`); the caller's [`Classify`] says which results are failures | the family's reason ([`SreReason`](ironward::SreReason), [`ClassicReason`](ironward::ClassicReason)) |
//! | [`Timeout`] | a time limit on the [`Clock`](crate::Clock), and no later than the [`Deadline`] the call runs under | [`TimeoutReason`] |
//! | [`Deadline`] | an instant a task carries, which every timeout nested inside keeps to ([`Deadline::scope`], [`Deadline::current`]) | (refuses nothing itself) |
//! | [`Retry`] | the call tried again on the core's [retry engine](ironward::retry): `when` says which errors, `after` reads a wait the error names, the [`Deadline`] bounds it all; also [`RetryExt`]'s `(|| fut).retry(&policy)` and a blocking form | [`GaveUp`] when the last attempt was cut by time (else the last error, `Failed`) |
//! | [`Hedge`] | hedged requests: while no attempt has answered, another after the hedging delay (fixed, or a percentile of recent latencies), up to a most; the first success wins and the rest are dropped; `when` says which errors let the others race, on the gRPC A6 [hedging plan](ironward::grpc::HedgingPlan) and the retry's budget | [`HedgeReason`] when the [`Deadline`] passes with no answer (else the fatal or last error, `Failed`) |
//! | [`Fallback`] | a value or a function in place of a refusal or a failure | (answers instead) |
//! | [`Gate`] | at most so many calls at once, the rest refused at once | [`GateReason`](ironward::GateReason) |
//! | [`Limiter`] | the adaptive concurrency limit, by [`Criticality`](ironward::Criticality), with an optional bounded queue | [`LimiterRefusal`](crate::LimiterRefusal) |
//! | [`RateLimit`] | a rate ([`Quota`](crate::Quota): a token bucket, a sliding window, a fixed period) in memory or any [`Admit`] (Redis); refuses over it, or waits up to a bound for the slot it holds | [`RateReason`] |
//! | [`Faults`] | chaos: the faults a [`SharedChaos`](crate::SharedChaos) decides (an error, a latency, an abort, a replacement) injected into each attempt, to see the pieces around it work; innermost, around the operation, inside the timeout | (fails with the caller's own error) |
//! | [`Pipeline`] | the pieces above as one value, run in one fixed order whatever order they were given in, retuned live from one [`Tuner`](pipeline::Tuner) | the [`Refusal`] of the piece that refused |
//!
//! Every piece answers `Result<T, CallError<E, R>>`: the call's value, its own error `E` as
//! [`CallError::Failed`], or the piece's refusal `R` as [`CallError::Refused`], carrying the
//! numbers that decided it. A refused call is never started: its closure is not called.
//!
//! **One pipeline.** [`Pipeline`] composes the pieces as one value: the builder takes them
//! in any order, the pipeline runs them in its own (the fallback outermost, then the retry,
//! the hedge, the rate limit, the concurrency limit, the breaker, and the timeout innermost;
//! its docs give the reason for each place), and answers one error, `CallError<E, `[`Refusal`]`>`, whose refusal
//! names the piece that refused. Pieces also nest by nesting calls
//! (`fallback.call(|| retry.call(|| breaker.call(|| timeout.call(f))))`), in that same
//! order, each nesting its error in the next (`CallError<CallError<E, TimeoutReason>,
//! ClassicReason>`); to a retry so nested, an inner piece's refusal is an error like any
//! other, which its [`when`](retry::Retrying::when) weighs as the pipeline's default,
//! [`Retryable`], does.
//! A [`Hedge`] goes inside the retry: each of its attempts passes the pieces inside it, and
//! it keeps to the current [`Deadline`] as a retry does.
//!
//! **Every piece is a shared handle.** `Clone + Send + Sync`, its state behind an `Arc`, so
//! that every task calling through a clone shares one breaker, one count, one limit. Each
//! reads its [`Clock`](crate::Clock) (and the breaker its [`Dice`](crate::Dice)), so a test
//! on [`Clock::manual`](crate::Clock::manual) runs at exact instants: a sleep on that clock
//! moves it rather than waiting.
//! So an hour of calls runs in a fraction of a second (this crate's test
//! `tests/call_hour.rs`), against a backend of ironward-sim's model (its `Backend::sampler`).
//!
//! **Cancellation.** Dropping a call's future mid-flight leaves the breaker's permit
//! unsettled (nothing recorded, as the tower layer does), gives the gate's room back, takes
//! the limiter's call out of flight (or out of its queue) unsampled, gives a rate limit's
//! waiting slot back to its limiter, ends a retry where it is (its retry budget told only of
//! decisions made), drops every attempt a hedge has in flight (none is spawned; its budget is
//! told only of attempts that ended), and drops the call.
//!
//! **Metrics and events.** Each piece counts `ironward.requests{piece, name, outcome,
//! reason}` through [`meter::Decisions`](crate::meter::Decisions), as the layers do (its
//! docs say which series), and a retry `ironward.retry.*` through
//! [`meter::Retries`](crate::meter::Retries), as the retry middleware does, under the name
//! its `with_name` gives; and logs its refusals and retries at `DEBUG`, a breaker's changes
//! of state at `INFO`, through `tracing`.
//!
//! # Examples
//!
//! A breaker, a timeout and a fallback around a call that hangs, on a manual clock:
//!
//! ```
//! use std::future::pending;
//! use std::time::Duration;
//! use ironward::CLASSIC;
//! use ironward_tokio::Clock;
//! use ironward_tokio::call::{Breaker, Fallback, Timeout};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let (clock, _hand) = Clock::manual(Duration::ZERO);
//! let breaker = Breaker::new(CLASSIC).with_clock(clock.clone());
//! let timeout = Timeout::new(Duration::from_secs(2)).with_clock(clock.clone());
//! let fallback = Fallback::value("cached");
//!
//! let hung = pending::<Result<&str, std::io::Error>>;
//! let answer = fallback.call(|| breaker.call(|| timeout.call(hung))).await;
//! assert_eq!(answer.unwrap(), "cached");
//! assert_eq!(clock.now(), Duration::from_secs(2), "cut at its timeout");
//! # }
//! ```
//!
//! The same as one [`Pipeline`], with a retry: each of three attempts passes the breaker and
//! is cut by the timeout; the retry waits between them, then gives up, and the fallback
//! answers. The builder is given the pieces in any order.
//!
//! ```
//! use std::future::pending;
//! use std::time::Duration;
//! use ironward::retry::Rules;
//! use ironward::{BACKOFF, Backoff, CLASSIC, Jitter};
//! use ironward_tokio::Clock;
//! use ironward_tokio::call::{Breaker, Fallback, Pipeline, Retry, Timeout};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let (clock, _hand) = Clock::manual(Duration::ZERO);
//! let rigid = Rules::new(Backoff { jitter: Jitter::Rigid, ..BACKOFF });
//! let pipeline = Pipeline::builder()
//!     .timeout(Timeout::new(Duration::from_secs(1)))
//!     .breaker(Breaker::new(CLASSIC))
//!     .retry(Retry::new(rigid))
//!     .fallback(Fallback::value("cached"))
//!     .with_clock(clock.clone())
//!     .build();
//!
//! let hung = pending::<Result<&str, std::io::Error>>;
//! let (answer, retried) = pipeline.recorded(hung).await;
//! assert_eq!(answer.unwrap(), "cached");
//! assert_eq!(retried.map(|r| r.attempts), Some(3));
//! // Three 1 s attempts, and waits of 100 ms and 200 ms between them.
//! assert_eq!(clock.now(), Duration::from_millis(3_300));
//! # }
//! ```

mod breaker;
mod classify;
mod deadline;
mod error;
mod fallback;
mod faults;
mod gate;
pub mod hedge;
mod limiter;
pub mod pipeline;
mod rate;
pub mod replace;
pub mod retry;
mod timeout;

pub use breaker::Breaker;
pub use classify::{Classify, Errors, Grade, SampleOk, Slower};
pub use deadline::{Deadline, Scope};
pub use error::CallError;
pub use fallback::Fallback;
pub use faults::Faults;
pub use gate::Gate;
pub use hedge::{Hedge, HedgeDelay, HedgeReason, Hedged};
pub use limiter::Limiter;
pub use pipeline::{
    BreakerRefusal, Pipeline, PipelineError, Protect, Refusal, RefusalWait, Retryable,
};
pub use rate::{Admit, Admitted, Denied, LocalRate, LocalSlot, RateCause, RateLimit, RateReason};
pub use retry::{GaveUp, Retry, RetryExt};
pub use timeout::{Timeout, TimeoutReason};
