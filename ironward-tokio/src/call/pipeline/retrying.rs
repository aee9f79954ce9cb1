//! The retry's place in a [`Pipeline`](super::Pipeline): the policy with the hooks that read
//! the pipeline's errors ([`RetryWith`]), and their defaults ([`Retryable`], [`RefusalWait`]).

use std::fmt;
use std::time::Duration;

use super::Refusal;
use crate::call::retry::{After, Notify, Silent, When};
use crate::call::{CallError, Retry, TimeoutReason};

/// A [`Retry`] as a pipeline holds it, with the three hooks its calls run with: `when`
/// ([`When`]), `after` ([`After`]) and `notify` ([`Notify`]), each over the pipeline's
/// error, `CallError<E, Refusal>`, so that each sees which piece refused.
///
/// Made by [`Builder::retry`](super::Builder::retry), its hooks replaced by
/// [`Builder::when`](super::Builder::when), [`after`](super::Builder::after) and
/// [`notify`](super::Builder::notify); by default [`Retryable`], [`RefusalWait`] and
/// [`Silent`].
pub struct RetryWith<W = Retryable, A = RefusalWait, N = Silent> {
    retry: Retry,
    when: W,
    after: A,
    notify: N,
}

impl RetryWith {
    /// `retry` with the default hooks.
    pub(super) fn new(retry: Retry) -> Self {
        Self {
            retry,
            when: Retryable,
            after: RefusalWait,
            notify: Silent,
        }
    }
}

impl<W, A, N> RetryWith<W, A, N> {
    /// The retry policy.
    pub fn retry(&self) -> &Retry {
        &self.retry
    }

    /// The hooks, by reference.
    pub(super) fn hooks(&self) -> (&W, &A, &N) {
        (&self.when, &self.after, &self.notify)
    }

    /// The same hooks around another policy.
    pub(super) fn map(self, change: impl FnOnce(Retry) -> Retry) -> Self {
        Self {
            retry: change(self.retry),
            ..self
        }
    }

    /// The same with `when` replaced.
    pub(super) fn when<W2>(self, when: W2) -> RetryWith<W2, A, N> {
        RetryWith {
            retry: self.retry,
            when,
            after: self.after,
            notify: self.notify,
        }
    }

    /// The same with `after` replaced.
    pub(super) fn after<A2>(self, after: A2) -> RetryWith<W, A2, N> {
        RetryWith {
            retry: self.retry,
            when: self.when,
            after,
            notify: self.notify,
        }
    }

    /// The same with `notify` replaced.
    pub(super) fn notify<N2>(self, notify: N2) -> RetryWith<W, A, N2> {
        RetryWith {
            retry: self.retry,
            when: self.when,
            after: self.after,
            notify,
        }
    }
}

impl<W, A, N> fmt::Debug for RetryWith<W, A, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RetryWith")
            .field("retry", &self.retry)
            .finish_non_exhaustive()
    }
}

/// The default `when` of a pipeline's retry: the call's own failure, a timeout's cut, and a
/// refusal that names when to come back are worth another attempt; any other refusal is not.
///
/// - **The call's own error** ([`CallError::Failed`]): retried, as a bare [`Retry`]
///   retries every error; say otherwise with [`Builder::when`](super::Builder::when).
/// - **A timeout's cut** ([`TimeoutReason::Elapsed`]): the backend was slow, which is what a
///   retry is for. A deadline already passed ([`TimeoutReason::Exceeded`]) is not: the
///   retry stops at that deadline too.
/// - **A refusal that names a wait** ([`Refusal::retry_after`]: a classic breaker refusing
///   open, a rate limit over its rate): retried after that wait, which [`RefusalWait`]
///   reads, as HTTP's `Retry-After` is, and as Polly's circuit-aware retry waits out the
///   break (its circuit-breaker strategy docs): a wait above the backoff's cap stops the
///   call at once with the refusal
///   ([`Cause::ServerDelayExceedsCap`](ironward::retry::Cause::ServerDelayExceedsCap)), so
///   a breaker open for a minute is not waited on, nor a rate with no room for a minute
///   (nor one that never has room: its wait is `Duration::MAX`). A rate limit's own
///   [`wait_up_to`](crate::call::RateLimit::wait_up_to) is the wait it takes inside one
///   attempt; this is the retry's, between attempts, each of which spends from the rate.
/// - **Any other refusal** (a gate or a limiter full, an SRE breaker's drop, a classic one
///   half-open, a hedge's deadline passed): not retried. Each is a local decision that holds for as long as the load
///   that made it, which no backoff measures; retrying it would queue in the retry what the
///   gate refuses to queue, and an SRE breaker counts each refused attempt in its window, so
///   a retried drop raises the share it drops (Google's SRE book, "Handling Overload").
///
/// # Examples
///
/// ```
/// use ironward::GateReason;
/// use ironward_tokio::call::retry::When;
/// use ironward_tokio::call::{CallError, Refusal, Retryable, TimeoutReason};
///
/// let failed = CallError::<_, Refusal>::Failed("reset");
/// let cut = CallError::<&str, _>::Refused(Refusal::Timeout(TimeoutReason::Elapsed { budget: Default::default() }));
/// let full = CallError::<&str, _>::Refused(Refusal::Gate(GateReason { held: 1, limit: 1 }));
/// assert!(Retryable.retryable(&failed) && Retryable.retryable(&cut));
/// assert!(!Retryable.retryable(&full));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Retryable;

impl<E> When<CallError<E, Refusal>> for Retryable {
    fn retryable(&self, error: &CallError<E, Refusal>) -> bool {
        match error {
            CallError::Failed(_) => true,
            CallError::Refused(Refusal::Timeout(TimeoutReason::Elapsed { .. })) => true,
            CallError::Refused(refusal) => refusal.retry_after().is_some(),
        }
    }
}

/// The default `after` of a pipeline's retry: the wait a refusal names
/// ([`Refusal::retry_after`]), none for the call's own error.
///
/// A custom [`Builder::after`](super::Builder::after) replaces it; one that reads a wait
/// from the call's own error (an HTTP `Retry-After`) keeps the refusals' by asking this one
/// for the rest.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward_tokio::call::retry::After;
/// use ironward_tokio::call::{CallError, Refusal, RefusalWait};
///
/// assert_eq!(RefusalWait.named(&CallError::<_, Refusal>::Failed(503)), None);
/// let ours = |error: &CallError<u16, Refusal>| match error {
///     CallError::Failed(503) => Some(Duration::from_secs(1)),
///     other => RefusalWait.named(other),
/// };
/// assert_eq!(ours(&CallError::Failed(503)), Some(Duration::from_secs(1)));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RefusalWait;

impl<E> After<CallError<E, Refusal>> for RefusalWait {
    fn named(&self, error: &CallError<E, Refusal>) -> Option<Duration> {
        error.refusal().and_then(Refusal::retry_after)
    }
}

/// A hook lent to one call: the pipeline keeps its own.
pub(super) struct Lent<'a, H>(pub(super) &'a H);

impl<E, H: When<E>> When<E> for Lent<'_, H> {
    fn retryable(&self, error: &E) -> bool {
        self.0.retryable(error)
    }
}

impl<E, H: After<E>> After<E> for Lent<'_, H> {
    fn named(&self, error: &E) -> Option<Duration> {
        self.0.named(error)
    }
}

impl<E, H: Notify<E>> Notify<E> for Lent<'_, H> {
    fn notify(&self, error: &E, wait: Duration) {
        self.0.notify(error, wait);
    }
}
