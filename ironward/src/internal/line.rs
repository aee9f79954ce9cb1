//! [`Line`]: a value alone on its cache lines, for the words the shared forms swap.

/// A value alone on a 128-byte line: two 64-byte cache lines, which x86's adjacent-line
/// prefetcher fetches as a pair (the width crossbeam's `CachePadded` uses there).
///
/// A shared form's word is written by every thread that takes from it; anything else on its
/// line (its terms, the caller's own state) would be invalidated with every swap and bounce
/// between the cores that only read it.
#[repr(align(128))]
pub(crate) struct Line<T>(pub(crate) T);

impl<T> core::ops::Deref for Line<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}
