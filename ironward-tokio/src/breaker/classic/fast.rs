//! The fast path of [`SharedClassicBreaker`]: the opening it publishes, the stripes that count
//! successes under it, and how a turn under the lock closes and opens it.

use std::sync::atomic::{AtomicU64, Ordering, fence};
use std::time::Duration;

use super::{Exact, SharedClassicBreaker};
use crate::clock::nanos;
use crate::stripe;

/// What a healthy breaker's calls read without the lock, written only while every stripe is
/// closed (see the type's docs).
#[derive(Debug, Default)]
pub(super) struct Opening {
    /// Until when, in nanoseconds and exclusive, a call is let through and its success
    /// counted.
    horizon: AtomicU64,
    /// The exact breaker's stage: a permit of another counts for nothing.
    epoch: AtomicU64,
    /// The exact breaker's clock at the opening, in nanoseconds.
    base: AtomicU64,
    /// The policy's `slow_call`, in nanoseconds.
    slow: AtomicU64,
    /// How many changes of state wait in the queue; not part of the opening, but read as
    /// often and written as rarely, so on its line.
    pub(super) pending: AtomicU64,
}

/// What one thread (or a few) reads and adds to between two turns under the lock.
#[derive(Debug)]
pub(super) struct Stripe {
    /// `tag << 40 | successes`, or [`CLOSED`] while the fast path is closed: the opening this
    /// is, and the successes counted on the stripe since it opened.
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

/// A stripe's word while the fast path is closed: no call reads an opening from it.
pub(super) const CLOSED: u64 = 1 << 63;

/// Where a word's tag starts; below it, its count of successes.
const TAG_SHIFT: u32 = 40;

/// The tags an opening takes, in turn: 2^23.
const TAGS: u64 = 1 << 23;

/// A word's count of successes. At its largest the next success takes the lock instead.
pub(super) const COUNT: u64 = (1 << TAG_SHIFT) - 1;

impl SharedClassicBreaker {
    /// Lets a call at `now` through on the opening, if the fast path is open and `now` (read
    /// as the breaker's clock reads it) is before the horizon: the stage and time of its
    /// permit, or `None` for the lock.
    #[inline]
    pub(super) fn admit(&self, now: u64) -> Option<(u64, u64)> {
        let stripe = self.stripes.mine();
        let word = stripe.word.load(Ordering::Acquire);
        if word & CLOSED != 0 {
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
        let at = now.max(base).max(stripe.latest.load(Ordering::Relaxed));
        if at >= horizon {
            return None;
        }
        stripe.saw(at);
        Some((epoch, at))
    }

    /// Counts the success at `now` of a call let through closed at `at` in stage `epoch` on
    /// the thread's stripe, if the fast path is open in that stage, `now` is before the
    /// horizon and the call was not slow: whether it did, or the call goes to the lock.
    #[inline]
    pub(super) fn count(&self, epoch: u64, at: u64, now: u64) -> bool {
        let stripe = self.stripes.mine();
        let opening = &*self.opening;
        let mut word = stripe.word.load(Ordering::Acquire);
        loop {
            if word & CLOSED != 0 || word & COUNT == COUNT {
                return false;
            }
            let horizon = opening.horizon.load(Ordering::Relaxed);
            let stage = opening.epoch.load(Ordering::Relaxed);
            let base = opening.base.load(Ordering::Relaxed);
            let slow = opening.slow.load(Ordering::Relaxed);
            // As in `admit`, before the swap that the reads are checked by.
            fence(Ordering::Acquire);
            let t = now.max(base).max(stripe.latest.load(Ordering::Relaxed));
            if stage != epoch || t >= horizon || t.saturating_sub(at) > slow {
                return false;
            }
            stripe.saw(t);
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

    /// Closes the fast path: every stripe's word swapped for the closed mark, their successes
    /// recorded in the exact breaker, and the latest time any stripe noted handed to its
    /// clock; then the change of state that made, if any, queued.
    pub(super) fn close(&self, exact: &mut Exact) {
        if !exact.open {
            return;
        }
        exact.open = false;
        let (mut successes, mut latest) = (0u64, 0u64);
        for stripe in self.stripes.iter() {
            // Taken while open, so never the closed mark: at most a full count.
            let held = stripe.word.swap(CLOSED, Ordering::AcqRel);
            successes = successes.saturating_add(held & COUNT);
            latest = latest.max(stripe.latest.load(Ordering::Relaxed));
        }
        // Every success counted was passed before the horizon, in the exact breaker's newest
        // bucket, and so is every time a call of this opening noted; a later one is a call's
        // that raced an earlier close, handed to the clock after them.
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

    /// Opens the fast path if the exact breaker is healthy: the opening written while every
    /// word is closed, then every word set to a new tag and no successes.
    pub(super) fn open(&self, exact: &mut Exact) {
        debug_assert!(!exact.open, "opened twice");
        let Some(until) = exact.breaker.healthy_until() else {
            return;
        };
        let horizon = nanos(until);
        let base = nanos(exact.breaker.latest());
        if base >= horizon {
            // The clock at its end: no call is before the horizon.
            return;
        }
        // Pairs with the fence in `admit` and `count`: a reader that sees any of these
        // writes finds its word changed, the word having been closed before them.
        fence(Ordering::Release);
        let opening = &*self.opening;
        opening.horizon.store(horizon, Ordering::Relaxed);
        opening
            .epoch
            .store(exact.breaker.epoch(), Ordering::Relaxed);
        opening.base.store(base, Ordering::Relaxed);
        let slow = nanos(exact.breaker.policy().slow_call);
        opening.slow.store(slow, Ordering::Relaxed);
        exact.tag = (exact.tag + 1) % TAGS;
        let word = exact.tag << TAG_SHIFT;
        for stripe in self.stripes.iter() {
            stripe.word.store(word, Ordering::Release);
        }
        exact.open = true;
        exact.horizon = horizon;
    }
}

impl Stripe {
    /// Notes that a call on this stripe saw `at` (see the type's docs, the breaker's clock).
    #[inline]
    fn saw(&self, at: u64) {
        stripe::note(&self.latest, at);
    }
}
