//! One budget per key, in a bounded table: sharded LRU maps that forget idle keys.

use std::fmt;
use std::hash::{BuildHasher, Hash, RandomState};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::HeaderName;
use http::request::Parts;
use lru::LruCache;

use super::budget::{Budget, Limiter, Terms};
use super::error::DEFAULT_POLICY;
use super::http::Stamp;
use super::{KindMismatch, Limited, Quota};
use crate::lock::lock;

/// At most this many shards, each behind its own lock.
const SHARDS: usize = 16;

/// At most this many idle keys are dropped on one access, so no request pays for a long
/// sweep; each access adds at most one key, so idle keys still drain faster than they come.
const SWEEP: usize = 8;

/// A table of budgets, one per key, behind a type that does not name the key.
pub(super) trait Keyed: Send + Sync {
    /// Takes one request for the key of `parts` at `now`, or refuses it.
    fn take(&self, parts: &Parts, now: Duration, headroom: bool) -> Result<Option<Stamp>, Limited>;

    /// How many keys the table holds.
    fn len(&self) -> usize;

    /// The most keys the table holds.
    fn max(&self) -> usize;

    /// The terms in force: the ones the table was made with, or the last it was retuned to.
    fn terms(&self) -> Terms;

    /// Moves every budget the table holds, and the terms new keys get, to `limit` at `now`,
    /// each keeping its history, and answers the limit it replaced; or refuses a limit of
    /// another kind, changing nothing.
    fn retune(&self, limit: Quota, now: Duration) -> Result<Quota, KindMismatch>;

    /// An empty table under `terms`, with the same bound and extractor.
    fn fresh(&self, terms: Terms) -> Arc<dyn Keyed>;
}

/// Builds the table behind [`QuotaLayer::keyed`](super::QuotaLayer::keyed).
pub(super) fn table<K, F>(limit: Quota, max_keys: usize, extract: F) -> Table<K, F>
where
    K: Hash + Eq + Send + 'static,
    F: Fn(&Parts) -> Option<K> + Send + Sync + 'static,
{
    let terms = Terms::new(limit, DEFAULT_POLICY);
    Table::empty(terms, max_keys.max(1), Arc::new(extract))
}

impl<K, F> Table<K, F>
where
    K: Hash + Eq,
{
    /// A table of at most `max` keys, none yet.
    fn empty(terms: Terms, max: usize, extract: Arc<F>) -> Self {
        let count = max.min(SHARDS);
        let shards = (0..count)
            .map(|i| {
                // Spread `max` over the shards so that their capacities add up to it exactly.
                let cap = max / count + usize::from(i < max % count);
                Mutex::new(Shard {
                    entries: LruCache::unbounded(),
                    cap,
                    terms: terms.clone(),
                })
            })
            .collect();
        Table {
            extract,
            unkeyed: Mutex::new(Budget::new(terms.clone(), Duration::ZERO)),
            terms: Mutex::new(terms),
            max,
            hasher: RandomState::new(),
            shards,
        }
    }
}

/// The first value of the header `name`, copied, so that a key does not keep the buffer the
/// request was read into alive.
pub(super) fn header(name: HeaderName) -> impl Fn(&Parts) -> Option<Box<[u8]>> + Send + Sync {
    move |parts: &Parts| {
        parts
            .headers
            .get(&name)
            .map(|value| value.as_bytes().into())
    }
}

/// The table of [`table`]: one limiter per key, in shards.
pub(super) struct Table<K, F> {
    /// Reads a request's key; shared with the tables made [`fresh`](Keyed::fresh) from this one.
    extract: Arc<F>,
    /// The terms in force. Requests read each shard's copy instead, under the shard's lock,
    /// so that none waits for this one; a retune holds it while it goes through the shards,
    /// so that two retunes take turns and every shard ends under the same terms.
    terms: Mutex<Terms>,
    max: usize,
    /// Picks a key's shard; keyed at random per table, so a client cannot aim at one shard.
    hasher: RandomState,
    shards: Box<[Mutex<Shard<K>>]>,
    /// The one budget shared by every request the extractor finds no key for.
    unkeyed: Mutex<Budget>,
}

struct Shard<K> {
    /// Least recently used first, which is also the order of `seen`.
    entries: LruCache<K, Entry>,
    cap: usize,
    /// The terms of every key in the shard, and of the keys it takes in: keys untouched for
    /// longer than their `idle` are dropped.
    terms: Terms,
}

struct Entry {
    limiter: Limiter,
    /// The latest time the key was used.
    seen: Duration,
}

impl<K, F> Keyed for Table<K, F>
where
    K: Hash + Eq + Send + 'static,
    F: Fn(&Parts) -> Option<K> + Send + Sync + 'static,
{
    fn take(&self, parts: &Parts, now: Duration, headroom: bool) -> Result<Option<Stamp>, Limited> {
        let Some(key) = (*self.extract)(parts) else {
            return lock(&self.unkeyed).take(now, headroom);
        };
        // The modulo keeps the index below the shard count, which is at most 16.
        let index = (self.hasher.hash_one(&key) % self.shards.len() as u64) as usize;
        lock(&self.shards[index]).take(key, now, headroom)
    }

    fn len(&self) -> usize {
        self.shards
            .iter()
            .map(|shard| lock(shard).entries.len())
            .sum()
    }

    fn max(&self) -> usize {
        self.max
    }

    fn terms(&self) -> Terms {
        lock(&self.terms).clone()
    }

    fn retune(&self, limit: Quota, now: Duration) -> Result<Quota, KindMismatch> {
        let mut in_force = lock(&self.terms);
        let terms = in_force.retuned(limit)?;
        let was = in_force.limit;
        // The same limit changes no budget (the core's retunes leave their state alone):
        // spare the pass over every key.
        if was == limit {
            return Ok(was);
        }
        // Shard by shard, each under its own lock, so that requests for the other shards go
        // on meanwhile; each key is decided wholly under the old terms or the new ones.
        for shard in &self.shards {
            lock(shard).retune(terms.clone(), now);
        }
        lock(&self.unkeyed).retune(terms.clone(), now);
        *in_force = terms;
        Ok(was)
    }

    fn fresh(&self, terms: Terms) -> Arc<dyn Keyed> {
        Arc::new(Self::empty(terms, self.max, Arc::clone(&self.extract)))
    }
}

impl<K> Shard<K>
where
    K: Hash + Eq,
{
    /// Takes one request for `key` at `now`: forgets idle keys, makes room for a new one if
    /// the shard is full, then asks the key's limiter.
    fn take(&mut self, key: K, now: Duration, headroom: bool) -> Result<Option<Stamp>, Limited> {
        self.sweep(now);
        if self.entries.len() >= self.cap && !self.entries.contains(&key) {
            self.entries.pop_lru();
        }
        let terms = &self.terms;
        let entry = self.entries.get_or_insert_mut(key, || Entry {
            limiter: Limiter::new(&terms.limit, now),
            seen: now,
        });
        entry.seen = entry.seen.max(now);
        terms.answer(entry.limiter.take_reading(now, headroom))
    }

    /// Drops up to [`SWEEP`] keys untouched for longer than the terms' `idle`, oldest first.
    fn sweep(&mut self, now: Duration) {
        let idle = self.terms.idle;
        for _ in 0..SWEEP {
            match self.entries.peek_lru() {
                Some((_, entry)) if now.saturating_sub(entry.seen) > idle => {
                    self.entries.pop_lru();
                }
                _ => break,
            }
        }
    }

    /// Moves every key's limiter, and the keys taken in from now on, to `terms` at `now`.
    ///
    /// A retune counts as a use of every key: a bucket retuned at `now` is as good as new
    /// one `idle` of the new terms after `now` (the time before it ran at the old rate), so
    /// only from then on does forgetting it change no answer. Raising each `seen` to `now`
    /// keeps the least-recently-used order the order of `seen`.
    fn retune(&mut self, terms: Terms, now: Duration) {
        for (_, entry) in self.entries.iter_mut() {
            entry.limiter.retune(&terms.limit, now);
            entry.seen = entry.seen.max(now);
        }
        self.terms = terms;
    }
}

impl<K, F> fmt::Debug for Table<K, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let terms = lock(&self.terms).clone();
        f.debug_struct("Table")
            .field("limit", &terms.limit)
            .field("max", &self.max)
            .field("idle", &terms.idle)
            .field("shards", &self.shards.len())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use http::Request;

    fn secs(n: u64) -> Duration {
        Duration::from_secs(n)
    }

    fn parts(key: Option<&str>) -> Parts {
        let mut request = Request::builder();
        if let Some(key) = key {
            request = request.header("x-key", key);
        }
        request.body(()).unwrap().into_parts().0
    }

    /// A take's answer as the wait it gives, if any.
    fn waits(taken: Result<Option<Stamp>, Limited>) -> Result<(), Duration> {
        taken.map(drop).map_err(|refused| refused.retry_after())
    }

    fn by_key(limit: Quota, max: usize) -> impl Keyed {
        table(limit, max, header(HeaderName::from_static("x-key")))
    }

    #[test]
    fn each_key_has_its_own_budget() {
        let table = by_key(Quota::period(2, secs(10)), 100);
        for key in ["a", "b"] {
            assert_eq!(waits(table.take(&parts(Some(key)), secs(0), true)), Ok(()));
            assert_eq!(waits(table.take(&parts(Some(key)), secs(1), true)), Ok(()));
            assert_eq!(
                waits(table.take(&parts(Some(key)), secs(2), true)),
                Err(secs(8))
            );
        }
        assert_eq!(table.len(), 2);
    }

    #[test]
    fn requests_without_a_key_share_one_budget() {
        let table = by_key(Quota::period(2, secs(10)), 100);
        assert_eq!(waits(table.take(&parts(None), secs(0), true)), Ok(()));
        assert_eq!(waits(table.take(&parts(None), secs(0), true)), Ok(()));
        assert_eq!(waits(table.take(&parts(None), secs(4), true)), Err(secs(6)));
        // The shared budget is not a key: it is never evicted and never counted.
        assert_eq!(table.len(), 0);
        assert_eq!(waits(table.take(&parts(Some("a")), secs(4), true)), Ok(()));
    }

    #[test]
    fn the_capacities_of_the_shards_add_up_to_the_bound() {
        for max in [0, 1, 5, 16, 17, 1000, 1001] {
            let table = table(Quota::sliding(1, secs(1)), max, |_: &Parts| Some(()));
            let caps: usize = table.shards.iter().map(|shard| lock(shard).cap).sum();
            assert_eq!(caps, max.max(1), "max {max}");
            assert!(table.shards.len() <= SHARDS);
        }
    }

    #[test]
    fn a_full_table_forgets_its_least_recently_used_key() {
        // One shard, so the order is global.
        let table = by_key(Quota::period(1, secs(100)), 1);
        assert_eq!(waits(table.take(&parts(Some("a")), secs(0), true)), Ok(()));
        assert_eq!(
            waits(table.take(&parts(Some("a")), secs(1), true)),
            Err(secs(99))
        );
        assert_eq!(waits(table.take(&parts(Some("b")), secs(2), true)), Ok(()));
        assert_eq!(table.len(), 1);
        // "a" was evicted to make room for "b": it starts afresh. That is the trade-off.
        assert_eq!(waits(table.take(&parts(Some("a")), secs(3), true)), Ok(()));
    }

    #[test]
    fn keys_idle_longer_than_the_limit_are_forgotten_on_access() {
        let table = by_key(Quota::sliding(1, secs(10)), 1000);
        let stale = ["a", "b", "c", "d"];
        for key in stale {
            assert_eq!(waits(table.take(&parts(Some(key)), secs(0), true)), Ok(()));
        }
        // Exactly one window later no key is idle yet: it must be untouched for longer.
        for i in 0..200 {
            let key = format!("x-{i}");
            assert_eq!(
                waits(table.take(&parts(Some(&key)), secs(10), true)),
                Ok(())
            );
        }
        assert_eq!(table.len(), 204);
        // A nanosecond later the first four are idle, and an access to a shard drops those
        // it holds. Keys land in shards by a hash keyed at random: go on until every shard was hit.
        let later = secs(10) + Duration::from_nanos(1);
        let swept = (0..1000).find(|&i| {
            let key = format!("y-{i}");
            assert_eq!(waits(table.take(&parts(Some(&key)), later, true)), Ok(()));
            table.len() == 200 + i + 1
        });
        assert!(swept.is_some(), "{} keys", table.len());
        for key in stale {
            assert_eq!(waits(table.take(&parts(Some(key)), later, true)), Ok(()));
        }
    }

    #[test]
    fn forgetting_an_idle_key_changes_no_answer() {
        // A bucket of 2 a second with a burst of 4 is full again 2 s after it was emptied.
        let limit = Quota::bucket(2.0, 4.0);
        let table = by_key(limit, 10);
        let mut kept = Limiter::new(&limit, Duration::ZERO);
        let times = [0, 0, 0, 0, 0, 100, 2_200, 2_200, 2_200, 2_200, 2_200, 9_000];
        for ms in times.map(Duration::from_millis) {
            assert_eq!(
                waits(table.take(&parts(Some("a")), ms, true)),
                kept.take(ms).map_err(|wait| wait.get()),
                "at {ms:?}"
            );
        }
    }

    #[test]
    fn a_retune_counts_as_a_use_so_forgetting_a_key_still_changes_no_answer() {
        // A bucket that refills slowly, emptied at 0 s and sped up at 9 s, holds 1.59 tokens
        // at 10.5 s, though its last request came longer ago than the new refill time (10 s):
        // forgotten then, it would come back full.
        let table = by_key(Quota::bucket(0.01, 10.0), 1);
        let a = || parts(Some("a"));
        for _ in 0..10 {
            assert_eq!(waits(table.take(&a(), secs(0), true)), Ok(()));
        }
        let was = table.retune(Quota::bucket(1.0, 10.0), secs(9));
        assert_eq!(was, Ok(Quota::bucket(0.01, 10.0)));
        let later = Duration::from_millis(10_500);
        assert_eq!(waits(table.take(&a(), later, true)), Ok(()));
        assert!(table.take(&a(), later, true).is_err());
        assert_eq!(table.len(), 1);
    }

    #[test]
    fn a_table_refuses_a_limit_of_another_kind_and_keeps_its_terms() {
        let table = by_key(Quota::sliding(1, secs(10)), 10);
        assert_eq!(waits(table.take(&parts(Some("a")), secs(0), true)), Ok(()));
        let err = table
            .retune(Quota::period(5, secs(10)), secs(1))
            .unwrap_err();
        assert_eq!(err.in_force(), Quota::sliding(1, secs(10)));
        assert_eq!(table.terms().limit, Quota::sliding(1, secs(10)));
        assert_eq!(
            waits(table.take(&parts(Some("a")), secs(1), true)),
            Err(secs(9))
        );
    }

    #[test]
    fn a_header_key_is_the_first_value_copied() {
        let request = Request::builder()
            .header("x-key", "one")
            .header("x-key", "two")
            .body(())
            .unwrap();
        let key = header(HeaderName::from_static("x-key"))(&request.into_parts().0);
        assert_eq!(key.as_deref(), Some(&b"one"[..]));
    }
}
