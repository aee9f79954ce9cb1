//! The local "blocked until" cache: a refused key is refused again, without a round trip,
//! until it could pass.

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use lru::LruCache;

use crate::{Options, Time};

/// A key's refusal, kept until it could pass.
#[derive(Debug, Clone, PartialEq)]
struct Block {
    /// When the refused call could have passed, on the caller's clock: its `now` plus the
    /// wait Redis answered; `Duration::MAX` for never (a wait of `Duration::MAX`, or one
    /// past the end of time).
    until: Duration,
    /// What the refused call cost, each cost's bits (one cost for a single limiter, one a
    /// limit for a [`Limits`](crate::Limits)): a call of the same costs is refused until
    /// `until` too.
    costs: Box<[u64]>,
    /// Which limit refused, for a [`Limits`](crate::Limits) (0 for a single limiter).
    index: usize,
}

/// Refusals kept per key, so that a hot key over its quota costs no round trip until it
/// could pass.
///
/// Every limiter's refusal answers when the call could pass (`next`), and nothing another
/// process does can bring that sooner: the others only take from the quota. So a call for
/// the same key that costs at least as much, before that instant, is refused by Redis too,
/// and answering it here changes no admission. What it does change is what Redis counts:
/// a `Period` counts refused events, and these never reach it (which admits nothing more,
/// since the period is over its quota already).
///
/// Only a call of the cost remembered is answered so: one that costs less may fit sooner,
/// and one that costs more may have to wait longer than the wait remembered, so both go to
/// Redis.
///
/// Bounded: at most `capacity` keys, the least recently refused forgotten past that (which
/// only sends its next call to Redis). A capacity of 0 keeps nothing.
///
/// A retune of a limiter would have to empty it; the Redis limiters have no retune, and two
/// limiters with the same name share their keys and must share their terms.
pub(crate) struct Blocked {
    table: Mutex<LruCache<Key, Block>>,
    capacity: usize,
}

/// A key as the cache holds it: `None` for the budget of requests without one.
type Key = Option<Box<[u8]>>;

impl Blocked {
    /// The cache a limiter on a store with `options` keeps: [`Options::blocked_keys`] of
    /// them on the caller's clock, none on Redis's, where the caller's `now` says nothing of
    /// when a key could pass.
    pub(crate) fn for_store(options: &Options) -> Self {
        match options.time {
            Time::Caller => Self::new(options.blocked_keys),
            Time::Server => Self::new(0),
        }
    }

    /// A cache of at most `capacity` keys.
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            table: Mutex::new(LruCache::unbounded()),
            capacity,
        }
    }

    /// The wait left for a call on `key` at `now` that costs `cost`, if an earlier refusal
    /// of a call of that cost says it is refused: the call is then answered here.
    pub(crate) fn check(&self, key: Option<&[u8]>, now: Duration, cost: f64) -> Option<Duration> {
        self.check_costs(key, now, std::slice::from_ref(&cost))
            .map(|(wait, _)| wait)
    }

    /// [`check`](Blocked::check) for a call of several costs, one a limit: answered here
    /// only if every cost is the one remembered; with the wait, which limit refused.
    pub(crate) fn check_costs(
        &self,
        key: Option<&[u8]>,
        now: Duration,
        costs: &[f64],
    ) -> Option<(Duration, usize)> {
        if self.capacity == 0 {
            return None;
        }
        let key: Key = key.map(Into::into);
        let mut table = self.lock();
        let block = table.peek(&key)?;
        if now >= block.until {
            // It could pass now: forget the refusal, and ask Redis.
            table.pop(&key);
            return None;
        }
        // NaN costs nothing as far as the cache knows (none is kept): it goes to Redis,
        // which answers it. Only the same cost: one that costs less may fit sooner, and one
        // that costs more may wait longer (or for ever, past a bucket's burst) than the
        // wait remembered.
        let same = costs.len() == block.costs.len()
            && costs
                .iter()
                .zip(&block.costs)
                .all(|(cost, kept)| cost.to_bits() == *kept);
        if !same {
            return None;
        }
        // A refusal for good (a quota of 0, a bucket that never refills) stays one.
        if block.until == Duration::MAX {
            return Some((Duration::MAX, block.index));
        }
        Some((block.until - now, block.index))
    }

    /// Keeps the refusal of a call on `key` at `now` costing `cost`, which could pass
    /// `wait` later.
    #[cfg(test)]
    fn refused(&self, key: Option<&[u8]>, now: Duration, wait: Duration, cost: f64) {
        self.refused_costs(key, now, wait, std::slice::from_ref(&cost), 0);
    }

    /// [`refused`](Blocked::refused) for a call of several costs, one a limit, refused by
    /// the limit at `index`.
    pub(crate) fn refused_costs(
        &self,
        key: Option<&[u8]>,
        now: Duration,
        wait: Duration,
        costs: &[f64],
        index: usize,
    ) {
        if self.capacity == 0 || wait.is_zero() || costs.iter().any(|cost| cost.is_nan()) {
            return;
        }
        let until = now.saturating_add(wait);
        let costs = costs.iter().map(|cost| cost.to_bits()).collect();
        let key: Key = key.map(Into::into);
        let mut table = self.lock();
        if let Some(block) = table.get_mut(&key) {
            *block = Block {
                until,
                costs,
                index,
            };
            return;
        }
        if table.len() >= self.capacity {
            table.pop_lru();
        }
        table.put(
            key,
            Block {
                until,
                costs,
                index,
            },
        );
    }

    /// What Redis answered a call on `key` at `now` costing `cost`: kept if `refused`, with
    /// the `wait` until it could pass, else whatever was kept for the key is forgotten.
    pub(crate) fn note(
        &self,
        key: Option<&[u8]>,
        now: Duration,
        refused: bool,
        wait: Duration,
        cost: f64,
    ) {
        let refused = refused.then_some(0);
        self.note_costs(key, now, refused, wait, std::slice::from_ref(&cost));
    }

    /// [`note`](Blocked::note) for a call of several costs, one a limit: `refused` names
    /// the limit that refused, if one did.
    pub(crate) fn note_costs(
        &self,
        key: Option<&[u8]>,
        now: Duration,
        refused: Option<usize>,
        wait: Duration,
        costs: &[f64],
    ) {
        if let Some(index) = refused {
            self.refused_costs(key, now, wait, costs, index);
        } else {
            self.admitted(key);
        }
    }

    /// A call on `key` was admitted: whatever was kept for it is out of date.
    pub(crate) fn admitted(&self, key: Option<&[u8]>) {
        if self.capacity > 0 {
            let key: Key = key.map(Into::into);
            self.lock().pop(&key);
        }
    }

    /// A reservation of `estimate` on `key` was settled at `actual`: a refund may make room
    /// sooner than a refusal kept for the key says, so it is forgotten; a debt only makes
    /// the wait longer, which the refusal kept still undercounts, so it stays.
    pub(crate) fn settled(&self, key: Option<&[u8]>, estimate: f64, actual: f64) {
        if actual < estimate {
            self.admitted(key);
        }
    }

    /// Forgets every refusal: the terms changed.
    #[cfg(test)]
    fn clear(&self) {
        self.lock().clear();
    }

    /// Keys kept now.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> MutexGuard<'_, LruCache<Key, Block>> {
        // A poisoned lock still holds valid entries: nothing here panics mid-update.
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(n: u64) -> Duration {
        Duration::from_secs(n)
    }

    #[test]
    fn a_refusal_is_answered_until_it_could_pass_then_forgotten() {
        let blocked = Blocked::new(8);
        assert_eq!(blocked.check(Some(b"alice"), s(10), 1.0), None);
        blocked.refused(Some(b"alice"), s(10), s(5), 1.0);
        assert_eq!(blocked.check(Some(b"alice"), s(12), 1.0), Some(s(3)));
        assert_eq!(blocked.check(Some(b"bob"), s(12), 1.0), None, "another key");
        // At the instant it could pass, the call goes to Redis and the entry is gone.
        assert_eq!(blocked.check(Some(b"alice"), s(15), 1.0), None);
        assert_eq!(blocked.len(), 0);
    }

    #[test]
    fn only_a_call_of_the_same_cost_is_answered() {
        let blocked = Blocked::new(8);
        blocked.refused(Some(b"k"), s(0), s(10), 5.0);
        assert_eq!(
            blocked.check(Some(b"k"), s(1), 4.0),
            None,
            "it might fit sooner"
        );
        assert_eq!(
            blocked.check(Some(b"k"), s(1), 6.0),
            None,
            "it might wait longer"
        );
        assert_eq!(blocked.check(Some(b"k"), s(1), f64::NAN), None);
        assert_eq!(blocked.check(Some(b"k"), s(1), 5.0), Some(s(9)));
        // The latest refusal of the key replaces the one kept.
        blocked.refused(Some(b"k"), s(1), s(2), 2.0);
        assert_eq!(blocked.check(Some(b"k"), s(2), 5.0), None);
        assert_eq!(blocked.check(Some(b"k"), s(2), 2.0), Some(s(1)));
    }

    #[test]
    fn several_costs_are_answered_only_when_every_one_is_the_same() {
        let blocked = Blocked::new(8);
        blocked.refused_costs(Some(b"k"), s(0), s(10), &[1.0, 4_000.0], 1);
        assert_eq!(
            blocked.check_costs(Some(b"k"), s(1), &[1.0, 4_000.0]),
            Some((s(9), 1))
        );
        assert_eq!(blocked.check_costs(Some(b"k"), s(1), &[1.0, 3_999.0]), None);
        assert_eq!(blocked.check_costs(Some(b"k"), s(1), &[1.0]), None);
        assert_eq!(blocked.check(Some(b"k"), s(1), 1.0), None);
        // A NaN among them is never kept.
        blocked.refused_costs(Some(b"n"), s(0), s(10), &[1.0, f64::NAN], 0);
        assert_eq!(blocked.len(), 1);
    }

    #[test]
    fn an_admission_or_a_retune_forgets_and_zero_capacity_keeps_nothing() {
        let blocked = Blocked::new(8);
        blocked.refused(Some(b"a"), s(0), s(10), 1.0);
        blocked.refused(Some(b"b"), s(0), s(10), 1.0);
        blocked.admitted(Some(b"a"));
        assert_eq!(blocked.check(Some(b"a"), s(1), 1.0), None);
        blocked.clear();
        assert_eq!(
            (blocked.check(Some(b"b"), s(1), 1.0), blocked.len()),
            (None, 0)
        );

        let none = Blocked::new(0);
        none.refused(Some(b"a"), s(0), s(10), 1.0);
        assert_eq!((none.check(Some(b"a"), s(1), 1.0), none.len()), (None, 0));
    }

    #[test]
    fn memory_is_bounded_by_the_capacity_and_odd_waits_keep_nothing() {
        let blocked = Blocked::new(3);
        for key in 0..100u32 {
            blocked.refused(Some(&key.to_be_bytes()), s(0), s(60), 1.0);
        }
        assert_eq!(blocked.len(), 3);
        // The last three refused are kept.
        assert!(
            blocked
                .check(Some(&99u32.to_be_bytes()), s(1), 1.0)
                .is_some()
        );
        assert!(
            blocked
                .check(Some(&0u32.to_be_bytes()), s(1), 1.0)
                .is_none()
        );
        // A zero wait could pass at once; a wait past the end of time saturates.
        blocked.refused(Some(b"now"), s(5), Duration::ZERO, 1.0);
        assert_eq!(blocked.check(Some(b"now"), s(5), 1.0), None);
        // Never, and a wait past the end of time, stay never.
        blocked.refused(Some(b"never"), s(5), Duration::MAX, 1.0);
        assert_eq!(
            blocked.check(Some(b"never"), s(9), 1.0),
            Some(Duration::MAX)
        );
        blocked.refused(Some(b"far"), Duration::MAX - s(1), s(5), 1.0);
        assert_eq!(
            blocked.check(Some(b"far"), Duration::MAX - s(1), 1.0),
            Some(Duration::MAX)
        );
    }
}
