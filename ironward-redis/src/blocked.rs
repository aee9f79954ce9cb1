//! The local "blocked until" cache: a refused key is refused again, without a round trip,
//! until it could pass.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use lru::LruCache;

/// A key's refusal, kept until it could pass.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Block {
    /// When the refused call could have passed, on the caller's clock: its `now` plus the
    /// wait Redis answered.
    until: Duration,
    /// What the refused call cost: a call that costs as much or more is refused until
    /// `until` too, one that costs less may pass sooner and goes to Redis.
    cost: f64,
}

/// Refusals kept per key, so that a hot key over its quota costs no round trip until it
/// could pass.
///
/// Every limiter's refusal answers when the call could pass (`next`), and nothing another
/// process does can bring that sooner: the others only take from the quota. So a call for
/// the same key that costs at least as much, before that instant, is refused by Redis too,
/// and answering it here changes no admission. What it does change is what Redis counts:
/// a `Period` counts refused events, and these never reach it (which admits nothing more,
/// since the period is over its quota already). A retune can bring the instant sooner, so
/// it empties the cache.
///
/// Bounded: at most `capacity` keys, the least recently refused forgotten past that (which
/// only sends its next call to Redis). A capacity of 0 keeps nothing.
pub(crate) struct Blocked {
    table: Mutex<LruCache<Box<[u8]>, Block>>,
    capacity: usize,
    /// Calls answered from the cache.
    hits: AtomicU64,
}

impl Blocked {
    /// A cache of at most `capacity` keys.
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            table: Mutex::new(LruCache::unbounded()),
            capacity,
            hits: AtomicU64::new(0),
        }
    }

    /// The wait left for a call on `key` at `now` that costs `cost`, if an earlier refusal
    /// of a call costing no more says it is refused: the call is then answered here.
    pub(crate) fn check(&self, key: &[u8], now: Duration, cost: f64) -> Option<Duration> {
        if self.capacity == 0 {
            return None;
        }
        let mut table = self.lock();
        let block = *table.peek(key)?;
        if now >= block.until {
            // It could pass now: forget the refusal, and ask Redis.
            table.pop(key);
            return None;
        }
        // NaN costs nothing as far as the cache knows: it goes to Redis, which answers it.
        if !(cost >= block.cost) {
            return None;
        }
        self.hits.fetch_add(1, Ordering::Relaxed);
        Some(block.until - now)
    }

    /// Keeps the refusal of a call on `key` at `now` costing `cost`, which could pass
    /// `wait` later.
    pub(crate) fn refused(&self, key: &[u8], now: Duration, wait: Duration, cost: f64) {
        if self.capacity == 0 || wait.is_zero() || cost.is_nan() {
            return;
        }
        let until = now.saturating_add(wait);
        let mut table = self.lock();
        if let Some(block) = table.get_mut(key) {
            // The cheaper refusal says more: keep it, with the later instant if both cost
            // the same.
            if cost < block.cost || (cost == block.cost && until > block.until) {
                *block = Block { until, cost };
            }
            return;
        }
        if table.len() >= self.capacity {
            table.pop_lru();
        }
        table.put(key.into(), Block { until, cost });
    }

    /// A call on `key` was admitted: whatever was kept for it is out of date.
    pub(crate) fn admitted(&self, key: &[u8]) {
        if self.capacity > 0 {
            self.lock().pop(key);
        }
    }

    /// Forgets every refusal: the terms changed.
    pub(crate) fn clear(&self) {
        self.lock().clear();
    }

    /// Calls answered from the cache so far.
    pub(crate) fn hits(&self) -> u64 {
        self.hits.load(Ordering::Relaxed)
    }

    /// Keys kept now.
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, LruCache<Box<[u8]>, Block>> {
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
        assert_eq!(blocked.check(b"alice", s(10), 1.0), None);
        blocked.refused(b"alice", s(10), s(5), 1.0);
        assert_eq!(blocked.check(b"alice", s(12), 1.0), Some(s(3)));
        assert_eq!(blocked.check(b"bob", s(12), 1.0), None, "another key");
        // At the instant it could pass, the call goes to Redis and the entry is gone.
        assert_eq!(blocked.check(b"alice", s(15), 1.0), None);
        assert_eq!((blocked.len(), blocked.hits()), (0, 1));
    }

    #[test]
    fn a_cheaper_call_goes_to_redis_a_dearer_one_is_answered() {
        let blocked = Blocked::new(8);
        blocked.refused(b"k", s(0), s(10), 5.0);
        assert_eq!(blocked.check(b"k", s(1), 4.0), None, "it might fit sooner");
        assert_eq!(blocked.check(b"k", s(1), 5.0), Some(s(9)));
        assert_eq!(blocked.check(b"k", s(1), 50.0), Some(s(9)));
        assert_eq!(blocked.check(b"k", s(1), f64::NAN), None);
        // A cheaper refusal replaces a dearer one; a dearer one leaves it.
        blocked.refused(b"k", s(1), s(2), 2.0);
        assert_eq!(blocked.check(b"k", s(2), 2.0), Some(s(1)));
        blocked.refused(b"k", s(2), s(20), 9.0);
        assert_eq!(blocked.check(b"k", s(2), 9.0), Some(s(1)));
    }

    #[test]
    fn an_admission_or_a_retune_forgets_and_zero_capacity_keeps_nothing() {
        let blocked = Blocked::new(8);
        blocked.refused(b"a", s(0), s(10), 1.0);
        blocked.refused(b"b", s(0), s(10), 1.0);
        blocked.admitted(b"a");
        assert_eq!(blocked.check(b"a", s(1), 1.0), None);
        blocked.clear();
        assert_eq!((blocked.check(b"b", s(1), 1.0), blocked.len()), (None, 0));

        let none = Blocked::new(0);
        none.refused(b"a", s(0), s(10), 1.0);
        assert_eq!((none.check(b"a", s(1), 1.0), none.len()), (None, 0));
    }

    #[test]
    fn memory_is_bounded_by_the_capacity_and_odd_waits_keep_nothing() {
        let blocked = Blocked::new(3);
        for key in 0..100u32 {
            blocked.refused(&key.to_be_bytes(), s(0), s(60), 1.0);
        }
        assert_eq!(blocked.len(), 3);
        // The last three refused are kept.
        assert!(blocked.check(&99u32.to_be_bytes(), s(1), 1.0).is_some());
        assert!(blocked.check(&0u32.to_be_bytes(), s(1), 1.0).is_none());
        // A zero wait could pass at once; a wait past the end of time saturates.
        blocked.refused(b"now", s(5), Duration::ZERO, 1.0);
        assert_eq!(blocked.check(b"now", s(5), 1.0), None);
        blocked.refused(b"far", Duration::MAX, s(1), 1.0);
        assert_eq!(blocked.check(b"far", Duration::MAX - s(1), 1.0), Some(s(1)));
    }
}
