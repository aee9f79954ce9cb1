//! The word of a [`SharedPeriod`](super::SharedPeriod): how its bits are laid out, the slots
//! of terms its tag names, and what one load of it shows.

use core::time::Duration;

use super::super::Usage;
use crate::clock::nanos;
use crate::internal::sync::{AtomicU64, const_fn};

/// The bits of the word that hold the count: up to `u32::MAX + 1`, a quota of `u32::MAX`
/// plus the one refusal that is counted (a retune keeps the count, and it stops at the
/// largest quota it was counted under plus one).
pub(super) const COUNT_MASK: u64 = (1 << 33) - 1;

/// A bit of the word: the generation's start is being written by the call that opened it.
pub(super) const PENDING: u64 = 1 << 33;

/// The lowest bit of the generation, which names the period open: 28 bits above the flag.
pub(super) const GEN_ONE: u64 = 1 << 34;

/// The bits of the word that hold the generation.
pub(super) const GEN_MASK: u64 = ((1 << 28) - 1) << 34;

/// Where the terms' tag starts: the top two bits name which of four slots of terms the word
/// was written under.
pub(super) const TAG_SHIFT: u32 = 62;

/// The slots of terms the tag tells apart.
pub(super) const TAGS: usize = 4;

/// One tag's terms, each number in an atomic so that a retune can write them.
pub(super) struct Slot {
    pub(super) quota: AtomicU64,
    /// In nanoseconds, at least 1.
    pub(super) period: AtomicU64,
}

impl Slot {
    const_fn! {
        pub(super) fn new(quota: u32, period: u64) -> Self {
            Self {
                quota: AtomicU64::new(quota as u64),
                period: AtomicU64::new(period),
            }
        }
    }
}

/// One consistent reading of the counter: the word, its terms and its start.
#[derive(Clone, Copy)]
pub(super) struct View {
    pub(super) word: u64,
    pub(super) quota: u32,
    pub(super) period: u64,
    /// `None` while the opening's start is being written.
    pub(super) start: Option<u64>,
}

impl View {
    pub(super) fn count(&self) -> u64 {
        self.word & COUNT_MASK
    }

    /// The start of the period open at `t`, `Some(None)` for an opening in progress, `None`
    /// when no period is open: a reading before the start counts as the start, so that no
    /// earlier reading reopens a period.
    pub(super) fn open(&self, t: u64) -> Option<Option<u64>> {
        if self.word & PENDING != 0 {
            return Some(None);
        }
        let start = self.start?;
        (self.count() > 0 && t.saturating_sub(start) < self.period).then_some(Some(start))
    }

    /// How long after `t` the period open since `start` ends; the whole period while an
    /// opening is in progress.
    pub(super) fn wait(&self, start: Option<u64>, t: u64) -> Duration {
        let gone = start.map_or(0, |start| t.saturating_sub(start));
        Duration::from_nanos(self.period - gone)
    }
}

/// The period as [`Period::new`](crate::Period::new) reads it, in nanoseconds.
pub(super) const fn read_period(period: Duration) -> u64 {
    let ns = nanos(period);
    if ns == 0 { 1 } else { ns }
}

/// Where the quota stands after an event brought the count to `count`.
pub(super) fn standing(count: u64, quota: u32) -> Usage {
    let quota = u64::from(quota);
    if count < quota {
        Usage::Under
    } else if count == quota {
        Usage::Hit
    } else {
        Usage::Over
    }
}

/// What an admitted take leaves, from the word its own swap wrote: what a rate-limit layer
/// reports in its `RateLimit` header.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::{PeriodLeft, SharedPeriod, Usage};
///
/// let secs = Duration::from_secs;
/// let limit = SharedPeriod::new(3, secs(60));
/// let room = limit.check_left(secs(10)).expect("a fresh period");
/// assert_eq!(room, PeriodLeft { quota: Usage::Under, left: 2, reset: secs(60) });
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PeriodLeft {
    /// Where the quota stands after the event: [`Usage::Under`] or [`Usage::Hit`].
    pub quota: Usage,
    /// How many more events the period admits.
    pub left: u32,
    /// How long until the period ends. The whole period when the take counted into one that
    /// another thread was opening at that instant, whose start it had not yet written.
    pub reset: Duration,
}
