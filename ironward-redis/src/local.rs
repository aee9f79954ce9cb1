//! The local fallback: one `ironward` core limiter per key, in a bounded table that forgets
//! a key only once its limiter is as good as new, and an overflow limiter for the keys that
//! find no room.
//!
//! Forgetting a key whose limiter still counts something would hand it a fresh quota: a
//! flood of distinct keys during an outage would then cycle every key through the table
//! and the per-key bound would be gone. So a key is forgotten only when its limiter has
//! been idle for the core's `idle()` (the time after which it answers as a fresh one), and
//! a key that finds the table full of limiters still counting is answered by one overflow
//! limiter shared by all such keys. Each of them is then held to one key's bound (the
//! overflow admits no more than one key's limiter would, whoever's events it counts), at
//! the price of refusing some of them early.
//!
//! A key placed in the table while the overflow limiter still counts gets a copy of the
//! overflow's state rather than a fresh limiter: it may have been answered by the overflow
//! a moment ago, and a fresh limiter would forget that. Its events are then one core
//! limiter's history (the overflow's, continued by the copy), so the bound holds across
//! the move too.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use lru::LruCache;

/// A key as the fallback table holds it: `None` for the budget of requests without one.
type Key = Option<Box<[u8]>>;

/// A core limiter the fallback holds: it says how long it takes to be as good as new.
pub(crate) trait Fallback: Clone {
    /// The core's `idle()`: after this long without an event it answers as a fresh one.
    fn idle(&self) -> Duration;
}

impl Fallback for ironward::Bucket {
    fn idle(&self) -> Duration {
        ironward::Bucket::idle(self)
    }
}

impl Fallback for ironward::Period {
    fn idle(&self) -> Duration {
        ironward::Period::idle(self)
    }
}

impl Fallback for ironward::Sliding {
    fn idle(&self) -> Duration {
        ironward::Sliding::idle(self)
    }
}

/// `wait`, a core limiter's `next` counted from `latest`, the latest reading it has seen
/// (the core reads an earlier `now` as that), counted from `now` instead: a caller whose
/// clock stepped back is told the wait on its own clock. Zero and never stay as they are.
pub(crate) fn from_now(wait: Duration, latest: Duration, now: Duration) -> Duration {
    if wait.is_zero() || wait == Duration::MAX {
        return wait;
    }
    wait.saturating_add(latest.saturating_sub(now))
}

/// A limiter and the latest reading it was used at.
struct Entry<L> {
    limiter: L,
    latest: Duration,
}

impl<L: Fallback> Entry<L> {
    fn new(limiter: L, now: Duration) -> Self {
        Self {
            limiter,
            latest: now,
        }
    }

    /// Whether the limiter answers at `now` as a fresh one would: idle for its `idle()`
    /// since the latest reading. A clock that stepped back is not past it, so a limiter
    /// is never forgotten on an earlier reading.
    /// A limiter whose `idle()` is `Duration::MAX` (a bucket that never refills) never is,
    /// nor one whose fresh time is past the clock's range.
    fn fresh_at(&self, now: Duration) -> bool {
        let idle = self.limiter.idle();
        idle != Duration::MAX
            && self
                .latest
                .checked_add(idle)
                .is_some_and(|fresh| now >= fresh)
    }

    /// Runs `f` on the limiter at `now`, with the latest reading it has then seen.
    fn run<R>(&mut self, now: Duration, f: impl FnOnce(&mut L, Duration) -> R) -> R {
        self.latest = self.latest.max(now);
        f(&mut self.limiter, self.latest)
    }
}

struct Table<L> {
    keys: LruCache<Key, Entry<L>>,
    /// The limiter of the keys that found the table full, once one did.
    overflow: Option<Entry<L>>,
}

/// Core limiters by key, at most `max` of them, and one overflow limiter.
pub(crate) struct Local<L> {
    table: Mutex<Table<L>>,
    max: usize,
}

impl<L: Fallback> Local<L> {
    /// An empty table of at most `max` keys (at least 1).
    pub(crate) fn new(max: usize) -> Self {
        Self {
            table: Mutex::new(Table {
                keys: LruCache::unbounded(),
                overflow: None,
            }),
            max: max.max(1),
        }
    }

    /// Runs `f` on the limiter of `key` at `now`: its own, or a new one (made by `make`, or
    /// a copy of the overflow's while it still counts) if there is room or the least
    /// recently used key's limiter is as good as new, or else the overflow limiter.
    pub(crate) fn with<R>(
        &self,
        key: Option<&[u8]>,
        now: Duration,
        make: impl FnOnce() -> L,
        f: impl FnOnce(&mut L, Duration) -> R,
    ) -> R {
        // A poisoned lock still holds valid limiters: the core never panics mid-update.
        let mut table = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        let Table { keys, overflow } = &mut *table;
        let key: Key = key.map(Into::into);
        if let Some(entry) = keys.get_mut(&key) {
            return entry.run(now, f);
        }
        let room = keys.len() < self.max
            || keys
                .peek_lru()
                .is_some_and(|(_, entry)| entry.fresh_at(now));
        if room {
            if keys.len() >= self.max {
                keys.pop_lru();
            }
            let entry = match overflow {
                Some(entry) if !entry.fresh_at(now) => Entry {
                    limiter: entry.limiter.clone(),
                    latest: entry.latest,
                },
                _ => Entry::new(make(), now),
            };
            return keys.get_or_insert_mut(key, || entry).run(now, f);
        }
        let entry = match overflow {
            Some(entry) if !entry.fresh_at(now) => entry,
            _ => overflow.insert(Entry::new(make(), now)),
        };
        entry.run(now, f)
    }

    /// Runs `f` on the limiter `with` would run on at `now`, changing nothing: the key's
    /// own, else the overflow's while it still counts, else a new one made by `make`.
    pub(crate) fn peek<R>(
        &self,
        key: Option<&[u8]>,
        now: Duration,
        make: impl FnOnce() -> L,
        f: impl FnOnce(&L, Duration) -> R,
    ) -> R {
        let table = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        let key: Key = key.map(Into::into);
        if let Some(entry) = table.keys.peek(&key) {
            return f(&entry.limiter, entry.latest.max(now));
        }
        match &table.overflow {
            Some(entry) if !entry.fresh_at(now) => f(&entry.limiter, entry.latest.max(now)),
            _ => f(&make(), now),
        }
    }

    /// How many keys the table holds.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.table
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .keys
            .len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE: Duration = Duration::from_secs(60);

    fn log() -> ironward::Sliding {
        ironward::Sliding::new(5, MINUTE)
    }

    #[test]
    fn a_key_still_counting_is_never_forgotten() {
        let local = Local::new(2);
        let now = Duration::from_secs(1);
        let mut admitted = [0u32; 3];
        // Three keys through a table of two, fifty times each in one window: each is held
        // to its quota of five, "c" on the overflow.
        for _ in 0..50 {
            for (i, key) in [b"a", b"b", b"c"].iter().enumerate() {
                if local.with(Some(*key), now, log, |log, _| log.take(now)) {
                    admitted[i] += 1;
                }
            }
        }
        assert_eq!(admitted, [5, 5, 5]);
        assert_eq!(local.len(), 2);
        // "c" is answered by the overflow, which "c" alone has spent.
        assert_eq!(
            local.peek(Some(b"c"), now, log, |log, _| log.next(now)),
            MINUTE
        );
    }

    #[test]
    fn a_key_as_good_as_new_makes_room() {
        let local = Local::new(1);
        let t = Duration::from_secs;
        assert!(local.with(Some(b"a"), t(0), log, |log, _| log.take(t(0))));
        // "a" still counts at 30 s: "b" goes to the overflow.
        assert!(local.with(Some(b"b"), t(30), log, |log, _| log.take(t(30))));
        assert_eq!(local.len(), 1);
        assert_eq!(
            local.peek(Some(b"a"), t(30), log, |log, _| log.left(t(30))),
            4
        );
        // At 60 s "a" is a minute idle and is forgotten for "c", which gets a copy of the
        // overflow ("b"'s event at 30 s still counts there).
        assert!(local.with(Some(b"c"), t(60), log, |log, _| log.take(t(60))));
        assert_eq!(
            local.peek(Some(b"c"), t(60), log, |log, _| log.left(t(60))),
            3
        );
        // "a" has left the table, so the overflow answers for it.
        assert_eq!(
            local.peek(Some(b"a"), t(60), log, |log, _| log.left(t(60))),
            4
        );
        // A clock that steps back forgets nothing: at 61 s "c" was last used at 60 s.
        assert!(local.with(Some(b"d"), t(61), log, |log, _| log.take(t(61))));
        assert_eq!(
            local.peek(Some(b"c"), t(61), log, |log, _| log.left(t(61))),
            3
        );
    }

    #[test]
    fn a_limiter_that_never_becomes_fresh_is_never_forgotten() {
        // A bucket that does not refill is never as good as new (`idle()` is
        // `Duration::MAX`), so even at the end of the clock its key keeps its place, and a
        // table of 0 keys holds one.
        let local = Local::new(0);
        let empty = || ironward::Bucket::new(0.0, 1.0, Duration::ZERO);
        let end = Duration::MAX;
        let take = |key: &[u8], now| local.with(Some(key), now, empty, |b, _| b.take(now, 1.0));
        assert!(take(b"a", Duration::ZERO));
        assert!(take(b"b", end), "the overflow's own token");
        assert!(!take(b"a", end));
        assert!(!take(b"c", end), "the overflow is spent");
        assert_eq!(local.len(), 1);
        assert_eq!(from_now(Duration::MAX, end, Duration::ZERO), Duration::MAX);
        assert_eq!(
            from_now(Duration::from_secs(1), end, Duration::ZERO),
            Duration::MAX
        );
    }

    #[test]
    fn the_budget_without_a_key_is_a_key_of_its_own() {
        let local = Local::new(2);
        let now = Duration::ZERO;
        local.with(None, now, log, |log, _| assert!(log.take(now)));
        assert_eq!(local.peek(None, now, log, |log, _| log.left(now)), 4);
        assert_eq!(local.peek(Some(b""), now, log, |log, _| log.left(now)), 5);
    }
}
