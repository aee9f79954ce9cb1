//! [`Term`]: one limit of a [`Periods`](crate::Periods), a quota of units per period.

use std::time::Duration;

/// One limit of a [`Periods`](crate::Periods): at most `quota` units per `period`, the
/// periods opening at the first event after the last one closed, or with `align` on the
/// multiples of `period` (`ironward::Period::new` and `ironward::Period::aligned`, go-zero's
/// `Align` in `core/limit/periodlimit.go`).
///
/// A plain record, so a list of terms reads as the policy it is.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward_redis::Term;
///
/// let daily = Term::aligned(1_000_000, Duration::from_secs(86_400));
/// assert!(daily.align);
/// assert_eq!(Term { align: false, ..daily }, Term::new(1_000_000, Duration::from_secs(86_400)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Term {
    /// The most units a period admits.
    pub quota: u32,
    /// How long a period is (below 1 µs read as 1 µs, rounded up to whole microseconds).
    pub period: Duration,
    /// Whether periods lie on the multiples of `period` on the clock the store reads (on a
    /// Unix clock a daily quota then resets at 00:00 UTC), or open at the first event after
    /// the last one closed.
    pub align: bool,
}

impl Term {
    /// `quota` units per `period`, a period opening at the first event after the last one
    /// closed.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward_redis::Term;
    ///
    /// assert!(!Term::new(60, Duration::from_secs(60)).align);
    /// ```
    pub const fn new(quota: u32, period: Duration) -> Self {
        Self {
            quota,
            period,
            align: false,
        }
    }

    /// `quota` units per `period`, periods on the multiples of `period`.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward_redis::Term;
    ///
    /// assert!(Term::aligned(60, Duration::from_secs(60)).align);
    /// ```
    pub const fn aligned(quota: u32, period: Duration) -> Self {
        Self {
            quota,
            period,
            align: true,
        }
    }
}
