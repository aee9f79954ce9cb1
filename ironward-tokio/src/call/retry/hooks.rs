//! The three hooks of a [`Retrying`](super::Retrying) call, each a trait that any closure of
//! its shape implements, with the default a call has until it is given one; and
//! [`Fallible`], which names an operation's error so that a hook's closure needs no types.

use std::future::IntoFuture;
use std::time::Duration;

/// An operation that may fail, and the error it fails with: what lets
/// [`Retrying::when`](super::Retrying::when) and the other hooks type their closure's
/// argument from the operation (`.when(|e| e.is_transient())`), as backon's do.
///
/// Implemented for every `FnMut() -> Fut` whose `Fut` is a future of a `Result` (marker
/// [`Awaits`]) and every `FnMut() -> Result` (marker [`Returns`], the
/// [blocking](super::Retrying::blocking) form). The marker is never written: the compiler
/// picks the one impl the operation fits.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward::retry::Rules;
/// use ironward_tokio::Clock;
/// use ironward_tokio::call::{CallError, Retry};
///
/// let (clock, _hand) = Clock::manual(Duration::ZERO);
/// let retry = Retry::new(Rules::default()).with_clock(clock);
/// let answer = retry
///     .call(|| Err::<(), _>(std::io::Error::other("busy")))
///     .when(|e| e.kind() == std::io::ErrorKind::Other) // `e` is a `&std::io::Error`
///     .blocking();
/// assert!(matches!(answer, Err(CallError::Failed(_))));
/// ```
pub trait Fallible<M> {
    /// The error the operation fails with.
    type Error;
}

/// The [`Fallible`] marker of an async operation, `FnMut() -> impl Future<Output = Result>`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Awaits;

/// The [`Fallible`] marker of a synchronous operation, `FnMut() -> Result`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Returns;

impl<F, Fut, T, E> Fallible<Awaits> for F
where
    F: FnMut() -> Fut,
    Fut: IntoFuture<Output = Result<T, E>>,
{
    type Error = E;
}

impl<F, T, E> Fallible<Returns> for F
where
    F: FnMut() -> Result<T, E>,
{
    type Error = E;
}

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
