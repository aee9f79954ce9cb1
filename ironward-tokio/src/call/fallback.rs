//! [`Fallback`]: a value or a function in place of a refused or failed call.

use std::fmt;
use std::future::IntoFuture;
use std::sync::Arc;

use super::replace::{FromAsync, FromFn, OnFailure, OnRefusal, Replace, Value};
use crate::meter::{DEFAULT_NAME, Decisions};

/// The one reason a fallback counts a replaced error under.
const REASONS: &[&str] = &["error"];

/// A value or a function in place of a call that was refused or failed: the last piece
/// around a call, outside the others, so that it sees their refusals and the call's final
/// failure.
///
/// `F` says which errors are replaced and with what (a [`Replace`]):
///
/// | made by | replaces | with |
/// | --- | --- | --- |
/// | [`value`](Fallback::value) | every error | a clone of the value |
/// | [`on_refusal`](Fallback::on_refusal) | a piece's refusal ([`CallError::Refused`](super::CallError::Refused)) | a clone of the value |
/// | [`on_failure`](Fallback::on_failure) | the call's own failure ([`CallError::Failed`](super::CallError::Failed)) | a clone of the value |
/// | [`from_fn`](Fallback::from_fn) | what the function replaces: `Ok` replaces, `Err` passes an error on | its `Ok` |
/// | [`from_async`](Fallback::from_async) | as `from_fn`, the function async (a cache, a second backend) | its `Ok` |
///
/// These are Polly's fallback strategy and failsafe-go's `Fallback`: a value, or a function
/// of the error, in place of an error the caller chose to handle. The value itself is the
/// caller's: a default, the last good answer, a degraded one.
///
/// `Clone` is an `Arc` clone.
///
/// # Metrics and events
///
/// `ironward.requests{piece="fallback", name, outcome}`: `admitted` for a call whose own
/// result was handed on (a value, or an error not replaced), `replaced` with
/// `reason="error"` for one answered by the fallback; a replacement is a `DEBUG` event.
///
/// # Examples
///
/// ```
/// use ironward::CLASSIC;
/// use ironward_tokio::call::{Breaker, Fallback};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let breaker = Breaker::new(CLASSIC);
/// let fallback = Fallback::value(0.0);
/// let price = fallback
///     .call(|| breaker.call(|| async { Err::<f64, _>("pricing down") }))
///     .await;
/// assert_eq!(price, Ok(0.0));
/// # }
/// ```
pub struct Fallback<F> {
    shared: Arc<Shared<F>>,
}

struct Shared<F> {
    replace: F,
    name: &'static str,
    decisions: Decisions,
}

impl<F> Fallback<F> {
    /// A fallback that replaces errors as `replace` says (see [`Replace`]).
    pub fn new(replace: F) -> Self {
        Self::build(replace, DEFAULT_NAME)
    }

    fn build(replace: F, name: &'static str) -> Self {
        Self {
            shared: Arc::new(Shared {
                replace,
                name,
                decisions: Decisions::new("fallback", name, "replaced", REASONS),
            }),
        }
    }

    /// The rule that replaces errors.
    pub fn replace(&self) -> &F {
        &self.shared.replace
    }

    /// The name it reports under.
    pub fn name(&self) -> &'static str {
        self.shared.name
    }

    /// Runs `call`, and if it ends with an error the fallback replaces, answers the
    /// replacement instead; anything else is handed on as it came.
    pub async fn call<T, X, Fut>(&self, call: impl FnOnce() -> Fut) -> Result<T, X>
    where
        Fut: IntoFuture<Output = Result<T, X>>,
        F: Replace<T, X>,
    {
        let shared = &*self.shared;
        let error = match call().await {
            Ok(value) => {
                shared.decisions.admitted();
                return Ok(value);
            }
            Err(error) => error,
        };
        let answer = shared.replace.replace(error).await;
        if answer.is_ok() {
            shared.decisions.refused(0);
            tracing::debug!(
                name = shared.name,
                outcome = "replaced",
                "fallback replaced an error"
            );
        } else {
            shared.decisions.admitted();
        }
        answer
    }
}

impl<F: Clone> Fallback<F> {
    /// The same fallback reporting under `name` (by default `"default"`).
    #[must_use]
    pub fn with_name(self, name: &'static str) -> Self {
        Self::build(self.shared.replace.clone(), name)
    }
}

impl<T> Fallback<Value<T>> {
    /// A fallback that answers every error with a clone of `value`.
    pub fn value(value: T) -> Self {
        Self::new(Value(value))
    }
}

impl<T> Fallback<OnRefusal<T>> {
    /// A fallback that answers a piece's refusal with a clone of `value`, and hands the
    /// call's own failure on.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::GateReason;
    /// use ironward_tokio::call::{CallError, Fallback};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let fallback = Fallback::on_refusal("cached");
    /// let full = GateReason { held: 1, limit: 1 };
    /// let refused = fallback.call(|| async { Err::<&str, CallError<(), _>>(CallError::Refused(full)) });
    /// assert_eq!(refused.await, Ok("cached"));
    /// let failed = fallback.call(|| async { Err::<&str, _>(CallError::<_, GateReason>::Failed(())) });
    /// assert_eq!(failed.await, Err(CallError::Failed(())));
    /// # }
    /// ```
    pub fn on_refusal(value: T) -> Self {
        Self::new(OnRefusal(value))
    }
}

impl<T> Fallback<OnFailure<T>> {
    /// A fallback that answers the call's own failure with a clone of `value`, and hands a
    /// piece's refusal on.
    pub fn on_failure(value: T) -> Self {
        Self::new(OnFailure(value))
    }
}

impl<F> Fallback<FromFn<F>> {
    /// A fallback that asks `replace` about each error: `Ok` is the answer, `Err` hands an
    /// error on (the one it was given, or another).
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward_tokio::call::Fallback;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let not_found_is_empty = Fallback::from_fn(|error: u16| {
    ///     if error == 404 { Ok(Vec::new()) } else { Err(error) }
    /// });
    /// assert_eq!(not_found_is_empty.call(|| async { Err::<Vec<u8>, _>(404) }).await, Ok(vec![]));
    /// assert_eq!(not_found_is_empty.call(|| async { Err::<Vec<u8>, _>(503) }).await, Err(503));
    /// # }
    /// ```
    pub fn from_fn(replace: F) -> Self {
        Self::new(FromFn(replace))
    }
}

impl<F> Fallback<FromAsync<F>> {
    /// A fallback that asks the async `replace` about each error, as
    /// [`from_fn`](Fallback::from_fn) does: for an answer that takes a call of its own.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward_tokio::call::Fallback;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// async fn from_cache(key: &str) -> Option<String> {
    ///     (key == "eur").then(|| "1.08".to_string())
    /// }
    /// let cached = Fallback::from_async(|error: &'static str| async move {
    ///     from_cache("eur").await.ok_or(error)
    /// });
    /// let rate = cached.call(|| async { Err::<String, _>("rates down") }).await;
    /// assert_eq!(rate.as_deref(), Ok("1.08"));
    /// # }
    /// ```
    pub fn from_async(replace: F) -> Self {
        Self::new(FromAsync(replace))
    }
}

impl<F> Clone for Fallback<F> {
    fn clone(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<F: fmt::Debug> fmt::Debug for Fallback<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Fallback")
            .field("replace", &self.shared.replace)
            .field("name", &self.shared.name)
            .finish()
    }
}
