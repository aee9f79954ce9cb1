//! A cost taken on an estimate, to be settled at the actual cost once it is known.

use core::time::Duration;

use crate::clock::{Latest, nanos};
use crate::internal::owner::{Mark, Owner};

/// A cost taken on an estimate, to be settled at its actual cost once the request has run:
/// from [`Bucket::reserve`](crate::Bucket::reserve), [`Sliding::reserve`](crate::Sliding::reserve)
/// or [`Period::reserve`](crate::Period::reserve), settled by the same limiter's `settle`.
///
/// An API metered in tokens knows a request's cost only roughly when it starts and exactly
/// when it ends. The limiter takes the estimate at once, so that concurrent requests see it,
/// and `settle` corrects it: an actual below the estimate gives the difference back (a
/// refund), one above it charges the difference (a debt, which delays the next admission
/// until it is paid). Each limiter's `settle` says when a refund comes too late to count.
///
/// A reservation carries its deadline: a `settle` at a `now` after it changes nothing, so a
/// request that never reports keeps costing its estimate, and so does a reservation dropped
/// without a settle. The limiter keeps no list of reservations in flight: this value is all
/// it needs, so a pure core can time one out without a clock of its own.
///
/// It is not `Clone`: one reservation settles once. It also remembers the limiter that made
/// it: another limiter's `settle` (one made by another `new`, or a clone: a clone is another
/// limiter) changes nothing and hands it back as `Some`, where the settle of the one that
/// made it answers `None`, whether or not it came in time to change anything.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::Sliding;
///
/// let secs = Duration::from_secs;
/// // 100 000 tokens a minute; a request estimated at 4 000 uses 2 500.
/// let mut tokens = Sliding::new(100_000, secs(60));
/// let reservation = tokens.reserve(secs(0), 4_000, secs(30)).expect("room for it");
/// assert_eq!(reservation.estimate(), 4_000.0);
/// assert_eq!(reservation.deadline(), secs(30));
/// assert_eq!(tokens.left(secs(1)), 96_000);
/// tokens.settle(reservation, 2_500, secs(2));
/// assert_eq!(tokens.left(secs(2)), 97_500);
/// ```
#[derive(Debug, PartialEq)]
#[must_use = "a reservation left unsettled keeps costing its estimate: settle it with the actual cost"]
pub struct Reservation {
    /// The cost taken: tokens for a bucket, units (a whole number) for a log or a period.
    pub(crate) estimate: f64,
    /// When it was taken, in nanoseconds: a log's stamp.
    pub(crate) at: u64,
    /// Which of the limiter's generations it was taken in: a log's retune count, a period's
    /// serial number. A refund applies only within the same one.
    pub(crate) epoch: u64,
    /// The last reading, in nanoseconds, at which a settle still counts.
    pub(crate) deadline: u64,
    /// The limiter that took it.
    limiter: Mark,
}

/// A limiter that hands out reservations: what [`settle`] needs of it.
pub(crate) trait Reserves {
    /// The unit an actual cost is counted in.
    type Cost;
    /// The identity its reservations carry.
    fn owner(&self) -> &Owner;
    /// Settles a reservation this limiter made.
    fn settle_own(&mut self, reservation: &Reservation, actual: Self::Cost, now: Duration);
}

/// The one settle of every limiter: a reservation `limiter` did not make changes nothing and
/// comes back as `Some`; its own is settled and answers `None`.
#[inline]
pub(crate) fn settle<L: Reserves>(
    limiter: &mut L,
    reservation: Reservation,
    actual: L::Cost,
    now: Duration,
) -> Option<Reservation> {
    if !reservation.of(limiter) {
        return Some(reservation);
    }
    limiter.settle_own(&reservation, actual, now);
    None
}

impl Reservation {
    /// A reservation of `estimate` taken by `limiter` at `at` (nanoseconds) in generation
    /// `epoch`, that a settle may change until `timeout` after it: the one rule for every
    /// limiter.
    pub(crate) fn taken(
        limiter: &mut Owner,
        estimate: f64,
        at: u64,
        epoch: u64,
        timeout: Duration,
    ) -> Self {
        Self {
            estimate,
            at,
            epoch,
            deadline: at.saturating_add(nanos(timeout)),
            limiter: limiter.mark(),
        }
    }

    /// Whether `limiter` made it: a settle of any other changes nothing.
    #[inline]
    pub(crate) fn of<L: Reserves>(&self, limiter: &L) -> bool {
        limiter.owner().owns(self.limiter)
    }

    /// Whether a settle read at `t` (nanoseconds) comes too late to change anything.
    pub(crate) fn lapsed(&self, t: u64) -> bool {
        t > self.deadline
    }

    /// How a settle in whole units (a log's, a period's) starts: `None` past the deadline,
    /// the clock untouched; else the clock read at `now` and moved on to it (nanoseconds),
    /// the estimate and `actual`, as counts.
    pub(crate) fn whole(
        &self,
        latest: &mut Latest,
        now: Duration,
        actual: u32,
    ) -> Option<(u64, u64, u64)> {
        if self.lapsed(latest.read(now)) {
            return None;
        }
        let t = latest.advance(now);
        // `as` saturates, and reads NaN as 0: a log's or a period's reservation holds a `u32`.
        Some((t, self.estimate as u64, u64::from(actual)))
    }

    /// The cost taken when the reservation was made, and what it costs if never settled.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::Bucket;
    ///
    /// let mut bucket = Bucket::new(1.0, 10.0, Duration::ZERO);
    /// let reservation = bucket.reserve(Duration::ZERO, 2.5, Duration::from_secs(1)).unwrap();
    /// assert_eq!(reservation.estimate(), 2.5);
    /// bucket.settle(reservation, 2.5, Duration::ZERO);
    /// ```
    #[must_use]
    pub fn estimate(&self) -> f64 {
        self.estimate
    }

    /// The latest `now` at which a settle still counts: the reading it was made at plus its
    /// time-out, saturating at the end of the clock (about 584 years).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::Bucket;
    ///
    /// let secs = Duration::from_secs;
    /// let mut bucket = Bucket::new(1.0, 10.0, secs(0));
    /// let reservation = bucket.reserve(secs(5), 1.0, secs(10)).unwrap();
    /// assert_eq!(reservation.deadline(), secs(15));
    /// // Too late: the estimate stands.
    /// bucket.settle(reservation, 0.0, secs(16));
    /// assert_eq!(bucket.tokens(secs(5)), 9.0);
    /// ```
    #[must_use]
    pub fn deadline(&self) -> Duration {
        Duration::from_nanos(self.deadline)
    }
}
