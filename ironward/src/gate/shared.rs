//! [`SharedGate`]: the gate shared by `&`, in one atomic word.

use core::fmt;

use crate::gate::GateReason;
use crate::internal::sync::{AtomicU64, Ordering, const_fn};

/// A [`Gate`](crate::Gate) that many threads share by `&`, without a lock: the count and
/// the limit packed into one `AtomicU64`.
///
/// A server's every task asks the same gate, and a `Mutex<Gate>` makes them take turns for a
/// compare and an add. This is the same count with a ceiling, deciding by the same rule
/// ([`enter`](Self::enter) takes room when `held < limit`, [`leave`](Self::leave) gives it
/// back and never goes below zero, [`retune`](Self::retune) turns nobody out), with each
/// method a compare-and-swap loop on the one word: tower's `ConcurrencyLimit` does the same
/// job over a semaphore, go-zero's `core/syncx/limit.go` over a channel. A refusal, and a
/// `leave` with nobody inside, is one load and writes nothing, so a full gate does not bounce
/// its cache line between the cores that are refused.
///
/// # Why it never holds more than its limit
///
/// The count (the low 32 bits) and the limit (the high 32) are one value, and every change is
/// one compare-and-swap from the value it read to the value the `&mut` [`Gate`](crate::Gate)
/// rule makes of it. An `enter` writes `held + 1` only if the word still holds the `held`
/// and `limit` it compared, with `held < limit`: if anything changed in between (another
/// enter or leave, a retune) the swap fails and it decides again on the new word. So each
/// call takes effect at one instant, its successful swap (or, for a refusal, its last
/// load), and the calls of all threads are the calls of one `Gate` made in the order of those
/// instants. Under overlap nothing differs but that order: an enter is admitted only against
/// the limit in force at the instant it takes effect, so it never brings the count past the
/// limit in force then, and the count passes the limit only as a `Gate`'s does, when a
/// retune lowered the limit below those already inside.
///
/// A retune that lands while an enter is deciding is therefore either before it or after it,
/// never half of each: a lower limit set before the enter's swap makes that enter decide
/// against the lower one (it can only be refused by it); a higher one may let in an enter
/// that began when the gate was full. No limit in force while a call runs is ever exceeded
/// by that call.
///
/// Like a semaphore, an `enter` that succeeds acquires what the `leave` it follows released
/// (`Acquire` and `Release` ordering), so the work of one holder happens before the next
/// holder's room is handed out.
///
/// This type is built only for targets with 64-bit atomics (every tier-1 target).
///
/// The gate holds no token: pairing each `enter` that returned `true` with one `leave` is the
/// caller's part, as with [`Gate`](crate::Gate). It is not `Clone`; share it by `&`, an
/// `Arc` or a `static` ([`new`](Self::new) is `const`).
///
/// # Examples
///
/// ```
/// use ironward::SharedGate;
/// use std::thread;
///
/// static GATE: SharedGate = SharedGate::new(2);
///
/// assert!(GATE.enter());
/// thread::scope(|s| {
///     // Another thread sees the same count.
///     s.spawn(|| {
///         assert!(GATE.enter());
///         assert!(!GATE.enter());
///         GATE.leave();
///     });
/// });
/// assert_eq!(GATE.held(), 1);
/// GATE.leave();
/// assert_eq!(GATE.held(), 0);
/// ```
pub struct SharedGate {
    /// `limit << 32 | held`.
    state: AtomicU64,
}

/// The word for `held` inside and a ceiling of `limit`.
const fn pack(held: u32, limit: u32) -> u64 {
    (limit as u64) << 32 | held as u64
}

/// The `(held, limit)` in a word.
const fn unpack(word: u64) -> (u32, u32) {
    (word as u32, (word >> 32) as u32)
}

impl SharedGate {
    const_fn! {
        /// A gate that nothing has entered, with room for `limit`; read as
        /// [`Gate::new`](crate::Gate::new) reads it (a limit of 0 admits nothing).
        pub fn new(limit: u32) -> Self {
            Self {
                state: AtomicU64::new(pack(0, limit)),
            }
        }
    }

    /// Whether there is room, taking it if there is.
    ///
    /// This is [`check`](Self::check) without the reason for a refusal.
    #[inline]
    #[must_use = "an unchecked enter either takes room nothing will give back or ignores a full gate"]
    pub fn enter(&self) -> bool {
        self.check().is_ok()
    }

    /// [`enter`](Self::enter) with the numbers behind a refusal, as
    /// [`Gate::check`](crate::Gate::check) gives them: how many were inside and the limit,
    /// read together in the one load the refusal decided by.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::SharedGate;
    ///
    /// let gate = SharedGate::new(1);
    /// assert!(gate.check().is_ok());
    /// let reason = gate.check().expect_err("one inside");
    /// assert_eq!((reason.held, reason.limit), (1, 1));
    /// ```
    #[inline]
    #[must_use = "an unchecked enter either takes room nothing will give back or ignores a full gate"]
    pub fn check(&self) -> Result<(), GateReason> {
        self.state
            .fetch_update(Ordering::Acquire, Ordering::Relaxed, |word| {
                let (held, limit) = unpack(word);
                // `held < limit <= u32::MAX`, so `held + 1` stays in the low half. A full
                // gate writes nowhere: a refusal leaves the line shared.
                (held < limit).then(|| word + 1)
            })
            .map(drop)
            .map_err(|word| {
                let (held, limit) = unpack(word);
                GateReason { held, limit }
            })
    }

    /// Gives room back; a `leave` with nobody inside does nothing, and writes nothing, as
    /// [`Gate::leave`](crate::Gate::leave) never takes the count below zero.
    #[inline]
    pub fn leave(&self) {
        // Only while `held > 0`, so `word - 1` takes only the low half down; with nobody
        // inside nothing is written.
        let _ = self
            .state
            .fetch_update(Ordering::Release, Ordering::Relaxed, |word| {
                (unpack(word).0 > 0).then(|| word - 1)
            });
    }

    /// Changes the limit in place, keeping everyone inside, and returns the limit it replaced
    /// (read in the same step, so that a caller reporting the change reports the one that
    /// happened even while others retune).
    ///
    /// As [`Gate::retune`](crate::Gate::retune): a limit lowered below
    /// [`held`](Self::held) admits nobody until enough have left, a raised one has room at
    /// once, and the limit is read as [`new`](Self::new) reads it. An enter deciding at the
    /// same time decides against either the old limit or the new one, never both (see the
    /// type's docs).
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::SharedGate;
    ///
    /// let gate = SharedGate::new(3);
    /// assert!((0..3).all(|_| gate.enter()));
    /// assert_eq!(gate.retune(1), 3);
    /// assert_eq!((gate.held(), gate.limit()), (3, 1));
    /// gate.leave();
    /// gate.leave();
    /// assert!(!gate.enter(), "one inside is the limit, not under it");
    /// gate.leave();
    /// assert!(gate.enter());
    /// ```
    pub fn retune(&self, limit: u32) -> u32 {
        let was = self
            .state
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |word| {
                Some(pack(unpack(word).0, limit))
            })
            .unwrap_or_else(|word| word);
        unpack(was).1
    }

    /// How many are inside: at most the limit, unless [`retune`](Self::retune) lowered it
    /// below the count. Under overlap, the count at the instant of the load.
    #[inline]
    #[must_use]
    pub fn held(&self) -> u32 {
        unpack(self.state.load(Ordering::Relaxed)).0
    }

    /// The most the gate lets in at once.
    #[inline]
    #[must_use]
    pub fn limit(&self) -> u32 {
        unpack(self.state.load(Ordering::Relaxed)).1
    }
}

/// One load: the count and the limit shown were in force together.
impl fmt::Debug for SharedGate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (held, limit) = unpack(self.state.load(Ordering::Relaxed));
        f.debug_struct("SharedGate")
            .field("held", &held)
            .field("limit", &limit)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::format;

    use super::*;

    #[test]
    fn admits_up_to_the_limit_then_refuses_with_the_numbers() {
        let gate = SharedGate::new(2);
        assert!(gate.enter() && gate.enter());
        assert_eq!(gate.check(), Err(GateReason { held: 2, limit: 2 }));
        assert_eq!(gate.held(), 2);
    }

    #[test]
    fn a_limit_of_zero_admits_nothing() {
        let gate = SharedGate::new(0);
        assert!(!gate.enter());
        assert_eq!(gate.check(), Err(GateReason { held: 0, limit: 0 }));
        assert_eq!(gate.held(), 0);
    }

    #[test]
    fn a_limit_of_u32_max_fills_without_carrying_into_the_limit() {
        let gate = SharedGate {
            state: AtomicU64::new(pack(u32::MAX - 1, u32::MAX)),
        };
        assert!(gate.enter());
        assert!(!gate.enter());
        assert_eq!((gate.held(), gate.limit()), (u32::MAX, u32::MAX));
        gate.leave();
        assert_eq!((gate.held(), gate.limit()), (u32::MAX - 1, u32::MAX));
    }

    #[test]
    fn leaving_with_nobody_inside_changes_nothing() {
        let gate = SharedGate::new(1);
        gate.leave();
        gate.leave();
        assert_eq!((gate.held(), gate.limit()), (0, 1));
        assert!(gate.enter());
        assert!(!gate.enter());
    }

    #[test]
    fn retune_keeps_the_holders_and_returns_the_limit_it_replaced() {
        let gate = SharedGate::new(4);
        assert!((0..4).all(|_| gate.enter()));
        assert_eq!(gate.retune(0), 4);
        assert_eq!((gate.held(), gate.limit()), (4, 0));
        assert!(!gate.enter());
        assert_eq!(gate.retune(u32::MAX), 0);
        assert!(gate.enter());
        assert_eq!(gate.held(), 5);
    }

    #[test]
    fn debug_shows_the_count_and_the_limit() {
        let gate = SharedGate::new(3);
        assert!(gate.enter());
        assert_eq!(format!("{gate:?}"), "SharedGate { held: 1, limit: 3 }");
    }
}
