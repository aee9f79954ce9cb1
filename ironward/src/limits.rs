//! Several limits decided at once, all or nothing: requests and tokens, a minute and a day.

use core::fmt;
use core::time::Duration;

use crate::bucket::Bucket;
use crate::period::Period;
use crate::reservation::Reservation;
use crate::sliding::Sliding;

/// One limiter of a [`Limits`] decision and what the request costs it.
///
/// The cost is in the limiter's own units: tokens (an `f64`) for a [`Bucket`], units (a
/// `u32`) for a [`Sliding`] log or a [`Period`]. Each limit of a request has its own: 1 for
/// "60 requests a minute", the estimated tokens for "100 000 tokens a minute".
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::{Limit, Sliding};
///
/// let mut requests = Sliding::new(60, Duration::from_secs(60));
/// let limit = Limit::Sliding(&mut requests, 1);
/// assert_eq!(limit.next(Duration::ZERO), Duration::ZERO);
/// ```
#[derive(Debug)]
pub enum Limit<'a> {
    /// A token bucket, and the tokens the request costs it.
    Bucket(&'a mut Bucket, f64),
    /// A sliding-window log, and the units the request costs it.
    Sliding(&'a mut Sliding, u32),
    /// A fixed-window counter, and the units the request costs it.
    Period(&'a mut Period, u32),
}

impl Limit<'_> {
    /// How long after `now` this limiter would admit its cost, without changing anything:
    /// [`Bucket::next`], [`Sliding::next_n`] or [`Period::next_n`]. Zero when it would now;
    /// `Duration::MAX` when it never will (a cost above the burst or the quota, or one that
    /// is not a cost).
    #[must_use = "next only computes the wait; it takes nothing"]
    pub fn next(&self, now: Duration) -> Duration {
        match self {
            Limit::Bucket(bucket, cost) => bucket.next(now, *cost),
            Limit::Sliding(log, cost) => log.next_n(now, *cost),
            Limit::Period(period, cost) => period.next_n(now, *cost),
        }
    }

    /// Takes the cost; called only once [`next`](Limit::next) has answered zero at `now`,
    /// when it cannot refuse.
    fn take(&mut self, now: Duration) -> bool {
        match self {
            Limit::Bucket(bucket, cost) => bucket.take(now, *cost),
            Limit::Sliding(log, cost) => log.take_n(now, *cost),
            Limit::Period(period, cost) => period.check_n(now, *cost).is_ok(),
        }
    }

    /// Reserves the cost, as [`take`](Limit::take) takes it.
    fn reserve(&mut self, now: Duration, timeout: Duration) -> Option<Reservation> {
        match self {
            Limit::Bucket(bucket, cost) => bucket.reserve(now, *cost, timeout).ok(),
            Limit::Sliding(log, cost) => log.reserve(now, *cost, timeout).ok(),
            Limit::Period(period, cost) => period.reserve(now, *cost, timeout).ok(),
        }
    }

    /// Whether this limit's limiter made `reservation`.
    fn made(&self, reservation: &Reservation) -> bool {
        match self {
            Limit::Bucket(bucket, _) => reservation.of(&**bucket),
            Limit::Sliding(log, _) => reservation.of(&**log),
            Limit::Period(period, _) => reservation.of(&**period),
        }
    }

    /// Settles `reservation` at this limit's cost, read as the actual one.
    fn settle(&mut self, reservation: Reservation, now: Duration) -> Option<Reservation> {
        match self {
            Limit::Bucket(bucket, cost) => bucket.settle(reservation, *cost, now),
            Limit::Sliding(log, cost) => log.settle(reservation, *cost, now),
            Limit::Period(period, cost) => period.settle(reservation, *cost, now),
        }
    }
}

/// Several limits decided as one, all or nothing: a request is admitted by every limiter,
/// each charged its own cost, or by none, none charged.
///
/// A platform says "60 requests a minute, 100 000 tokens a minute and 1 000 000 tokens a day
/// for one key". Asking each limiter in turn would charge the request-per-minute log for a
/// request the daily quota then refuses, and the log's room would be spent on nothing. This
/// asks every limiter first, without changing any ([`peek`](Limits::peek)), and takes from
/// them only when all would admit: a refusal leaves every limiter exactly as it was (no
/// clock moved, no refusal counted, where [`Period::take`] alone counts one), and an
/// admission charges each exactly its cost. Each limiter decides its cost as its own cost
/// method does ([`Bucket::take`], [`Sliding::take_n`], [`Period::check_n`]), and its wait
/// ([`Limit::next`]) is zero exactly when that method would admit at the same reading, which
/// is why the peek is exact.
///
/// The decision holds the limiters by `&mut` for its length, so the same limiter cannot
/// appear twice. [`reserve`](Limits::reserve) takes every estimate at once, and
/// [`settle`](Limits::settle) settles each at the actual cost given in a second `Limits`
/// over the same limiters in the same order.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::{Limit, Limits, Period, Sliding};
///
/// let secs = Duration::from_secs;
/// let mut requests = Sliding::new(60, secs(60));
/// let mut tokens = Sliding::new(100_000, secs(60));
/// let mut daily = Period::new(1_000_000, secs(86_400));
///
/// // A request estimated at 4 000 tokens.
/// let reservations = Limits([
///     Limit::Sliding(&mut requests, 1),
///     Limit::Sliding(&mut tokens, 4_000),
///     Limit::Period(&mut daily, 4_000),
/// ])
/// .reserve(secs(0), secs(30))
/// .expect("room in every limit");
/// // It used 2 500.
/// Limits([
///     Limit::Sliding(&mut requests, 1),
///     Limit::Sliding(&mut tokens, 2_500),
///     Limit::Period(&mut daily, 2_500),
/// ])
/// .settle(reservations, secs(3));
/// assert_eq!((requests.left(secs(3)), tokens.left(secs(3))), (59, 97_500));
/// assert_eq!(daily.left(secs(3)), 997_500);
///
/// // Too many tokens for the minute: refused, and the request log is not charged.
/// let reason = Limits([
///     Limit::Sliding(&mut requests, 1),
///     Limit::Sliding(&mut tokens, 98_000),
/// ])
/// .check(secs(4))
/// .expect_err("97 500 tokens left this minute");
/// assert_eq!((reason.index, reason.next), (1, secs(56)));
/// assert_eq!(requests.left(secs(4)), 59);
/// ```
#[derive(Debug)]
pub struct Limits<'a, const N: usize>(pub [Limit<'a>; N]);

impl<const N: usize> Limits<'_, N> {
    /// Whether every limit admits its cost at `now`, without changing any: `Err` names the
    /// limit that waits longest and when all of them would admit.
    ///
    /// That time is exact for the limiters as they stand: each admits from its own wait on
    /// (a bucket only fills, a window only empties, a period only ends), so all admit at the
    /// longest of the waits, and not before.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::{Bucket, Limit, Limits, Period};
    ///
    /// let secs = Duration::from_secs;
    /// let mut bucket = Bucket::new(1.0, 5.0, secs(0));
    /// let mut period = Period::new(10, secs(60));
    /// let limits = Limits([Limit::Bucket(&mut bucket, 8.0), Limit::Period(&mut period, 8)]);
    /// let reason = limits.peek(secs(0)).expect_err("a burst of 5");
    /// assert_eq!((reason.index, reason.next), (0, Duration::MAX));
    /// let limits = Limits([Limit::Bucket(&mut bucket, 4.0), Limit::Period(&mut period, 8)]);
    /// assert!(limits.peek(secs(0)).is_ok());
    /// ```
    #[must_use = "peek only says what a take would answer; it takes nothing"]
    pub fn peek(&self, now: Duration) -> Result<(), LimitsReason> {
        let mut longest = LimitsReason {
            index: 0,
            next: Duration::ZERO,
        };
        for (index, limit) in self.0.iter().enumerate() {
            let next = limit.next(now);
            if next > longest.next {
                longest = LimitsReason { index, next };
            }
        }
        if longest.next == Duration::ZERO {
            Ok(())
        } else {
            Err(longest)
        }
    }

    /// Whether every limit admits its cost at `now`, taking each cost if all do and none if
    /// any does not. This is [`check`](Limits::check) without the reason for a refusal.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::{Limit, Limits, Sliding};
    ///
    /// let secs = Duration::from_secs;
    /// let mut requests = Sliding::new(2, secs(60));
    /// let mut tokens = Sliding::new(1_000, secs(60));
    /// assert!(Limits([Limit::Sliding(&mut requests, 1), Limit::Sliding(&mut tokens, 900)]).take(secs(0)));
    /// assert!(!Limits([Limit::Sliding(&mut requests, 1), Limit::Sliding(&mut tokens, 200)]).take(secs(1)));
    /// assert_eq!((requests.left(secs(1)), tokens.left(secs(1))), (1, 100));
    /// ```
    #[must_use = "an unchecked take spends the costs without enforcing the limits"]
    pub fn take(&mut self, now: Duration) -> bool {
        self.check(now).is_ok()
    }

    /// [`take`](Limits::take) with the reason for a refusal, which is what
    /// [`peek`](Limits::peek) answers: the limit that waits longest, and when all admit.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::{Limit, Limits, Period, Sliding};
    ///
    /// let secs = Duration::from_secs;
    /// let mut requests = Sliding::new(1, secs(10));
    /// let mut daily = Period::new(100, secs(86_400));
    /// let mut both = Limits([Limit::Sliding(&mut requests, 1), Limit::Period(&mut daily, 30)]);
    /// assert!(both.check(secs(0)).is_ok());
    /// let reason = both.check(secs(4)).expect_err("one request in ten seconds");
    /// assert_eq!((reason.index, reason.next), (0, secs(6)));
    /// ```
    #[must_use = "an unchecked take spends the costs without enforcing the limits"]
    pub fn check(&mut self, now: Duration) -> Result<(), LimitsReason> {
        self.peek(now)?;
        for limit in &mut self.0 {
            // Each admits at `now`, as its wait of zero said.
            let taken = limit.take(now);
            debug_assert!(taken, "a limit refused what its wait admitted");
        }
        Ok(())
    }

    /// Reserves every limit's cost at `now` as an estimate, all or nothing, each to be
    /// settled within `timeout`; `Err` is what [`peek`](Limits::peek) answers, and then
    /// nothing is taken.
    ///
    /// The reservations come back in the order of the limits, for
    /// [`settle`](Limits::settle).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::{Bucket, Limit, Limits};
    ///
    /// let secs = Duration::from_secs;
    /// let mut tokens = Bucket::new(100.0, 1_000.0, secs(0));
    /// let reservations = Limits([Limit::Bucket(&mut tokens, 600.0)])
    ///     .reserve(secs(0), secs(60))
    ///     .unwrap();
    /// assert_eq!(reservations.get(0).unwrap().estimate(), 600.0);
    /// Limits([Limit::Bucket(&mut tokens, 100.0)]).settle(reservations, secs(0));
    /// assert_eq!(tokens.tokens(secs(0)), 900.0);
    /// ```
    #[must_use = "reservations left unsettled keep costing their estimates: settle them with the actual costs"]
    pub fn reserve(
        &mut self,
        now: Duration,
        timeout: Duration,
    ) -> Result<Reservations<N>, LimitsReason> {
        self.peek(now)?;
        // Each admits at `now`, as its wait of zero said.
        Ok(Reservations(core::array::from_fn(|index| {
            self.0[index].reserve(now, timeout)
        })))
    }

    /// Settles each reservation at the cost the limit at the same place gives, read as the
    /// actual cost, at `now`: each limiter's own `settle` (a refund, a debt, or nothing past
    /// the deadline).
    ///
    /// The limits must be the ones reserved from, in the same order: if any reservation is
    /// not its limit's, none is settled and they all come back as `Some`; otherwise the
    /// answer is `None`.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::{Limit, Limits, Period, Sliding};
    ///
    /// let secs = Duration::from_secs;
    /// let mut requests = Sliding::new(10, secs(60));
    /// let mut tokens = Period::new(1_000, secs(60));
    /// let reservations = Limits([Limit::Sliding(&mut requests, 1), Limit::Period(&mut tokens, 100)])
    ///     .reserve(secs(0), secs(30))
    ///     .unwrap();
    /// // It cost 1 500 tokens: 1 400 more, past the quota.
    /// Limits([Limit::Sliding(&mut requests, 1), Limit::Period(&mut tokens, 1_500)])
    ///     .settle(reservations, secs(1));
    /// assert!(!Limits([Limit::Sliding(&mut requests, 1), Limit::Period(&mut tokens, 0)]).take(secs(2)));
    /// assert_eq!(requests.left(secs(2)), 9);
    /// ```
    pub fn settle(
        &mut self,
        reservations: Reservations<N>,
        now: Duration,
    ) -> Option<Reservations<N>> {
        let mut pairs = self.0.iter().zip(&reservations.0);
        if !pairs.all(|(limit, r)| r.as_ref().is_none_or(|r| limit.made(r))) {
            return Some(reservations);
        }
        for (limit, reservation) in self.0.iter_mut().zip(reservations.0) {
            if let Some(reservation) = reservation {
                // Its limit's, as checked above: settled, never handed back.
                let _ = limit.settle(reservation, now);
            }
        }
        None
    }
}

/// The reservations of one [`Limits::reserve`], in the order of its limits, to be settled by
/// [`Limits::settle`].
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::{Limit, Limits, Sliding};
///
/// let mut log = Sliding::new(10, Duration::from_secs(1));
/// let reservations = Limits([Limit::Sliding(&mut log, 3)])
///     .reserve(Duration::ZERO, Duration::from_secs(1))
///     .unwrap();
/// assert_eq!(reservations.get(0).unwrap().estimate(), 3.0);
/// Limits([Limit::Sliding(&mut log, 3)]).settle(reservations, Duration::ZERO);
/// ```
#[derive(Debug)]
#[must_use = "reservations left unsettled keep costing their estimates: settle them with the actual costs"]
pub struct Reservations<const N: usize>([Option<Reservation>; N]);

impl<const N: usize> Reservations<N> {
    /// The reservation taken from the limit at `index`, in the order of the limits.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::{Limit, Limits, Sliding};
    ///
    /// let mut log = Sliding::new(10, Duration::from_secs(1));
    /// let reservations = Limits([Limit::Sliding(&mut log, 3)])
    ///     .reserve(Duration::ZERO, Duration::from_secs(1))
    ///     .unwrap();
    /// assert_eq!(reservations.get(0).map(|r| r.estimate()), Some(3.0));
    /// assert!(reservations.get(1).is_none());
    /// # Limits([Limit::Sliding(&mut log, 3)]).settle(reservations, Duration::ZERO);
    /// ```
    #[must_use]
    pub fn get(&self, index: usize) -> Option<&Reservation> {
        self.0.get(index).and_then(Option::as_ref)
    }
}

/// Why a [`Limits`] decision refused: the limit that waits longest, and when every limit
/// would admit its cost.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::{Limit, Limits, Sliding};
///
/// let mut log = Sliding::new(1, Duration::from_secs(10));
/// assert!(Limits([Limit::Sliding(&mut log, 1)]).take(Duration::ZERO));
/// let reason = Limits([Limit::Sliding(&mut log, 1)]).peek(Duration::ZERO).unwrap_err();
/// assert_eq!(reason.to_string(), "limit 0 of several refused: all admit in 10s");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LimitsReason {
    /// The place of the limit that waits longest (the first of them, on a tie).
    pub index: usize,
    /// How long until every limit would admit its cost: the longest wait, `Duration::MAX`
    /// when one never will.
    pub next: Duration,
}

impl fmt::Display for LimitsReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "limit {} of several refused: ", self.index)?;
        match self.next {
            Duration::MAX => f.write_str("never admits"),
            next => write!(f, "all admit in {next:?}"),
        }
    }
}

impl core::error::Error for LimitsReason {}
