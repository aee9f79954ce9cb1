//! What one hedged call did ([`Hedged`]), and why a hedge refused a call ([`HedgeReason`]).

use std::fmt;
use std::time::Duration;

use ironward::grpc::Halt;

/// One hedged call's record, beside its answer from [`Hedging::recorded`](super::Hedging::recorded).
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward_tokio::call::Hedged;
///
/// let hedged = Hedged::default();
/// assert_eq!((hedged.attempts(), hedged.answered_by, hedged.stop), (0, None, None));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Hedged {
    /// The hedging delay the call ran with: the fixed one, or the tail's when it started.
    pub delay: Duration,
    /// When each attempt started, counted from the call's start, first started first (the
    /// first at zero): its length is the number of attempts started.
    pub started: Vec<Duration>,
    /// The attempt whose result the call returned (0 is the first): the winner, a fatal
    /// failure, or the last failure; `None` when the call was refused or cut.
    pub answered_by: Option<u32>,
    /// Why the call ended without a success: `NotRetryable` for a fatal error, else why no
    /// more hedges were sent (`AttemptsSpent`, `Throttled`, `Pushback`, `Deadline`); `None`
    /// after a success.
    pub stop: Option<Halt>,
}

impl Hedged {
    /// How many attempts were started.
    pub fn attempts(&self) -> u32 {
        u32::try_from(self.started.len()).unwrap_or(u32::MAX)
    }
}

/// Why a [`Hedge`](super::Hedge) answered with no result of the call's own: the deadline
/// the call ran under.
///
/// # Examples
///
/// ```
/// use ironward_tokio::call::HedgeReason;
///
/// assert_eq!(HedgeReason::Exceeded.to_string(), "deadline exceeded before the call started");
/// let cut = HedgeReason::Elapsed { attempts: 2 };
/// assert_eq!(cut.to_string(), "deadline passed with 2 attempts started, none answered");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HedgeReason {
    /// The deadline had passed when the call started: no attempt was made.
    Exceeded,
    /// The deadline passed before any attempt answered: every one was dropped.
    Elapsed {
        /// How many attempts had been started.
        attempts: u32,
    },
}

impl HedgeReason {
    /// The `reason` label it is counted under: `exceeded` or `elapsed`.
    pub fn as_str(self) -> &'static str {
        super::REASONS[self.index()]
    }

    pub(super) fn index(self) -> usize {
        match self {
            Self::Exceeded => 0,
            Self::Elapsed { .. } => 1,
        }
    }
}

impl fmt::Display for HedgeReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Exceeded => f.write_str("deadline exceeded before the call started"),
            Self::Elapsed { attempts: 1 } => {
                f.write_str("deadline passed with 1 attempt started, none answered")
            }
            Self::Elapsed { attempts } => write!(
                f,
                "deadline passed with {attempts} attempts started, none answered"
            ),
        }
    }
}

impl std::error::Error for HedgeReason {}
