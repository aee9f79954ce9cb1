//! The three hooks of a [`Retrying`](super::Retrying) call, each a trait that any closure of
//! its shape implements, with the default a call has until it is given one.

use std::time::Duration;

/// Which errors are worth retrying: [`Retrying::when`](super::Retrying::when).
///
/// Any `Fn(&E) -> bool` is one; the default, [`AnyError`], retries every error. An error it
/// refuses stops the call at once, and the retry budget is told nothing of it (a malformed
/// request is no sign of an overloaded backend).
pub trait When<E> {
    /// Whether a call that failed with `error` may be tried again.
    fn retryable(&self, error: &E) -> bool;
}

impl<E, F: Fn(&E) -> bool> When<E> for F {
    fn retryable(&self, error: &E) -> bool {
        self(error)
    }
}

/// Every error is worth retrying: the default [`When`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AnyError;

impl<E> When<E> for AnyError {
    fn retryable(&self, _error: &E) -> bool {
        true
    }
}

/// The wait an error itself names, as HTTP's `Retry-After` does:
/// [`Retrying::after`](super::Retrying::after).
///
/// Any `Fn(&E) -> Option<Duration>` is one; the default, [`Unnamed`], reads none. A named
/// wait lengthens the backoff, is never shortened by jitter nor clipped to the cap: one above
/// the backoff's cap stops the call ([`Cause::ServerDelayExceedsCap`]), as the engine decides.
///
/// [`Cause::ServerDelayExceedsCap`]: ironward::retry::Cause::ServerDelayExceedsCap
pub trait After<E> {
    /// The wait `error` asks for before the next attempt, if any.
    fn named(&self, error: &E) -> Option<Duration>;
}

impl<E, F: Fn(&E) -> Option<Duration>> After<E> for F {
    fn named(&self, error: &E) -> Option<Duration> {
        self(error)
    }
}

/// No error names a wait: the default [`After`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Unnamed;

impl<E> After<E> for Unnamed {
    fn named(&self, _error: &E) -> Option<Duration> {
        None
    }
}

/// What hears of each wait before it is slept: [`Retrying::notify`](super::Retrying::notify).
///
/// Any `Fn(&E, Duration)` is one, called with the error of the attempt that failed and the
/// wait decided; the default, [`Silent`], does nothing. A wait after an attempt cut by the
/// attempt timeout has no error to hand it, and is not notified (it is counted and logged).
pub trait Notify<E> {
    /// The attempt failed with `error`; the next comes after `wait`.
    fn notify(&self, error: &E, wait: Duration);
}

impl<E, F: Fn(&E, Duration)> Notify<E> for F {
    fn notify(&self, error: &E, wait: Duration) {
        self(error, wait);
    }
}

/// Nobody hears of the waits: the default [`Notify`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Silent;

impl<E> Notify<E> for Silent {
    fn notify(&self, _error: &E, _wait: Duration) {}
}
