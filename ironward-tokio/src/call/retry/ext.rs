//! [`RetryExt`]: a retry made from the operation itself.

use super::{Retry, Retrying};

/// `.retry(&policy)` on any operation, the future-builder form of
/// [`Retry::call`](super::Retry::call): `(|| fetch(id)).retry(&policy).when(Error::is_transient).await`.
///
/// Implemented for every `FnMut() -> O`: an async operation (`O` a future of a `Result`) is
/// awaited, a synchronous one (`O` a `Result`) run [`blocking`](Retrying::blocking). The policy
/// is taken by reference or by value (`AsRef<Retry>`); the builder holds a clone of its
/// `Arc`, so the future borrows nothing of it.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward::retry::Rules;
/// use ironward_tokio::Clock;
/// use ironward_tokio::call::{CallError, Retry, RetryExt};
///
/// #[derive(Debug, PartialEq)]
/// enum Error { Transient, Invalid }
///
/// impl Error {
///     fn is_transient(&self) -> bool {
///         *self == Error::Transient
///     }
/// }
///
/// async fn fetch(id: u32) -> Result<String, Error> {
///     if id == 0 { Err(Error::Invalid) } else { Ok(format!("item {id}")) }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let (clock, _hand) = Clock::manual(Duration::ZERO);
/// let policy = Retry::new(Rules::default()).with_clock(clock);
/// let id = 7;
/// let item = (|| fetch(id)).retry(&policy).when(Error::is_transient).await;
/// assert_eq!(item.unwrap(), "item 7");
/// let invalid = (|| fetch(0)).retry(&policy).when(Error::is_transient).await;
/// assert_eq!(invalid, Err(CallError::Failed(Error::Invalid)));
/// # }
/// ```
pub trait RetryExt<O>: FnMut() -> O + Sized {
    /// One call of this operation under `policy`: a [`Retrying`] to configure, then await or
    /// run.
    fn retry(self, policy: impl AsRef<Retry>) -> Retrying<Self> {
        policy.as_ref().call(self)
    }
}

impl<F: FnMut() -> O, O> RetryExt<O> for F {}
