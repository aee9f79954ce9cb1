//! Why a classic breaker refused: the state it was in, and when it lets calls through again;
//! and a breaker that refuses every call until a time, to answer its checks without it.

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

/// A classic breaker that refuses every call until a time, whatever else comes: open within
/// its wait, or forced open. What [`ClassicBreaker::refusing`](super::ClassicBreaker::refusing)
/// returns, for a breaker shared between threads that answers those calls without its lock.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::classic::{Record, State};
/// use ironward::{CLASSIC, Classic, ClassicBreaker};
///
/// let s = Duration::from_secs;
/// let policy = Classic { record: Record::Consecutive { failures: 1 }, ..CLASSIC };
/// let mut breaker = ClassicBreaker::new(policy, s(0));
/// let permit = breaker.check(s(0)).expect("closed");
/// let _ = breaker.fail(permit, s(0));
/// let refusing = breaker.refusing().expect("open for a minute");
/// assert_eq!((refusing.until, refusing.forced), (s(60), false));
/// let reason = refusing.at(s(45)).expect("within the wait");
/// assert_eq!((reason.state, reason.next), (State::Open, s(15)));
/// assert_eq!(breaker.check(s(45)).err(), Some(reason));
/// assert_eq!(refusing.at(s(60)), None, "the wait is over: a check moves it half-open");
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Refusing {
    /// Until when, exclusive, on the breaker's clock: the end of the open wait, or
    /// `Duration::MAX` forced open.
    pub until: Duration,
    /// Forced open ([`Force::Open`](super::Force::Open)): every check refuses, whatever the
    /// time, until a retune lifts it.
    pub forced: bool,
    /// The failed share that last opened the breaker, as its refusals give it.
    pub failure_rate: f64,
    /// The slow share that last opened it.
    pub slow_rate: f64,
}

impl Refusing {
    /// The reason the breaker refuses a check with at `t`, the time it reads the check's
    /// `now` as (the later of it and the [`latest`](super::ClassicBreaker::latest) reading
    /// seen): open, the rest of the wait; forced open, `Duration::MAX`. `None` at or after
    /// `until`, where an open breaker's check moves it half-open.
    #[inline]
    #[must_use]
    pub fn at(&self, t: Duration) -> Option<ClassicReason> {
        let (state, next) = if self.forced {
            (State::ForcedOpen, Duration::MAX)
        } else {
            (
                State::Open,
                self.until.checked_sub(t).filter(|next| !next.is_zero())?,
            )
        };
        Some(ClassicReason {
            state,
            next,
            failure_rate: self.failure_rate,
            slow_rate: self.slow_rate,
        })
    }
}
