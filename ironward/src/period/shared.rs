//! [`SharedPeriod`]: the fixed-window counter shared by `&`, its count in one atomic word.

use core::fmt;
use core::time::Duration;

use super::Usage;
use crate::clock::nanos;
use crate::internal::line::Line;
use crate::internal::sync::{AtomicBool, AtomicU64, Ordering, const_fn, spin_loop};
use crate::period::QuotaReason;
pub use word::PeriodLeft;
use word::*;

mod word;

/// A fixed-window counter that many threads share by `&`, without a lock: [`Period`]'s
/// rule, its count, its generation and the tag of its terms in one `AtomicU64`.
///
/// [`Period`]: crate::Period
///
/// Every task of every core asks the same quota, and a `Mutex<Period>` makes them take turns
/// for a compare and an add, the refused ones included. This is the same counter with the
/// state split where a lock-free form needs it: the word holds the count of the open period
/// (the events admitted and the first refusal, no more), a generation numbering the periods opened,
/// and a 2-bit tag naming the terms; the start of the open period sits in one of two slots,
/// chosen by the generation's parity. An admitted take is one compare-and-swap on the word;
/// a refusal, a count already past the quota, is two loads of it and one of the start and
/// terms, and writes nothing, so a quota that is refusing does not bounce its cache line
/// between the cores it refuses. It reads its inputs as `Period` does (a period below 1 ns
/// is 1 ns, a quota of 0 answers [`Usage::Over`] to every event, a quota of `u32::MAX` still
/// tells [`Usage::Hit`] from `Over`), and [`new`](Self::new) and [`aligned`](Self::aligned)
/// place periods as [`Period::new`](crate::Period::new) and
/// [`Period::aligned`](crate::Period::aligned) do: a period opens at the first event after
/// the last one closed, or periods lie on the multiples of the period on the caller's clock.
///
/// # How close it is to `Period`
///
/// Its state is integers, so on one thread, calls not overlapping, every
/// [`take`](Self::take), [`check`](Self::check) and [`left`](Self::left) answers exactly as
/// `Period`'s does, `Hit` included, and [`next`](Self::next) too on a clock that never steps
/// back. Two things a refusal would have to write are not kept:
///
/// * refused events past the first are not counted (`Period` counts every one, as go-zero's
///   `INCRBY` does), so a refusal's [`QuotaReason::count`] is the events admitted, the
///   first refusal and itself, a lower bound of `Period`'s, and after a
///   [`retune`](Self::retune) that raises the quota, a period that had refused two or more
///   events admits up to the new quota less its admitted events and one, where `Period`
///   admits the new quota less every event it counted;
/// * the latest reading seen (see "Time" below).
///
/// # Time
///
/// `now` is the caller's clock in whole nanoseconds, saturating after about 584 years, as
/// everywhere in the core. A `now` earlier than one already seen is not raised to the latest
/// seen, as `Period` raises it: keeping the latest reading would make every call write, and
/// between threads an earlier reading is the rule, not the exception (one thread reads the
/// clock, another swaps before it). It is read as what it says, and it never reopens a
/// period: a reading inside or after the start of the open period counts in it, a reading
/// before that start counts in it as though it were the start, and a period ends only at a
/// reading a period past its start. So a take at an earlier reading decides as `Period`
/// decides it; only the wait it reports ([`next`](Self::next), a refusal's
/// [`QuotaReason::next`]) is counted from the reading, longer by as much as the clock stepped
/// back, at most the whole period. A [`retune`](Self::retune) at an earlier reading tests
/// whether the period is open at that reading; on a clock that never steps back this and
/// `Period`'s reading agree.
///
/// # Why it never admits more than the quota per period under overlap
///
/// Each call takes effect at one instant: its successful compare-and-swap, or for a refusal
/// the second of two loads of the word that found it unchanged, with the start and the terms
/// loaded between them (a retune or an opening changes the generation, so an unchanged word
/// means they were the open period's). So the calls of all threads are the calls of one
/// counter made in the order of those instants, each at its own reading of the clock. The
/// count of a generation starts at 1 (the event that opened it) and grows by one a swap, and
/// an event is admitted only when the count it writes is at most the quota it read with the
/// word: a generation admits at most `quota` events. A take opens the next generation only
/// when the open one has ended at its reading (at least `period` past its start), or holds no
/// event, and its start is that reading, or the multiple of the period below it, so the
/// starts of generations that admitted anything lie at least a period apart. Over any run
/// between retunes, whatever the order and whichever readings the threads pass, the events
/// admitted are at most `quota` for each period-long stretch from the first start to the
/// latest reading, the bound a `Period` keeps.
///
/// Opening a period writes two things, the word and the start, and the word goes first: the
/// swap that opens generation `g + 1` also sets a flag saying its start is still being
/// written, and only its winner writes the start slot and then clears the flag. So each slot
/// has one writer per generation, and no thread waits for it: a take that finds the flag set
/// counts into the new generation as open (it was opened a moment ago) or is refused by its
/// count, and reports the whole period as the wait. Until the flag clears no one can end the
/// period, so the next opening never races the one in progress.
///
/// # Retuning under overlap
///
/// [`retune`](Self::retune) replaces the quota and the period while takes run. It writes the
/// new terms into the next of four slots, then swaps the word to the next generation under
/// the new tag, with the open period's count whole or none if it has ended, and writes the start (moved onto the new grid when aligned) as an opening does.
/// A take reads the tag with the word and decides under that slot's terms: before the
/// retune's swap under the old quota and period on the old count, after it under the new
/// ones on the count carried over, never a mix, and its own swap fails (and it decides again)
/// if the retune landed in between. The count carried over is whole, so the period open
/// across a retune admits at most the larger of the two quotas, as `Period`'s does (an
/// aligned one moved onto a coarser grid reaches back over time already counted, as
/// `Period`'s does too). Retunes wait for one another and for an opening's second write
/// (they are rare: a configuration reload); a take never waits.
///
/// The generation is 28 bits: a call could misread the word only if 2^28 periods opened or
/// retunes landed between its first load and its swap (a few instructions) and left the word
/// as it was. This type is built only for targets with 64-bit atomics (every tier-1 target).
/// It is not `Clone`: a copy would be a second counter, doubling what the pair admits, so
/// share it by `&`, an `Arc` or a `static` ([`new`](Self::new) is `const`).
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::{SharedPeriod, Usage};
/// use std::thread;
///
/// let secs = Duration::from_secs;
/// // Twenty a minute, counted from the first event, shared by four threads.
/// let limit = SharedPeriod::new(20, secs(60));
/// let admitted: usize = thread::scope(|s| {
///     let workers: Vec<_> = (0..4)
///         .map(|_| s.spawn(|| (0..10).filter(|_| limit.take(secs(5)) != Usage::Over).count()))
///         .collect();
///     workers.into_iter().map(|w| w.join().unwrap()).sum()
/// });
/// assert_eq!(admitted, 20);
/// // The period opened at 5 s: it ends at 65 s.
/// assert_eq!(limit.next(secs(5)), secs(60));
/// assert_eq!(limit.take(secs(65)), Usage::Under);
/// ```
pub struct SharedPeriod {
    /// `tag << 62 | generation << 34 | pending << 33 | count`. Alone on its line, so that a
    /// swap invalidates neither the start and terms every take reads nor whatever lies
    /// beside the counter in memory.
    state: Line<AtomicU64>,
    /// The start of the open period (or, holding no event, the earliest reading the next may
    /// open at), in nanoseconds on the caller's clock, at the generation's parity.
    starts: [AtomicU64; 2],
    /// The terms of the last four tags.
    terms: [Slot; TAGS],
    /// Whether periods lie on the multiples of the period.
    align: bool,
    /// Held by a retune, so that two never write the same slot of terms.
    retuning: AtomicBool,
}

/// A refused take: what it read, and the reading it decided at.
#[derive(Clone, Copy)]
struct Refused {
    view: View,
    start: Option<u64>,
    t: u64,
    /// The events counted, this one included.
    count: u64,
}

impl SharedPeriod {
    const_fn! {
        /// A counter no event has touched, admitting `quota` events per `period`, a period
        /// opening at the first event after the last one closed, as
        /// [`Period::new`](crate::Period::new) does; its clock starts at zero.
        ///
        /// # Examples
        ///
        /// ```
        /// use core::time::Duration;
        /// use ironward::{SharedPeriod, Usage};
        ///
        /// static LIMIT: SharedPeriod = SharedPeriod::new(1, Duration::from_secs(10));
        ///
        /// let secs = Duration::from_secs;
        /// assert_eq!(LIMIT.take(secs(7)), Usage::Hit);
        /// assert_eq!(LIMIT.take(secs(16)), Usage::Over);
        /// assert_eq!(LIMIT.take(secs(17)), Usage::Hit);
        /// ```
        pub fn new(quota: u32, period: Duration) -> Self {
            Self::with(quota, period, false)
        }
    }

    const_fn! {
        /// A counter no event has touched, admitting `quota` events per `period`, periods lying
        /// on the multiples of `period` on the caller's clock, as
        /// [`Period::aligned`](crate::Period::aligned) does: with `now` read as time since the
        /// Unix epoch, a daily quota resets at 00:00 UTC.
        ///
        /// # Examples
        ///
        /// ```
        /// use core::time::Duration;
        /// use ironward::{SharedPeriod, Usage};
        ///
        /// let secs = Duration::from_secs;
        /// let limit = SharedPeriod::aligned(1, secs(10));
        /// assert_eq!(limit.take(secs(7)), Usage::Hit);
        /// // The period is [0 s, 10 s): it ends at 10 s, whenever the first event came.
        /// assert_eq!(limit.next(secs(7)), secs(3));
        /// assert_eq!(limit.take(secs(10)), Usage::Hit);
        /// ```
        pub fn aligned(quota: u32, period: Duration) -> Self {
            Self::with(quota, period, true)
        }
    }

    const_fn! {
        /// [`new`](Self::new) or, with `align`, [`aligned`](Self::aligned).
        fn with(quota: u32, period: Duration, align: bool) -> Self {
            let period = read_period(period);
            Self {
                state: Line(AtomicU64::new(0)),
                starts: [AtomicU64::new(0), AtomicU64::new(0)],
                terms: [
                    Slot::new(quota, period),
                    Slot::new(0, 1),
                    Slot::new(0, 1),
                    Slot::new(0, 1),
                ],
                align,
                retuning: AtomicBool::new(false),
            }
        }
    }

    /// Counts one event at `now` and says where the quota stands, as
    /// [`Period::take`](crate::Period::take) does. This is [`check`](Self::check) with a
    /// refusal read as [`Usage::Over`].
    #[inline]
    #[must_use = "an unchecked take counts the event without enforcing the quota"]
    pub fn take(&self, now: Duration) -> Usage {
        match self.attempt(now) {
            Ok(room) => room.quota,
            Err(_) => Usage::Over,
        }
    }

    /// [`take`](Self::take) with the numbers behind a refusal, as
    /// [`Period::check`](crate::Period::check) gives them: `Ok(Under)` or `Ok(Hit)` for an
    /// event admitted, `Err` for one over the quota, with the quota, the count, and how long
    /// until the period ends, all from the loads the refusal decided by.
    ///
    /// The count is the events admitted, the first refusal and this one (saturating at
    /// `u32::MAX`): refusals past the first are not counted, so that a refusal writes
    /// nothing. The wait is counted from `now` (see the type's docs on time).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::{SharedPeriod, Usage};
    ///
    /// let secs = Duration::from_secs;
    /// let limit = SharedPeriod::new(1, secs(10));
    /// assert_eq!(limit.check(secs(3)), Ok(Usage::Hit));
    /// let reason = limit.check(secs(5)).expect_err("the quota is used up");
    /// assert_eq!((reason.count, reason.quota, reason.next), (2, 1, secs(8)));
    /// ```
    #[inline]
    #[must_use = "an unchecked take counts the event without enforcing the quota"]
    pub fn check(&self, now: Duration) -> Result<Usage, QuotaReason> {
        self.check_left(now).map(|room| room.quota)
    }

    /// [`check`](Self::check), answering an admitted take with what it left: the events the
    /// period still admits and how long until it ends, worked out from the word its own
    /// compare-and-swap wrote. That is what a rate-limit layer reports as its remaining
    /// quota and its reset, without a second pass that another thread's take could slip
    /// before.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::{SharedPeriod, Usage};
    ///
    /// let secs = Duration::from_secs;
    /// let limit = SharedPeriod::aligned(2, secs(60));
    /// let room = limit.check_left(secs(45)).expect("room");
    /// assert_eq!((room.quota, room.left, room.reset), (Usage::Under, 1, secs(15)));
    /// let room = limit.check_left(secs(50)).expect("room");
    /// assert_eq!((room.quota, room.left, room.reset), (Usage::Hit, 0, secs(10)));
    /// assert!(limit.check_left(secs(55)).is_err());
    /// ```
    #[inline]
    #[must_use = "an unchecked take counts the event without enforcing the quota"]
    pub fn check_left(&self, now: Duration) -> Result<PeriodLeft, QuotaReason> {
        self.attempt(now).map_err(|refused| {
            let view = refused.view;
            QuotaReason {
                count: u32::try_from(refused.count).unwrap_or(u32::MAX),
                quota: view.quota,
                next: view.wait(refused.start, refused.t),
            }
        })
    }

    /// How many more events the period admits at `now`, without changing anything: the
    /// whole quota when no period is open at `now`, since the next event opens one. Under
    /// overlap, as of its loads.
    #[must_use]
    pub fn left(&self, now: Duration) -> u32 {
        let view = self.view(self.state.load(Ordering::Acquire));
        match view.open(nanos(now)) {
            // Below the quota the difference fits a `u32`.
            Some(_) => u32::try_from(u64::from(view.quota).saturating_sub(view.count()))
                .unwrap_or(u32::MAX),
            None => view.quota,
        }
    }

    /// How long after `now` the open period ends, without changing anything: zero when no
    /// period is open at `now`, because the next event would open one. Counted from `now`,
    /// so at a reading before the period's start it is the whole period.
    #[must_use = "next only computes the wait; it counts nothing"]
    pub fn next(&self, now: Duration) -> Duration {
        let view = self.view(self.state.load(Ordering::Acquire));
        let t = nanos(now);
        match view.open(t) {
            Some(start) => view.wait(start, t),
            None => Duration::ZERO,
        }
    }

    /// How long the counter takes to be as good as new when left alone: its period, as
    /// [`Period::idle`](crate::Period::idle) says.
    #[must_use]
    pub fn idle(&self) -> Duration {
        self.period()
    }

    /// The most events a period admits, as read by [`new`](Self::new) (or the latest
    /// retune).
    #[must_use]
    pub fn quota(&self) -> u32 {
        self.view(self.state.load(Ordering::Acquire)).quota
    }

    /// How long a period is, as read by [`new`](Self::new) (or the latest retune).
    #[must_use]
    pub fn period(&self) -> Duration {
        Duration::from_nanos(self.view(self.state.load(Ordering::Acquire)).period)
    }

    /// Changes the quota and the period in place at `now`, keeping the period open at `now`
    /// and its count, as [`Period::retune`](crate::Period::retune) does: the open period
    /// keeps its start (on an aligned counter, moved to the multiple of the new period below
    /// it) and ends at its start plus the new period; one that had ended stays ended. A
    /// lower quota counts the events already admitted, a higher one admits the difference at
    /// once. Retuning to the quota and period the counter has (as read) changes nothing.
    ///
    /// The count and the terms change in one compare-and-swap: a take overlapping it is
    /// decided under the old terms on the old count or under the new terms on the count
    /// carried over, never a mix (see the type's docs). Retunes wait for one another; takes
    /// do not wait for them.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::{SharedPeriod, Usage};
    ///
    /// let secs = Duration::from_secs;
    /// let limit = SharedPeriod::new(10, secs(60));
    /// for _ in 0..4 {
    ///     assert_eq!(limit.take(secs(5)), Usage::Under);
    /// }
    /// // Five a period now: the four already taken count, one is left.
    /// limit.retune(5, secs(60), secs(20));
    /// assert_eq!(limit.left(secs(20)), 1);
    /// assert_eq!(limit.take(secs(20)), Usage::Hit);
    /// assert_eq!(limit.take(secs(20)), Usage::Over);
    /// // A two-minute period: the one open since 5 s now ends at 125 s.
    /// limit.retune(5, secs(120), secs(30));
    /// assert_eq!(limit.next(secs(30)), secs(95));
    /// ```
    pub fn retune(&self, quota: u32, period: Duration, now: Duration) {
        let period = read_period(period);
        while self
            .retuning
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            spin_loop();
        }
        let t = nanos(now);
        let mut word = self.state.load(Ordering::Acquire);
        let tag = (word >> TAG_SHIFT) as usize;
        // No other retune writes while this one holds the flag, so these terms are stable.
        let old = &self.terms[tag];
        let old_period = old.period.load(Ordering::Acquire);
        if (old.quota.load(Ordering::Acquire), old_period) != (u64::from(quota), period) {
            let next = (tag + 1) % TAGS;
            self.terms[next]
                .quota
                .store(u64::from(quota), Ordering::Release);
            self.terms[next].period.store(period, Ordering::Release);
            loop {
                if word & PENDING != 0 {
                    // An opening is between its two writes: a few instructions.
                    spin_loop();
                    word = self.state.load(Ordering::Acquire);
                    continue;
                }
                // Read after the word: a start of a later generation fails the swap below.
                let start = self.starts[Self::parity(word)].load(Ordering::Acquire);
                let count = word & COUNT_MASK;
                let open = count > 0 && t.saturating_sub(start) < old_period;
                let (count, start) = if open {
                    let start = if self.align {
                        start - start % period
                    } else {
                        start
                    };
                    if t.saturating_sub(start) < period {
                        // Kept whole, past a lower quota too: at most the larger quota plus
                        // one, so it stays in its 33 bits.
                        (count, start)
                    } else {
                        // Ended under the new period: the next event opens one.
                        (0, t)
                    }
                } else if count == 0 {
                    (0, t.max(start))
                } else {
                    (0, t)
                };
                let retuned = (next as u64) << TAG_SHIFT | Self::next_gen(word) | PENDING | count;
                // Release: a take that loads the new tag sees the terms written above.
                match self.state.compare_exchange_weak(
                    word,
                    retuned,
                    Ordering::AcqRel,
                    Ordering::Acquire,
                ) {
                    Ok(_) => {
                        self.publish(retuned, start);
                        break;
                    }
                    Err(current) => word = current,
                }
            }
        }
        self.retuning.store(false, Ordering::Release);
    }

    /// The one decision: a loop of compare-and-swaps for an admitted take or an opening, two
    /// loads for a refusal.
    #[inline]
    fn attempt(&self, now: Duration) -> Result<PeriodLeft, Refused> {
        let t = nanos(now);
        let mut view = self.view(self.state.load(Ordering::Acquire));
        loop {
            let word = view.word;
            let count = view.count();
            if let Some(start) = view.open(t) {
                if count > u64::from(view.quota) {
                    // What the word counted before this refusal, and this one.
                    let count = count + 1;
                    return Err(Refused {
                        view,
                        start,
                        t,
                        count,
                    });
                }
                // At most `quota + 1 ≤ 2^32`: the count stays in its 33 bits.
                match self.state.compare_exchange_weak(
                    word,
                    word + 1,
                    Ordering::Acquire,
                    Ordering::Acquire,
                ) {
                    Ok(_) => return self.counted(view, count + 1, start, t),
                    Err(current) => view = self.view(current),
                }
                continue;
            }
            // No period open at `t`: open the next, at `t` or, holding no event, at the
            // earliest reading it may open at.
            let at = match view.start {
                Some(floor) if count == 0 => t.max(floor),
                _ => t,
            };
            let start = if self.align {
                at - at % view.period
            } else {
                at
            };
            let opened =
                (word & !(GEN_MASK | PENDING | COUNT_MASK)) | Self::next_gen(word) | PENDING | 1;
            match self.state.compare_exchange_weak(
                word,
                opened,
                Ordering::Acquire,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    self.publish(opened, start);
                    return self.counted(view, 1, Some(start), t);
                }
                Err(current) => view = self.view(current),
            }
        }
    }

    /// The answer for an event that brought the count to `count`, in the period open since
    /// `start` (`None` while another thread writes it).
    #[inline]
    fn counted(
        &self,
        view: View,
        count: u64,
        start: Option<u64>,
        t: u64,
    ) -> Result<PeriodLeft, Refused> {
        match standing(count, view.quota) {
            Usage::Over => Err(Refused {
                view,
                start,
                t,
                count,
            }),
            quota => Ok(PeriodLeft {
                quota,
                // Below the quota the difference fits a `u32`.
                left: u32::try_from(u64::from(view.quota) - count).unwrap_or(u32::MAX),
                reset: view.wait(start, t),
            }),
        }
    }

    /// The second write of an opening: the start of the generation `word` opened, then the
    /// flag cleared. Nobody else opens a period or retunes while the flag is set, so this
    /// is the slot's only writer and the word keeps its generation.
    fn publish(&self, word: u64, start: u64) {
        self.starts[Self::parity(word)].store(start, Ordering::Release);
        self.state.fetch_and(!PENDING, Ordering::Release);
    }

    /// The word read with its terms and start, loaded again until unchanged: a retune or an
    /// opening in between changes its generation.
    #[inline]
    fn view(&self, mut word: u64) -> View {
        loop {
            let slot = &self.terms[(word >> TAG_SHIFT) as usize];
            let quota = slot.quota.load(Ordering::Acquire) as u32;
            let period = slot.period.load(Ordering::Acquire);
            let start = self.starts[Self::parity(word)].load(Ordering::Acquire);
            let again = self.state.load(Ordering::Acquire);
            if again == word {
                return View {
                    word,
                    quota,
                    period,
                    start: (word & PENDING == 0).then_some(start),
                };
            }
            word = again;
        }
    }

    /// Which start slot a word's generation uses.
    #[inline]
    fn parity(word: u64) -> usize {
        ((word & GEN_ONE) != 0) as usize
    }

    /// The generation after the word's, wrapping in its bits.
    #[inline]
    fn next_gen(word: u64) -> u64 {
        (word & GEN_MASK).wrapping_add(GEN_ONE) & GEN_MASK
    }
}

/// One consistent reading: the count and start shown and the terms were in force together.
impl fmt::Debug for SharedPeriod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let view = self.view(self.state.load(Ordering::Acquire));
        f.debug_struct("SharedPeriod")
            .field("quota", &view.quota)
            .field("period", &Duration::from_nanos(view.period))
            .field("align", &self.align)
            .field("count", &view.count())
            .field("start", &view.start.map(Duration::from_nanos))
            .finish()
    }
}

// The count's bits hold a quota of `u32::MAX` plus one, below the flag.
const _: () = assert!((u32::MAX as u64) < COUNT_MASK && COUNT_MASK < PENDING);

#[cfg(test)]
mod tests;
