//! The hedge's place in a [`Pipeline`](super::Pipeline): the [`Hedge`] with the hooks that
//! read the pipeline's errors ([`HedgeWith`]), and the default of its `after`
//! ([`RefusalHalts`]).

use std::fmt;
use std::time::Duration;

use super::Refusal;
use crate::call::retry::{After, AnyError};
use crate::call::{CallError, Hedge, TimeoutReason};

/// A [`Hedge`] as a pipeline holds it, with the two hooks its calls run with, each over the
/// pipeline's error, `CallError<E, Refusal>`: `when` ([`When`](crate::call::retry::When): which errors let the other
/// copies race on; any other is fatal) and `after` ([`After`]: the wait before the next copy
/// that an error names, `Duration::MAX` for none to be sent).
///
/// Made by [`Builder::hedge`](super::Builder::hedge), its hooks replaced by
/// [`Builder::hedge_when`](super::Builder::hedge_when) and
/// [`Builder::hedge_after`](super::Builder::hedge_after); by default [`AnyError`] and
/// [`RefusalHalts`].
pub struct HedgeWith<W = AnyError, A = RefusalHalts> {
    hedge: Hedge,
    when: W,
    after: A,
}

impl HedgeWith {
    /// `hedge` with the default hooks.
    pub(super) fn new(hedge: Hedge) -> Self {
        Self {
            hedge,
            when: AnyError,
            after: RefusalHalts,
        }
    }
}

impl<W, A> HedgeWith<W, A> {
    /// The hedging policy.
    pub fn hedge(&self) -> &Hedge {
        &self.hedge
    }

    /// The hooks, by reference.
    pub(super) fn hooks(&self) -> (&W, &A) {
        (&self.when, &self.after)
    }

    /// The same hooks around another policy.
    pub(super) fn map(self, change: impl FnOnce(Hedge) -> Hedge) -> Self {
        Self {
            hedge: change(self.hedge),
            ..self
        }
    }

    /// The same with `when` replaced.
    pub(super) fn when<W2>(self, when: W2) -> HedgeWith<W2, A> {
        HedgeWith {
            hedge: self.hedge,
            when,
            after: self.after,
        }
    }

    /// The same with `after` replaced.
    pub(super) fn after<A2>(self, after: A2) -> HedgeWith<W, A2> {
        HedgeWith {
            hedge: self.hedge,
            when: self.when,
            after,
        }
    }
}

impl<W, A> fmt::Debug for HedgeWith<W, A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HedgeWith")
            .field("hedge", &self.hedge)
            .finish_non_exhaustive()
    }
}

/// The default `after` of a pipeline's hedge: a copy refused by a piece inside the hedge
/// stops the hedging (`Duration::MAX`, gRPC A6's pushback that says stop); the call's own
/// error and a timeout's cut name no wait, so the next copy goes at once (A6: a non-fatal
/// failure "shortcuts the hedging delay").
///
/// With the default `when` ([`AnyError`]) no error is fatal to the race, a refusal
/// included: the refusal speaks for the copy refused, not for the copies already let
/// through, which hold their room and may still answer, so they race on. But every copy
/// passes the same rate limit, concurrency limit and breaker, and a further copy sent at
/// once would meet the same refusal: each would be counted as refused (by an SRE breaker in
/// the very window that decides its drops) and spend the hedge's attempts and its budget's
/// tokens for nothing. So no copy is sent after a refusal; when none is left in flight, the
/// hedged round fails with the refusal, which the retry outside reads ([`Retryable`](super::Retryable)
/// waits out the wait it names if the backoff's cap allows). A hedge with a retry budget
/// counts the refused copy as one failure, as gRPC A6 counts a pushback that says stop.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward::GateReason;
/// use ironward_tokio::call::retry::After;
/// use ironward_tokio::call::{CallError, Refusal, pipeline::RefusalHalts};
///
/// let full = CallError::<&str, _>::Refused(Refusal::Gate(GateReason { held: 1, limit: 1 }));
/// assert_eq!(RefusalHalts.named(&full), Some(Duration::MAX), "no copy after it");
/// assert_eq!(RefusalHalts.named(&CallError::<_, Refusal>::Failed("reset")), None);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RefusalHalts;

impl<E> After<CallError<E, Refusal>> for RefusalHalts {
    fn named(&self, error: &CallError<E, Refusal>) -> Option<Duration> {
        match error {
            CallError::Failed(_)
            | CallError::Refused(Refusal::Timeout(TimeoutReason::Elapsed { .. })) => None,
            CallError::Refused(_) => Some(Duration::MAX),
        }
    }
}
