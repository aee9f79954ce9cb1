//! The local fallback: one `ironward` core limiter per key, in a bounded LRU table.

use std::sync::{Mutex, PoisonError};

use lru::LruCache;

/// A key as the fallback table holds it: `None` for the budget of requests without one.
type Key = Option<Box<[u8]>>;

/// Core limiters by key, at most `max` of them: the least recently used is forgotten, and
/// starts afresh if it comes back.
pub(crate) struct Local<L> {
    table: Mutex<LruCache<Key, L>>,
    max: usize,
}

impl<L> Local<L> {
    /// An empty table of at most `max` keys (at least 1).
    pub(crate) fn new(max: usize) -> Self {
        Self {
            table: Mutex::new(LruCache::unbounded()),
            max: max.max(1),
        }
    }

    /// Runs `f` on the limiter of `key`, made by `make` if the table has none.
    pub(crate) fn with<R>(
        &self,
        key: Option<&[u8]>,
        make: impl FnOnce() -> L,
        f: impl FnOnce(&mut L) -> R,
    ) -> R {
        // A poisoned lock still holds valid limiters: the core never panics mid-update.
        let mut table = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        let key: Key = key.map(Into::into);
        if table.len() >= self.max && !table.contains(&key) {
            table.pop_lru();
        }
        f(table.get_or_insert_mut(key, make))
    }

    /// Runs `f` on the limiter of `key`, or on `None` if the table has none, changing
    /// nothing.
    pub(crate) fn peek<R>(&self, key: Option<&[u8]>, f: impl FnOnce(Option<&L>) -> R) -> R {
        let table = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        let key: Key = key.map(Into::into);
        f(table.peek(&key))
    }

    /// How many keys the table holds.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.table
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_at_most_its_bound_and_forgets_the_least_recently_used() {
        let local = Local::new(2);
        for key in [b"a", b"b", b"a", b"c"] {
            local.with(Some(key), || 0, |count| *count += 1);
        }
        assert_eq!(local.len(), 2);
        // "b" was the least recently used when "c" came.
        assert_eq!(local.peek(Some(b"b"), |count| count.copied()), None);
        assert_eq!(local.peek(Some(b"a"), |count| count.copied()), Some(2));
        local.with(None, || 0, |count| *count += 1);
        assert_eq!(local.peek(None, |count| count.copied()), Some(1));
    }
}
