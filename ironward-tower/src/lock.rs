//! The one way the services lock the core value their clones share.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks a shared core value (a breaker, a shedder, a limiter, a gate, a retry budget).
///
/// A poisoned lock still holds a sound value: the core never panics mid-update and nothing
/// else runs under these locks, so the poison is passed over rather than turned into a panic
/// on every later request.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
