//! The fast paths of [`SharedClassicBreaker`]: the opening it publishes, the stripes that count
//! successes under it, the refusal it publishes for an open breaker, and how a turn under the
//! lock closes and opens them.

use std::sync::atomic::{AtomicU64, Ordering, fence};
use std::time::Duration;

use ironward::ClassicReason;
use ironward::classic::{Refusing, State};

use super::{Exact, SharedClassicBreaker};
use crate::clock::nanos;
use crate::stripe;

/// What the calls of a healthy breaker, or of a refusing one, read without the lock, written
/// only while every stripe is closed (see the type's docs).
#[derive(Debug, Default)]
pub(super) struct Opening {
    /// Until when, in nanoseconds and exclusive, a call is let through and its success
    /// counted: 0 while the refusing path is open, so that a pass's own test of the time
    /// sends its success to the lock, and the refusing path costs a pass no test of its own.
    horizon: AtomicU64,
    /// The exact breaker's stage: a permit of another counts for nothing.
    epoch: AtomicU64,
    /// The exact breaker's clock at the opening, in nanoseconds: for either path.
    base: AtomicU64,
    /// The policy's `slow_call`, in nanoseconds.
    slow: AtomicU64,
    /// What a refusing breaker refuses with ([`Refusing`]): until when, in nanoseconds and
    /// exclusive, whether it was forced open (1) or not (0), and the shares that opened it,
    /// as bits.
    until: AtomicU64,
    forced: AtomicU64,
    failure_rate: AtomicU64,
    slow_rate: AtomicU64,
    /// How many changes of state wait in the queue; not part of the opening, but read as
    /// often and written as rarely, so on its line.
    pub(super) pending: AtomicU64,
}

/// The refusal published, as the fast path reads it: [`Refusing`] with its end in
/// nanoseconds.
#[derive(Debug, Clone, Copy)]
struct Refusal {
    until: u64,
    forced: bool,
    failure_rate: f64,
    slow_rate: f64,
}

impl Refusal {
    /// What the exact breaker refused with, for publishing.
    fn new(refusing: Refusing) -> Self {
        Self {
            until: nanos(refusing.until),
            forced: refusing.forced,
            failure_rate: refusing.failure_rate,
            slow_rate: refusing.slow_rate,
        }
    }

    /// [`Refusing::at`] of the time `t` in nanoseconds: the same answer (the tests hold it to
    /// that), in integers rather than in `Duration`s, which cost a call on the refusing path
    /// more than the rest of its answer.
    #[inline]
    fn at(self, t: u64) -> Option<ClassicReason> {
        let next = if self.forced {
            Duration::MAX
        } else if t < self.until {
            Duration::from_nanos(self.until - t)
        } else {
            return None;
        };
        let state = if self.forced {
            State::ForcedOpen
        } else {
            State::Open
        };
        Some(ClassicReason {
            state,
            next,
            failure_rate: self.failure_rate,
            slow_rate: self.slow_rate,
        })
    }
}

impl Opening {
    /// The refusal published, read with relaxed loads: whole only for a reader whose second
    /// look at its word finds it unchanged.
    #[inline]
    fn refusal(&self) -> Refusal {
        let bits = |word: &AtomicU64| f64::from_bits(word.load(Ordering::Relaxed));
        Refusal {
            until: self.until.load(Ordering::Relaxed),
            forced: self.forced.load(Ordering::Relaxed) != 0,
            failure_rate: bits(&self.failure_rate),
            slow_rate: bits(&self.slow_rate),
        }
    }

    /// Publishes `refusal`; only while every word is closed.
    fn publish(&self, refusal: Refusal) {
        for (word, value) in [
            (&self.until, refusal.until),
            (&self.forced, u64::from(refusal.forced)),
            (&self.failure_rate, refusal.failure_rate.to_bits()),
            (&self.slow_rate, refusal.slow_rate.to_bits()),
        ] {
            word.store(value, Ordering::Relaxed);
        }
    }
}

/// What one thread (or a few) reads and adds to between two turns under the lock.
#[derive(Debug)]
pub(super) struct Stripe {
    /// `tag << 40 | successes` while the healthy path is open, `tag << 40 | REFUSING` while
    /// the refusing path is, or [`CLOSED`] while both are closed: the opening this is, which
    /// path, and the successes counted on the stripe since it opened.
    pub(super) word: AtomicU64,
    /// The latest time a fast call on this stripe saw, in nanoseconds.
    latest: AtomicU64,
}

impl Default for Stripe {
    fn default() -> Self {
        Self {
            word: AtomicU64::new(CLOSED),
            latest: AtomicU64::new(0),
        }
    }
}

/// A stripe's word while the fast paths are closed: no call reads an opening from it.
pub(super) const CLOSED: u64 = 1 << 63;

/// Where a word's tag starts; below it, the refusing mark and its count of successes.
const TAG_SHIFT: u32 = 40;

/// The tags an opening takes, in turn: 2^23.
const TAGS: u64 = 1 << 23;

/// A word's mark for an open refusing path: the opening is a refusal (its horizon 0, so no
/// call is let through on it and no success counted).
pub(super) const REFUSING: u64 = 1 << (TAG_SHIFT - 1);

/// A word's count of successes. At its largest the next success takes the lock instead.
pub(super) const COUNT: u64 = REFUSING - 1;

impl SharedClassicBreaker {
    /// Lets a call at `now` through on the opening, if the healthy path is open (the word
    /// neither closed nor refusing) and `now` (read as the breaker's clock reads it) is before
    /// the horizon: the stage and time of its permit, or `None`.
    #[inline(always)]
    pub(super) fn admit(&self, now: u64) -> Option<(u64, u64)> {
        let stripe = self.stripes.mine();
        let word = stripe.word.load(Ordering::Acquire);
        if word & CLOSED != 0 || word & REFUSING != 0 {
            return None;
        }
        let opening = &*self.opening;
        let horizon = opening.horizon.load(Ordering::Relaxed);
        let epoch = opening.epoch.load(Ordering::Relaxed);
        let base = opening.base.load(Ordering::Relaxed);
        // The opening's loads come before the second look: one that read a later open's
        // writes makes the close before them visible to it, and the tag differs.
        fence(Ordering::Acquire);
        if (stripe.word.load(Ordering::Relaxed) ^ word) & !COUNT != 0 {
            return None;
        }
        let reading = stripe.read(now, base);
        if reading.at >= horizon {
            return None;
        }
        stripe.saw(reading);
        Some((epoch, reading.at))
    }

    /// Refuses a call at `now` on the refusal published, if the refusing path is open and the
    /// refusal holds at `now` read as the breaker's clock reads it: its reason, or `None`.
    #[inline(always)]
    pub(super) fn refuse(&self, now: u64) -> Option<ClassicReason> {
        let stripe = self.stripes.mine();
        let word = stripe.word.load(Ordering::Acquire);
        if word & (CLOSED | REFUSING) != REFUSING {
            return None;
        }
        let opening = &*self.opening;
        let refusal = opening.refusal();
        let base = opening.base.load(Ordering::Relaxed);
        // As in `admit`: the loads before the second look.
        fence(Ordering::Acquire);
        if stripe.word.load(Ordering::Relaxed) != word {
            return None;
        }
        let reading = stripe.read(now, base);
        let reason = refusal.at(reading.at)?;
        stripe.saw(reading);
        Some(reason)
    }

    /// Counts the success at `now` of a call let through closed at `at` in stage `epoch` on
    /// the thread's stripe, if the fast path is open in that stage, `now` is before the
    /// horizon and the call was not slow: whether it did, or the call goes to the lock.
    #[inline(always)]
    pub(super) fn count(&self, epoch: u64, at: u64, now: u64) -> bool {
        let stripe = self.stripes.mine();
        let opening = &*self.opening;
        let mut word = stripe.word.load(Ordering::Acquire);
        loop {
            // One test for a word closed, refusing (whose horizon of 0 would send the call to
            // the lock anyway) or at a full count: each sets a high bit of the word plus one,
            // the full count by its carry into the refusing mark.
            if word.wrapping_add(1) & (CLOSED | REFUSING) != 0 {
                return false;
            }
            let horizon = opening.horizon.load(Ordering::Relaxed);
            let stage = opening.epoch.load(Ordering::Relaxed);
            let base = opening.base.load(Ordering::Relaxed);
            let slow = opening.slow.load(Ordering::Relaxed);
            // As in `admit`, before the swap that the reads are checked by.
            fence(Ordering::Acquire);
            let reading = stripe.read(now, base);
            let t = reading.at;
            if stage != epoch || t >= horizon || t.saturating_sub(at) > slow {
                return false;
            }
            stripe.saw(reading);
            match stripe.word.compare_exchange_weak(
                word,
                word + 1,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return true,
                Err(seen) => word = seen,
            }
        }
    }

    /// Closes the fast path open, healthy or refusing: every stripe's word swapped for the
    /// closed mark, their successes recorded in the exact breaker, and the latest time any
    /// stripe noted handed to its clock; then the change of state that made, if any, queued.
    pub(super) fn close(&self, exact: &mut Exact) {
        if !exact.open && !exact.refusing {
            return;
        }
        exact.open = false;
        exact.refusing = false;
        let (mut successes, mut latest) = (0u64, 0u64);
        for stripe in self.stripes.iter() {
            // Taken while open, so never the closed mark: at most a full count, none refusing.
            let held = stripe.word.swap(CLOSED, Ordering::AcqRel);
            successes = successes.saturating_add(held & COUNT);
            latest = latest.max(stripe.latest.load(Ordering::Relaxed));
        }
        // Every success counted was passed before the horizon, in the exact breaker's newest
        // bucket, and so is every time a call of this opening noted (refusing, before the
        // refusal's end); a later one is a call's that raced an earlier close, handed to the
        // clock after them.
        let within = latest.min(exact.horizon - 1);
        exact
            .breaker
            .record_successes(successes, Duration::from_nanos(within));
        if latest > within {
            exact
                .breaker
                .record_successes(0, Duration::from_nanos(latest));
        }
        self.queue(exact);
    }

    /// Opens a fast path if the exact breaker is healthy ([`ClassicBreaker::healthy_until`])
    /// or else refusing ([`ClassicBreaker::refusing`]): the opening written while every word
    /// is closed, then every word set to a new tag, and no successes or the refusing mark.
    ///
    /// [`ClassicBreaker::healthy_until`]: ironward::ClassicBreaker::healthy_until
    /// [`ClassicBreaker::refusing`]: ironward::ClassicBreaker::refusing
    pub(super) fn open(&self, exact: &mut Exact) {
        debug_assert!(!exact.open && !exact.refusing, "opened twice");
        let healthy = exact.breaker.healthy_until();
        let refusing = match healthy {
            Some(_) => None,
            None => exact.breaker.refusing(),
        };
        let Some(until) = healthy.or(refusing.map(|refusing| refusing.until)) else {
            return;
        };
        let horizon = nanos(until);
        let base = nanos(exact.breaker.latest());
        if base >= horizon {
            // The clock at its end: no call is before the horizon.
            return;
        }
        // Pairs with the fence in `ask` and `count`: a reader that sees any of these writes
        // finds its word changed, the word having been closed before them.
        fence(Ordering::Release);
        let opening = &*self.opening;
        opening.base.store(base, Ordering::Relaxed);
        let mark = if let Some(refusing) = refusing {
            opening.publish(Refusal::new(refusing));
            opening.horizon.store(0, Ordering::Relaxed);
            exact.refusing = true;
            REFUSING
        } else {
            opening.horizon.store(horizon, Ordering::Relaxed);
            opening
                .epoch
                .store(exact.breaker.epoch(), Ordering::Relaxed);
            let slow = nanos(exact.breaker.policy().slow_call);
            opening.slow.store(slow, Ordering::Relaxed);
            exact.open = true;
            0
        };
        exact.tag = (exact.tag + 1) % TAGS;
        let word = exact.tag << TAG_SHIFT | mark;
        for stripe in self.stripes.iter() {
            stripe.word.store(word, Ordering::Release);
        }
        exact.horizon = horizon;
    }
}

/// The breaker's clock as a fast call on a stripe reads it, and the stripe's note it read.
#[derive(Debug, Clone, Copy)]
struct Reading {
    /// The latest of the call's `now`, the opening's clock and the times noted on the stripe.
    at: u64,
    /// The stripe's note, as loaded for `at`.
    noted: u64,
}

impl Stripe {
    /// The breaker's clock at `now` as a call on this stripe reads it, under an opening whose
    /// clock was `base`: the exact breaker's clock then, short of the times other stripes
    /// noted since (see the type's docs, the breaker's clock).
    #[inline]
    fn read(&self, now: u64, base: u64) -> Reading {
        let noted = self.latest.load(Ordering::Relaxed);
        Reading {
            at: now.max(base).max(noted),
            noted,
        }
    }

    /// Notes the time a call on this stripe read, for the next close to hand to the exact
    /// breaker's clock: a store only if it is later than the note it read.
    #[inline]
    fn saw(&self, reading: Reading) {
        stripe::note_over(&self.latest, reading.noted, reading.at);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The refusal in integers answers as the core's in `Duration`s: around the end of the
    // wait, at the ends of the clock, forced open, for rates NaN and at their edges.
    #[test]
    fn a_refusal_in_nanoseconds_is_the_cores() {
        let ends = [
            0,
            1,
            999_999_999,
            1_000_000_000,
            5_000_000_123,
            u64::MAX - 1,
            u64::MAX,
        ];
        for until in ends {
            for forced in [false, true] {
                let refusing = Refusing {
                    until: if forced {
                        Duration::MAX
                    } else {
                        Duration::from_nanos(until)
                    },
                    forced,
                    failure_rate: f64::MIN_POSITIVE,
                    slow_rate: 1.0,
                };
                let refusal = Refusal::new(refusing);
                for t in ends.into_iter().chain([until.saturating_sub(1), until]) {
                    assert_eq!(
                        refusal.at(t),
                        refusing.at(Duration::from_nanos(t)),
                        "until {until}, forced {forced}, at {t}"
                    );
                }
            }
        }
        let nan = Refusing {
            until: Duration::from_secs(1),
            forced: false,
            failure_rate: f64::NAN,
            slow_rate: 0.0,
        };
        let reason = Refusal::new(nan).at(0).expect("within the wait");
        assert!(reason.failure_rate.is_nan() && reason.next == Duration::from_secs(1));
    }
}
