//! What a [`Fallback`](super::Fallback) replaces and with what: the [`Replace`] trait and
//! the rules its constructors make.

use std::fmt;
use std::future::{Future, ready};

use super::CallError;

/// Which errors a [`Fallback`](super::Fallback) replaces, and with what.
///
/// Given the error a call ended with, `Ok` is the answer in its place and `Err` hands an
/// error on. The rules the fallback's constructors make implement it; a type of the
/// caller's own may too, for a rule that keeps state.
///
/// # Examples
///
/// ```
/// use std::future::{Future, ready};
/// use ironward_tokio::call::Fallback;
/// use ironward_tokio::call::replace::Replace;
///
/// /// Every error answered with its own length.
/// struct Length;
///
/// impl Replace<usize, String> for Length {
///     fn replace(&self, error: String) -> impl Future<Output = Result<usize, String>> {
///         ready(Ok(error.len()))
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let length = Fallback::new(Length);
/// assert_eq!(length.call(|| async { Err::<usize, _>("four".to_string()) }).await, Ok(4));
/// # }
/// ```
pub trait Replace<T, X> {
    /// The answer in place of `error`, or the error to hand on.
    fn replace(&self, error: X) -> impl Future<Output = Result<T, X>>;
}

/// Every error answered with a clone of the value: [`Fallback::value`](super::Fallback::value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Value<T>(pub T);

impl<T: Clone, X> Replace<T, X> for Value<T> {
    fn replace(&self, _error: X) -> impl Future<Output = Result<T, X>> {
        ready(Ok(self.0.clone()))
    }
}

/// A piece's refusal answered with a clone of the value, the call's failure handed on:
/// [`Fallback::on_refusal`](super::Fallback::on_refusal).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OnRefusal<T>(pub T);

impl<T: Clone, E, R> Replace<T, CallError<E, R>> for OnRefusal<T> {
    fn replace(&self, error: CallError<E, R>) -> impl Future<Output = Result<T, CallError<E, R>>> {
        ready(match error {
            CallError::Refused(_) => Ok(self.0.clone()),
            other => Err(other),
        })
    }
}

/// The call's failure answered with a clone of the value, a piece's refusal handed on:
/// [`Fallback::on_failure`](super::Fallback::on_failure).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OnFailure<T>(pub T);

impl<T: Clone, E, R> Replace<T, CallError<E, R>> for OnFailure<T> {
    fn replace(&self, error: CallError<E, R>) -> impl Future<Output = Result<T, CallError<E, R>>> {
        ready(match error {
            CallError::Failed(_) => Ok(self.0.clone()),
            other => Err(other),
        })
    }
}

/// Each error asked of a function: [`Fallback::from_fn`](super::Fallback::from_fn).
#[derive(Clone, Copy)]
pub struct FromFn<F>(pub F);

impl<T, X, F: Fn(X) -> Result<T, X>> Replace<T, X> for FromFn<F> {
    fn replace(&self, error: X) -> impl Future<Output = Result<T, X>> {
        ready((self.0)(error))
    }
}

/// Each error asked of an async function:
/// [`Fallback::from_async`](super::Fallback::from_async).
#[derive(Clone, Copy)]
pub struct FromAsync<F>(pub F);

impl<T, X, F, Fut> Replace<T, X> for FromAsync<F>
where
    F: Fn(X) -> Fut,
    Fut: Future<Output = Result<T, X>>,
{
    fn replace(&self, error: X) -> impl Future<Output = Result<T, X>> {
        (self.0)(error)
    }
}

impl<F> fmt::Debug for FromFn<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FromFn")
    }
}

impl<F> fmt::Debug for FromAsync<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FromAsync")
    }
}
