//! Which instance handed a token out, so that a token settled on another changes nothing.
//!
//! A token that must be settled ([`Grant`](crate::Grant), [`SrePermit`](crate::SrePermit),
//! [`Ticket`](crate::Ticket), [`Reservation`](crate::Reservation), a ward's
//! [`ConnectPermit`](crate::ConnectPermit) and [`Slot`](crate::Slot)) carries the [`Mark`] of
//! the instance that made it, and that instance's settle compares it with its own [`Owner`]
//! before anything else: one `u32` compare. A token from another instance changes nothing
//! there, in release builds too: the settle hands it back (`Some(token)`, where its own
//! token answers `None`) and the instance counts it where it keeps counts.

use core::sync::atomic::{AtomicU32, Ordering};

/// The number the next instance to hand out a token takes.
static NEXT: AtomicU32 = AtomicU32::new(1);

/// One instance's identity: 0 until it first hands out a token, then a number no other
/// instance of this process holds (short of 2^32 instances numbered between two that are both
/// still in use).
///
/// The number is taken on the first token rather than in `new`, so that the instances made
/// only to be read (a bucket built to work out a wait, a limiter's bounds) never touch the
/// counter every thread shares. No token is marked 0, so an instance that has handed out
/// none owns none. A clone is another instance: it starts at 0, settles the tokens it hands
/// out itself, and leaves the original's to the original.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Owner(u32);

/// The copy of its instance's [`Owner`] a token carries: never 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Mark(u32);

impl Owner {
    /// The mark for a token this instance hands out, numbering the instance if it is the
    /// first.
    #[inline]
    pub(crate) fn mark(&mut self) -> Mark {
        if self.0 == 0 {
            self.0 = take();
        }
        Mark(self.0)
    }

    /// Whether this instance handed out the token marked `mark`.
    #[inline]
    pub(crate) fn owns(&self, mark: Mark) -> bool {
        self.0 == mark.0
    }
}

impl Clone for Owner {
    fn clone(&self) -> Self {
        Self::default()
    }
}

/// The next number: never 0, wrapping past it after 2^32 − 1.
fn take() -> u32 {
    loop {
        let next = fetch_next();
        if next != 0 {
            return next;
        }
    }
}

#[cfg(target_has_atomic = "32")]
fn fetch_next() -> u32 {
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// On a target with atomic loads and stores of 32 bits but no read-modify-write
/// (`thumbv6m`): a load and a store, which two instances numbered at the same instant (an
/// interrupt handler's and the code it interrupted) may both read alike. Such a pair then
/// settles each other's tokens, as every instance did before tokens were marked.
#[cfg(not(target_has_atomic = "32"))]
fn fetch_next() -> u32 {
    let next = NEXT.load(Ordering::Relaxed);
    NEXT.store(next.wrapping_add(1), Ordering::Relaxed);
    next
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_instance_and_every_clone_is_told_apart() {
        let (mut a, mut b) = (Owner::default(), Owner::default());
        let (mine, theirs) = (a.mark(), b.mark());
        assert_eq!(a.mark(), mine, "numbered once");
        assert!(a.owns(mine) && !a.owns(theirs) && !b.owns(mine));
        let mut c = a.clone();
        assert!(!c.owns(mine), "a clone owns none of the original's tokens");
        assert!(!a.owns(c.mark()));
        assert!(
            !Owner::default().owns(mine),
            "an unnumbered instance owns nothing"
        );
    }
}
