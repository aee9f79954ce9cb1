//! [`CallError`]: what a piece of the front door answers instead of the call's value.

use std::error::Error;
use std::fmt;

/// Why a call through a piece of the front door has no value: the piece refused it, or the
/// call ran and failed with its own error.
///
/// `R` is the piece's refusal, carrying the numbers that decided it: the breaker family's
/// reason ([`SreReason`](ironward::SreReason), [`ClassicReason`](ironward::ClassicReason)),
/// a [`TimeoutReason`](super::TimeoutReason), a [`GateReason`](ironward::GateReason), a
/// [`LimiterRefusal`](crate::LimiterRefusal) or a [`RateReason`](super::RateReason). `E` is
/// the call's own error, untouched.
///
/// Pieces nest by nesting calls, and so do their errors: a breaker around a timeout answers
/// `CallError<CallError<E, TimeoutReason>, ClassicReason>`, in which a timeout is the
/// breaker's `Failed` (the breaker counted it as a failure) and the breaker's refusal is
/// `Refused`. `Display` and [`Error::source`] are the inner value's own, so a nested error
/// prints as the one thing that happened.
///
/// The enum is `#[non_exhaustive]`: a piece that ends a call another way (a retry that gives
/// up) adds its variant without breaking a `match` written today.
///
/// # Examples
///
/// ```
/// use ironward::GateReason;
/// use ironward_tokio::call::CallError;
///
/// let refused: CallError<std::io::Error, _> = CallError::Refused(GateReason { held: 4, limit: 4 });
/// assert!(refused.is_refused());
/// assert_eq!(refused.to_string(), "gate full: 4 held against a limit of 4");
///
/// let failed: CallError<_, GateReason> = CallError::Failed("backend down");
/// assert_eq!(failed.failure(), Some(&"backend down"));
/// assert_eq!(failed.into_failure(), Some("backend down"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CallError<E, R> {
    /// The piece refused the call: it never ran, or (a timeout) it was cut off.
    Refused(R),
    /// The call ran and failed with its own error.
    Failed(E),
}

impl<E, R> CallError<E, R> {
    /// Whether the piece refused the call.
    pub fn is_refused(&self) -> bool {
        matches!(self, Self::Refused(_))
    }

    /// Whether the call ran and failed.
    pub fn is_failed(&self) -> bool {
        matches!(self, Self::Failed(_))
    }

    /// The piece's refusal, if it refused.
    pub fn refusal(&self) -> Option<&R> {
        match self {
            Self::Refused(reason) => Some(reason),
            Self::Failed(_) => None,
        }
    }

    /// The call's own error, if it ran and failed.
    pub fn failure(&self) -> Option<&E> {
        match self {
            Self::Failed(error) => Some(error),
            Self::Refused(_) => None,
        }
    }

    /// The call's own error, if it ran and failed.
    pub fn into_failure(self) -> Option<E> {
        match self {
            Self::Failed(error) => Some(error),
            Self::Refused(_) => None,
        }
    }

    /// The same error with the call's own error mapped by `f`.
    pub fn map_failure<F>(self, f: impl FnOnce(E) -> F) -> CallError<F, R> {
        match self {
            Self::Failed(error) => CallError::Failed(f(error)),
            Self::Refused(reason) => CallError::Refused(reason),
        }
    }
}

impl<E: fmt::Display, R: fmt::Display> fmt::Display for CallError<E, R> {
    /// The refusal's or the error's own line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Refused(reason) => reason.fmt(f),
            Self::Failed(error) => error.fmt(f),
        }
    }
}

impl<E: Error, R: Error> Error for CallError<E, R> {
    /// The inner value's own source, as `Display` is its own line.
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match self {
            Self::Refused(reason) => reason.source(),
            Self::Failed(error) => error.source(),
        }
    }
}
