//! ironward's front door for any async call, and what its tokio edges read and share at run
//! time.
//!
//! **The front door**, [`call`]: a circuit breaker, a timeout that keeps to the deadline
//! around it, a fallback, a concurrency gate and the adaptive limiter, each a shared value
//! with one method, `piece.call(|| fut).await`, for the call that is not a tower service
//! (as backon, failsafe-rs or Polly's `ResiliencePipeline` answer it), on the same core
//! decisions, shared forms and metrics as ironward-tower's layers:
//!
//! ```
//! use std::time::Duration;
//! use ironward::CLASSIC;
//! use ironward_tokio::call::{Breaker, Fallback, Timeout};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let (breaker, timeout) = (Breaker::new(CLASSIC), Timeout::new(Duration::from_secs(2)));
//! let fallback = Fallback::value(0.0);
//! let price = fallback.call(|| breaker.call(|| timeout.call(|| async { Ok::<f64, ()>(9.5) })));
//! assert_eq!(price.await, Ok(9.5));
//! # }
//! ```
//!
//! **The edges' run time**: a [`Clock`], [`Dice`], a poison-tolerant [`lock`], the breakers
//! and shedder they share between threads without a lock per call, and the adaptive
//! concurrency limiter with its wait queue. The `ironward` core reads no clock and draws no
//! number: every decision takes `now` and the draw as arguments. The edges (ironward-tower,
//! ironward-reqwest, ironward-redis) read them here, so that each depends on the core, on
//! this crate and on its own host crates, and never on another edge for a helper.
//!
//! | item | what it is |
//! | --- | --- |
//! | [`call`] | the front door: [`Breaker`](call::Breaker), [`Timeout`](call::Timeout) and [`Deadline`](call::Deadline), [`Fallback`](call::Fallback), [`Gate`](call::Gate), [`Limiter`](call::Limiter) around any async call |
//! | [`Clock`] | `now` as a `Duration`: tokio's monotonic clock (so `tokio::time::pause` drives it), a [coarse](Clock::coarse) monotonic clock read in one load, the wall clock, a [manual](Clock::manual) clock a test moves, or a closure; and [`Clock::sleep`] on the same clock |
//! | [`Dice`] | draws from `[0, 1)`: real randomness, a seeded sequence, or a closure |
//! | [`Knobs`], [`Mode`] | the name, clock, dice and mode every edge is built with, their defaults written once |
//! | [`lock`] | a `Mutex` lock that passes over poison, for core values that cannot be left half-updated |
//! | [`SharedSreBreaker`] | the SRE circuit breaker shared by `&`, a healthy backend's calls let through and recorded without a lock |
//! | [`SharedClassicBreaker`] | the classic circuit breaker (closed, open, half-open) shared by `&`, a healthy backend's calls let through and their successes recorded without a lock, every change of state kept in order |
//! | [`SharedCircuitBreaker`] | a breaker of any family shared by `&`, the form the edges take: [`SharedSreBreaker`], [`SharedClassicBreaker`], or any core [`CircuitBreaker`](ironward::CircuitBreaker) behind a `Mutex` |
//! | [`BreakerPolicy`] | a family named by its policy ([`Sre`](ironward::Sre), [`Classic`](ironward::Classic)), so that an edge switches families by the policy value it is given |
//! | [`stripe`] | a value per thread on a cache line of its own, for counters many threads add to |
//! | [`SharedShedder`] | go-zero's adaptive load shedder shared by `&`, a cool server's calls decided and recorded without a lock, admitting by [`Criticality`](ironward::Criticality) ([`check_as`](SharedShedder::check_as)) |
//! | [`SharedLimiter`] | the adaptive concurrency limit every task shares: [`LimiterPermit`]s that settle on drop, and an optional bounded [`Queue`] with failsafe-go's gradual rejection, let in by criticality |
//! | [`Quota`], [`QuotaLimiter`] | which core limiter a rate limit runs (bucket, sliding window, period), the one description ironward-tower's layer and ironward-redis's limiters take; that limiter in memory |
//! | [`SharedChaos`] | the core's chaos policy shared by `&`: each request numbered as it arrives, its fault drawn from a seed (replayable) or the dice, counted and logged; the front door's [`Faults`](call::Faults) and ironward-reqwest's chaos middleware apply it |
//! | [`meter`] | the metric handles every edge counts its decisions through: the edges' plumbing, not something an application uses |
//!
//! A shared form lives here when it needs a `Mutex`, a value per thread or a task to wake, and
//! beside its piece in the core when atomic words hold it all: one rule, stated in
//! [`ironward::_guide::shared`].
//!
//! A manual clock moves only when told, and a sleep on it moves it instead of waiting, so
//! a test of code that sleeps seconds runs in no time at exact instants ([`Clock::manual`]).

#![forbid(unsafe_code)]

mod breaker;
pub mod call;
mod chaos;
mod clock;
mod dice;
mod knobs;
mod limit;
mod limiter;
pub mod meter;
mod owner;
mod shedder;
pub mod stripe;

use std::sync::{Mutex, MutexGuard, PoisonError};

pub use breaker::{
    BreakerPolicy, SharedCircuitBreaker, SharedClassicBreaker, SharedClassicPermit,
    SharedSreBreaker, SharedSrePermit,
};
pub use chaos::SharedChaos;
pub use clock::{Clock, Delay, Hand};
pub use dice::Dice;
pub use knobs::{Knobs, Mode};
pub use limit::{Quota, QuotaLimiter};
pub use limiter::{
    Admission, LimiterPermit, LimiterRefusal, QUEUE, Queue, Queued, SharedLimiter, Waiter,
};
pub use shedder::{SharedShedder, ShedTicket};

/// Locks a shared core value (a breaker, a shedder, a limiter, a gate, a retry budget),
/// passing over poison.
///
/// A poisoned lock still holds a sound value: the `ironward` core never panics mid-update and
/// nothing else runs under these locks, so the poison is passed over rather than turned into
/// a panic on every later request.
///
/// # Examples
///
/// ```
/// use std::sync::Mutex;
///
/// let count = Mutex::new(1u32);
/// *ironward_tokio::lock(&count) += 1;
/// assert_eq!(*ironward_tokio::lock(&count), 2);
/// ```
pub fn lock<T: ?Sized>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    #[test]
    fn a_poisoned_lock_is_still_used() {
        let shared = Arc::new(Mutex::new(1u32));
        let poisoner = Arc::clone(&shared);
        let _ = std::thread::spawn(move || {
            let _guard = poisoner.lock().unwrap();
            panic!("poison the lock");
        })
        .join();
        assert!(shared.is_poisoned());
        *super::lock(&shared) += 1;
        assert_eq!(*super::lock(&shared), 2);
    }
}
