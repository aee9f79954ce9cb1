//! What a call's result teaches a piece that learns from it: [`Classify`] for a breaker
//! (a failure or not), [`Grade`] for an adaptive limiter (a latency sample, a drop, or
//! nothing).

use std::time::Duration;

use ironward::Settle;

/// Which results a [`Breaker`](super::Breaker) records as failures.
///
/// [`Errors`], the default, counts every `Err`. A closure over `&Result<T, E>` is a
/// classifier: one that counts a "busy" answer as a failure, or a `404` as a success.
/// A classifier may also read how long the call took
/// ([`is_failure_in`](Self::is_failure_in)): [`Slower`] counts a call slower than a limit as
/// a failure, which is how the SRE breaker, which has no notion of a slow call, learns of
/// one. The classic breaker needs none of it for its own slow-call rate: it tells a slow call
/// by the same time against its policy's `slow_call` (as resilience4j's
/// `slowCallDurationThreshold`).
///
/// # Examples
///
/// ```
/// use ironward_tokio::call::{Classify, Errors};
///
/// let busy = |result: &Result<&str, String>| matches!(result, Ok("busy") | Err(_));
/// assert!(busy.is_failure(&Ok("busy")));
/// assert!(!busy.is_failure(&Ok("done")));
/// assert!(Errors.is_failure(&Err::<(), _>("down")));
/// ```
pub trait Classify<T, E> {
    /// Whether `result` is a failure.
    fn is_failure(&self, result: &Result<T, E>) -> bool;

    /// Whether `result`, from a call that took `took` (from its permit to its end, on the
    /// breaker's clock), is a failure: what the breaker asks. By default
    /// [`is_failure`](Self::is_failure), whatever the time.
    fn is_failure_in(&self, result: &Result<T, E>, took: Duration) -> bool {
        let _ = took;
        self.is_failure(result)
    }
}

/// A [`Classify`] that also counts a call slower than its limit as a failure, whatever it
/// answered. A call of exactly the limit is not slow, as the classic breaker's `slow_call`
/// reads it.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward_tokio::call::{Classify, Errors, Slower};
///
/// let slow = Slower::new(Errors, Duration::from_secs(1));
/// let ok = Ok::<_, ()>(1);
/// assert!(!slow.is_failure_in(&ok, Duration::from_secs(1)));
/// assert!(slow.is_failure_in(&ok, Duration::from_millis(1_001)));
/// assert!(slow.is_failure_in(&Err::<(), _>("down"), Duration::ZERO));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slower<C> {
    classify: C,
    limit: Duration,
}

impl<C> Slower<C> {
    /// `classify`, and a call that took longer than `limit` a failure too.
    pub fn new(classify: C, limit: Duration) -> Self {
        Self { classify, limit }
    }
}

impl<T, E, C: Classify<T, E>> Classify<T, E> for Slower<C> {
    fn is_failure(&self, result: &Result<T, E>) -> bool {
        self.classify.is_failure(result)
    }

    fn is_failure_in(&self, result: &Result<T, E>, took: Duration) -> bool {
        took > self.limit || self.classify.is_failure_in(result, took)
    }
}

/// The default [`Classify`]: every `Err` is a failure, every `Ok` a success.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Errors;

impl<T, E> Classify<T, E> for Errors {
    fn is_failure(&self, result: &Result<T, E>) -> bool {
        result.is_err()
    }
}

impl<T, E, F: Fn(&Result<T, E>) -> bool> Classify<T, E> for F {
    fn is_failure(&self, result: &Result<T, E>) -> bool {
        self(result)
    }
}

/// How a [`Limiter`](super::Limiter) settles a call by its result
/// ([`ironward::Limiter::settle`]): [`Settle::Success`] samples its latency,
/// [`Settle::Dropped`] marks overload, [`Settle::Ignored`] takes it out of flight and
/// teaches nothing.
///
/// [`SampleOk`], the default, samples every `Ok` and ignores every `Err`: an error says
/// nothing of the backend's load unless the caller knows it does (a timeout, a "busy"
/// answer), which a closure over `&Result<T, E>` says.
///
/// # Examples
///
/// ```
/// use ironward::Settle;
/// use ironward_tokio::call::{Grade, SampleOk};
///
/// let busy = |result: &Result<(), &str>| match result {
///     Err("busy") => Settle::Dropped,
///     Err(_) => Settle::Ignored,
///     Ok(()) => Settle::Success,
/// };
/// assert_eq!(busy.grade(&Err("busy")), Settle::Dropped);
/// assert_eq!(SampleOk.grade(&Err::<(), _>("busy")), Settle::Ignored);
/// ```
pub trait Grade<T, E> {
    /// How the call that ended with `result` settles.
    fn grade(&self, result: &Result<T, E>) -> Settle;
}

/// The default [`Grade`]: an `Ok` is a latency sample, an `Err` is ignored.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SampleOk;

impl<T, E> Grade<T, E> for SampleOk {
    fn grade(&self, result: &Result<T, E>) -> Settle {
        match result {
            Ok(_) => Settle::Success,
            Err(_) => Settle::Ignored,
        }
    }
}

impl<T, E, F: Fn(&Result<T, E>) -> Settle> Grade<T, E> for F {
    fn grade(&self, result: &Result<T, E>) -> Settle {
        self(result)
    }
}
