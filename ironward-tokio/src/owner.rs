//! Which [`SharedSreBreaker`](crate::SharedSreBreaker) or [`SharedShedder`](crate::SharedShedder)
//! handed a token out, so that a token settled on another changes nothing.
//!
//! A [`SharedSrePermit`](crate::SharedSrePermit) or [`ShedTicket`](crate::ShedTicket) carries the
//! number of the instance that made it, and that instance's settle compares it with its own
//! before anything else: one `u64` compare on the fast path. A token of another instance
//! changes nothing, the settle hands it back, and the instance counts it; in release builds
//! too. Neither shared form is `Clone` (an `Arc` shares one, and its clones are one instance).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// One instance's number, no other instance of the process's, and the tokens of other
/// instances it was handed.
#[derive(Debug)]
pub(crate) struct Owner {
    id: u64,
    foreign: AtomicU64,
}

impl Owner {
    /// A number no instance holds yet.
    pub(crate) fn new() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        Self {
            id: NEXT.fetch_add(1, Relaxed),
            foreign: AtomicU64::new(0),
        }
    }

    /// The mark of a token this instance hands out.
    #[inline]
    pub(crate) fn mark(&self) -> u64 {
        self.id
    }

    /// Whether this instance made the token marked `mark`; one more foreign token if not.
    #[inline]
    pub(crate) fn owns(&self, mark: u64) -> bool {
        let mine = mark == self.id;
        if !mine {
            self.foreign.fetch_add(1, Relaxed);
        }
        mine
    }

    /// The tokens of other instances [`owns`](Self::owns) refused.
    pub(crate) fn foreign(&self) -> u64 {
        self.foreign.load(Relaxed)
    }
}
