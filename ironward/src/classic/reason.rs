//! Why a classic breaker refused: the state it was in, and when it lets calls through again.

use core::fmt;
use core::time::Duration;

use super::State;

/// Why a [`ClassicBreaker`](super::ClassicBreaker) refused a call, from
/// [`check`](super::ClassicBreaker::check).
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::classic::{Force, State};
/// use ironward::{CLASSIC, Classic, ClassicBreaker};
///
/// let mut breaker = ClassicBreaker::new(Classic { force: Force::Open, ..CLASSIC }, Duration::ZERO);
/// let reason = breaker.check(Duration::ZERO).expect_err("forced open");
/// assert_eq!(reason.state, State::ForcedOpen);
/// assert_eq!(reason.to_string(), "breaker forced open");
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClassicReason {
    /// The state that refused: open, half-open (every probe out, or the call outside a
    /// progressive stage's share), or forced open.
    pub state: State,
    /// How long until the breaker lets a call through again, as far as it knows: the rest of
    /// the open wait; half-open with every probe out, until the first probe's lease runs out;
    /// zero in a progressive stage (a later call may fall in its share); `Duration::MAX` when
    /// forced open.
    pub next: Duration,
    /// The share of failed calls that opened the breaker (of its record, or of its probes).
    pub failure_rate: f64,
    /// The share of slow calls that opened it.
    pub slow_rate: f64,
}

impl fmt::Display for ClassicReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.state {
            State::ForcedOpen => f.write_str("breaker forced open"),
            State::HalfOpen if self.next.is_zero() => {
                f.write_str("breaker half-open: the call is outside the share it lets through")
            }
            State::HalfOpen => write!(
                f,
                "breaker half-open with every probe out: a place again in {:?}",
                self.next
            ),
            _ => write!(
                f,
                "breaker open ({:.1}% failed, {:.1}% slow): half-open in {:?}",
                self.failure_rate * 100.0,
                self.slow_rate * 100.0,
                self.next
            ),
        }
    }
}

impl core::error::Error for ClassicReason {}
