//! Time as the core holds it: whole nanoseconds on the caller's clock.
//!
//! Every piece takes `now: Duration` and keeps it as a `u64` count of nanoseconds, which
//! covers about 584 years; a later reading saturates there, so an absurd clock can stop time
//! but never wrap it. A reading earlier than one already seen is read as the latest seen,
//! which is what keeps a clock that steps backwards from freeing capacity.

use core::time::Duration;

/// Whole nanoseconds in `d`, saturating at `u64::MAX` (about 584 years): the unit every
/// piece of the core counts time in, for an edge that stores readings as the core does.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::clock::nanos;
///
/// assert_eq!(nanos(Duration::from_millis(3)), 3_000_000);
/// assert_eq!(nanos(Duration::MAX), u64::MAX);
/// ```
#[inline]
#[must_use]
pub const fn nanos(d: Duration) -> u64 {
    // Up to 18_446_744_072 s the count fits a `u64` and is computed in one, without the
    // `u128` product of `as_nanos`: every decision starts here.
    if d.as_secs() <= 18_446_744_072 {
        d.as_secs() * 1_000_000_000 + d.subsec_nanos() as u64
    } else {
        let n = d.as_nanos();
        if n > u64::MAX as u128 {
            u64::MAX
        } else {
            n as u64
        }
    }
}

/// The latest reading a piece has seen, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Latest(u64);

impl Latest {
    /// A clock that has seen `now` and nothing later.
    pub(crate) const fn new(now: Duration) -> Self {
        Self(nanos(now))
    }

    /// Moves the clock to `now` unless it has seen later, and returns the time to use.
    #[inline]
    pub(crate) fn advance(&mut self, now: Duration) -> u64 {
        self.0 = self.0.max(nanos(now));
        self.0
    }

    /// The latest reading seen.
    #[inline]
    pub(crate) fn get(&self) -> u64 {
        self.0
    }

    /// The time a read-only query at `now` uses: the later of `now` and the latest seen.
    #[inline]
    pub(crate) fn read(&self, now: Duration) -> u64 {
        self.0.max(nanos(now))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nanos_saturate_past_u64() {
        assert_eq!(nanos(Duration::from_millis(3)), 3_000_000);
        assert_eq!(nanos(Duration::MAX), u64::MAX);
        assert_eq!(nanos(Duration::from_nanos(u64::MAX)), u64::MAX);
        // Either side of the end of the `u64` path.
        let last = Duration::new(18_446_744_072, 999_999_999);
        assert_eq!(u128::from(nanos(last)), last.as_nanos());
        let first = Duration::new(18_446_744_073, 0);
        assert_eq!(u128::from(nanos(first)), first.as_nanos());
        assert_eq!(nanos(Duration::new(18_446_744_073, 709_551_616)), u64::MAX);
    }

    #[test]
    fn a_clock_going_backwards_reads_as_the_latest_seen() {
        let mut clock = Latest::new(Duration::from_secs(5));
        assert_eq!(clock.advance(Duration::from_secs(3)), 5_000_000_000);
        assert_eq!(clock.read(Duration::from_secs(1)), 5_000_000_000);
        assert_eq!(clock.advance(Duration::from_secs(7)), 7_000_000_000);
        assert_eq!(clock.read(Duration::from_secs(9)), 9_000_000_000);
        assert_eq!(clock.advance(Duration::ZERO), 7_000_000_000);
    }
}
