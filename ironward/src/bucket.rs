//! A token bucket: a rate that lets a burst through after a quiet spell.

use core::time::Duration;

use crate::clock::Latest;
use crate::internal::float::{ceil_nanos, whole_f64};
use crate::internal::owner::Owner;
use crate::reservation::{self, Reservation, Reserves};

mod reason;
#[cfg(target_has_atomic = "64")]
mod shared;

pub use reason::BucketReason;
#[cfg(target_has_atomic = "64")]
pub use shared::SharedBucket;

/// Nanoseconds in a second, as the float the refill divides by.
const PER_SEC: f64 = 1e9;

/// A token bucket: `rate` tokens a second accrue continuously up to `burst`, and each call
/// takes what it costs.
///
/// A bucket smooths rather than counts. After a quiet spell it lets a whole burst through at
/// once, then holds callers to the rate, which is what a limit on a human-facing API wants:
/// nobody should be refused for two requests in the same second after an hour of none. It is
/// the algorithm of go-zero's `core/limit/tokenlimit.go` (there kept in Redis), with the
/// clock passed in. For a quota counted over a window use [`Sliding`](crate::Sliding) or
/// [`Period`](crate::Period) instead: a bucket would let "a thousand a day" go in the first
/// minute.
///
/// Tokens are an `f64`, so costs and rates may be fractional. The bucket is refilled lazily
/// on each call: `tokens = min(burst, tokens + rate · elapsed_ns / 1e9)`. Time is `now` on
/// the caller's clock, kept as whole nanoseconds (saturating after about 584 years).
///
/// # Edge cases
///
/// Nothing here panics. Each input out of range is read as follows:
///
/// * a `rate` that is negative, NaN or infinite is read as 0: the bucket never refills, so a
///   broken configuration fails closed rather than open;
/// * a `burst` below 1 or NaN is raised to 1 (a bucket that can never hold one token would
///   refuse everything); an infinite burst is kept and admits every finite cost;
/// * a cost `n` that is negative, NaN or infinite is refused: [`take`](Bucket::take) answers
///   `false` and [`next`](Bucket::next) `Duration::MAX`;
/// * a cost above the burst is refused however long the bucket is left alone, and `next` is
///   then `Duration::MAX`; a huge finite cost (up to `f64::MAX`) is such a cost unless the
///   burst is infinite, and never overflows the count;
/// * a fractional cost is charged exactly as given, to the float: `take(now, 0.25)` four
///   times spends one token;
/// * a cost of 0 passes unless a debt is outstanding (see below);
/// * an actual cost given to [`settle`](Bucket::settle) that is negative, NaN or infinite is
///   no answer, and the estimate stands;
/// * a `now` earlier than one already seen is read as the latest seen, so a clock that steps
///   back never adds tokens.
///
/// # Costs known after the fact
///
/// [`reserve`](Bucket::reserve) takes an estimate now and [`settle`](Bucket::settle) corrects
/// it to the actual cost later (a [`Reservation`]). A refund puts the difference back, capped
/// at the burst: a bucket that has refilled in the meantime has nowhere to put it, and the
/// refund is lost to the extent it would overflow. A debt takes the difference out even if the
/// bucket does not hold it: the tokens go negative, and no take passes (not even a cost of 0)
/// until the refill has paid the debt and the cost is there. A settle after the
/// reservation's deadline changes nothing, not even the bucket's clock.
///
/// The bound this keeps: over any stretch of time `d`, the costs charged (takes and
/// estimates at the time they are taken, debts when settled, refunds subtracted when
/// settled) are at most `burst + rate · d` plus the debts settled in the stretch after its
/// last admission. Every admission leaves the tokens at 0 or more, so only a debt can push
/// past the bucket's own bound, and a debt settled after the last admission is a debt of a
/// reservation in flight at that admission. With one reservation in flight at a time, the
/// bound is `burst + rate · d` plus the largest single overshoot (actual minus estimate).
///
/// `Clone` makes an independent copy of the state: the two buckets then spend and refill
/// separately, so cloning a bucket doubles the traffic the pair admits.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::Bucket;
///
/// let secs = Duration::from_secs;
/// // Ten a second, with room for a burst of twenty.
/// let mut bucket = Bucket::new(10.0, 20.0, secs(0));
/// assert!((0..20).all(|_| bucket.take(secs(0), 1.0)));
/// assert!(!bucket.take(secs(0), 1.0));
///
/// // One token comes back every 100 ms.
/// assert_eq!(bucket.next(secs(0), 1.0), Duration::from_millis(100));
/// assert!(bucket.take(Duration::from_millis(100), 1.0));
/// ```
#[derive(Debug, Clone)]
pub struct Bucket {
    /// Tokens a second: finite and at least 0.
    rate: f64,
    /// The most the bucket holds: at least 1, possibly infinite.
    burst: f64,
    /// Tokens held at the latest reading; never NaN, at least `-f64::MAX`: negative while a
    /// settled debt is being paid.
    tokens: f64,
    /// The latest reading seen, which is when `tokens` was counted.
    latest: Latest,
    /// Marks its reservations, which only its own `settle` settles.
    pub(crate) owner: Owner,
}

impl Bucket {
    /// A full bucket that refills at `rate` tokens a second up to `burst`, its clock at
    /// `now`.
    ///
    /// Starting full is what lets the first burst through. A `rate` that is negative, NaN or
    /// infinite is read as 0 (never refills); a `burst` below 1 or NaN is raised to 1.
    pub fn new(rate: f64, burst: f64, now: Duration) -> Self {
        Self::with_tokens(rate, burst, f64::INFINITY, now)
    }

    /// A bucket that holds `tokens` at `now`, refilling at `rate` tokens a second up to
    /// `burst`: the state of a bucket kept elsewhere (in Redis, by `ironward-redis`), so that
    /// its answers are this type's to the last float.
    ///
    /// `rate` and `burst` are read as in [`new`](Bucket::new); `tokens` above the burst are
    /// the burst, NaN tokens are none, and negative tokens are a debt (down to `-f64::MAX`,
    /// `-inf` included), as a [`settle`](Bucket::settle) that cost more than its estimate
    /// leaves one: the refill pays it before a take passes.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::Bucket;
    ///
    /// let half = Bucket::with_tokens(2.0, 4.0, 0.5, Duration::from_secs(10));
    /// assert_eq!(half.tokens(Duration::from_secs(10)), 0.5);
    /// assert_eq!(half.next(Duration::from_secs(10), 1.0), Duration::from_millis(250));
    /// ```
    pub fn with_tokens(rate: f64, burst: f64, tokens: f64, now: Duration) -> Self {
        let (rate, burst) = (read_rate(rate), read_burst(burst));
        // NaN is none; `max` returns the other operand for NaN, and a NaN `min` does too.
        let tokens = if tokens.is_nan() {
            0.0
        } else {
            tokens.min(burst).max(-f64::MAX)
        };
        Self {
            rate,
            burst,
            tokens,
            latest: Latest::new(now),
            owner: Owner::default(),
        }
    }

    /// Changes the rate and the burst in place at `now`, keeping the tokens held.
    ///
    /// The tokens are first refilled to `now` under the old rate and burst, then capped at
    /// the new burst; from `now` on they accrue at the new rate. The bucket then answers
    /// exactly as [`with_tokens`](Bucket::with_tokens)`(rate, burst, tokens, now)` would,
    /// `tokens` being what it held at `now`. A larger burst does not fill the bucket: the
    /// room comes as tokens accrue, so reloading a policy never lets an extra burst through.
    /// `rate` and `burst` are read as [`new`](Bucket::new) reads them.
    ///
    /// A `now` earlier than one already seen is read as the latest seen, and the bucket
    /// remembers it, as after a [`take`](Bucket::take). Retuning to the rate and burst the
    /// bucket already has (as read) changes nothing, not even its clock.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::Bucket;
    ///
    /// let secs = Duration::from_secs;
    /// let mut bucket = Bucket::new(1.0, 10.0, secs(0));
    /// assert!(bucket.take(secs(0), 10.0));
    /// // Four tokens accrue at the old rate, then the rate doubles and the burst grows.
    /// bucket.retune(2.0, 100.0, secs(4));
    /// assert_eq!(bucket.tokens(secs(4)), 4.0);
    /// assert_eq!(bucket.tokens(secs(5)), 6.0);
    /// // A smaller burst caps what is held.
    /// bucket.retune(2.0, 3.0, secs(5));
    /// assert_eq!(bucket.tokens(secs(5)), 3.0);
    /// ```
    pub fn retune(&mut self, rate: f64, burst: f64, now: Duration) {
        let (rate, burst) = (read_rate(rate), read_burst(burst));
        if rate == self.rate && burst == self.burst {
            return;
        }
        let elapsed = self.elapsed(now);
        self.latest.advance(now);
        // Never NaN and at least 0, so the cap is a plain `min`: an infinite hold under an
        // infinite burst becomes the new burst.
        self.tokens = self.held(elapsed).min(burst);
        self.rate = rate;
        self.burst = burst;
    }

    /// Whether `n` tokens are there at `now`, taking them if they are.
    ///
    /// A cost that is negative, NaN or infinite is refused, and so is a cost above the burst,
    /// whatever the bucket holds. A cost of zero passes unless a settled debt is still being
    /// paid. Costs may be fractional (tokens are an `f64`). This is [`check`](Bucket::check)
    /// without the reason for a refusal.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::Bucket;
    ///
    /// let secs = Duration::from_secs;
    /// // Tokens of a language model: 1 000 a second, 10 000 at once.
    /// let mut bucket = Bucket::new(1_000.0, 10_000.0, secs(0));
    /// assert!(bucket.take(secs(0), 2_500.5));
    /// assert!(bucket.take(secs(0), 7_499.5));
    /// assert!(!bucket.take(secs(0), 0.25));
    /// // A request larger than the burst never passes.
    /// assert!(!bucket.take(secs(3_600), 10_000.5));
    /// assert_eq!(bucket.next(secs(3_600), 10_000.5), Duration::MAX);
    /// ```
    // Inline, as `check` and the helpers below are: without LTO a call from another crate
    // costs about what a refusal does, and inlined, a caller's loop keeps the bucket in
    // registers instead of waiting on the store of the take before.
    #[inline]
    #[must_use = "an unchecked take spends the tokens without enforcing the limit"]
    pub fn take(&mut self, now: Duration, n: f64) -> bool {
        self.check(now, n).is_ok()
    }

    /// [`take`](Bucket::take) with the numbers behind a refusal: `take` is this with the
    /// reason discarded, so the two always decide alike.
    ///
    /// `Err` is a refusal, an answer rather than a failure. It carries the tokens the bucket
    /// held at `now` (a refusal keeps them all), the cost wanted, the burst, the rate and
    /// when the tokens were counted, each read by the decision anyway (see
    /// [`BucketReason`]). When the tokens will be there is not worked out on a refusal: it
    /// costs several times the decision itself, so [`BucketReason::next`] works it out from
    /// those fields when asked, as [`next`](Bucket::next) answers on the bucket the
    /// refusal left.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::Bucket;
    ///
    /// let ms = Duration::from_millis;
    /// let mut bucket = Bucket::new(10.0, 2.0, ms(0));
    /// assert!(bucket.check(ms(0), 1.5).is_ok());
    /// let reason = bucket.check(ms(0), 1.0).expect_err("half a token left");
    /// assert_eq!((reason.tokens, reason.wanted, reason.burst), (0.5, 1.0, 2.0));
    /// assert_eq!(reason.next(), ms(50));
    /// assert_eq!(reason.next(), bucket.next(ms(0), 1.0));
    /// ```
    #[inline]
    #[must_use = "an unchecked take spends the tokens without enforcing the limit"]
    pub fn check(&mut self, now: Duration, n: f64) -> Result<(), BucketReason> {
        let elapsed = self.elapsed(now);
        let at = self.latest.advance(now);
        let held = self.held(elapsed);
        // `n <= held` first: it is the test that usually decides.
        if n <= held && is_cost(n) {
            self.tokens = held - n;
            Ok(())
        } else {
            self.tokens = held;
            Err(BucketReason {
                tokens: held,
                wanted: n,
                burst: self.burst,
                rate: self.rate,
                at: Duration::from_nanos(at),
            })
        }
    }

    /// How long after `now` `n` tokens will be there, without taking them.
    ///
    /// Zero when they are there now. `Duration::MAX` when they never will be: `n` is more
    /// than the burst, the bucket does not refill, the cost is negative, NaN or infinite, or
    /// the tokens would arrive only after the clock's range (about 584 years) has run out.
    ///
    /// This is what a caller sleeps for, or sends as `Retry-After`. It is the one answer in
    /// the crate rounded up rather than to the nearest nanosecond: it is the first whole
    /// nanosecond at which the refill, computed in floats exactly as
    /// [`take`](Bucket::take) computes it, reaches `n`, so `take(now + next(now, n), n)`
    /// succeeds on the bucket as it stands and a nanosecond earlier would not. (At 3 tokens a
    /// second one token takes 333 333 333.3 ns: the answer is 333 333 334 ns.)
    #[must_use = "next only computes the wait; it takes nothing"]
    pub fn next(&self, now: Duration, n: f64) -> Duration {
        if !is_cost(n) || n > self.burst {
            return Duration::MAX;
        }
        let elapsed = self.elapsed(now);
        if self.held(elapsed) >= n {
            return Duration::ZERO;
        }
        if self.rate == 0.0 {
            return Duration::MAX;
        }
        match self.first_reaching(n, elapsed) {
            Some(at) => Duration::from_nanos(at - elapsed),
            None => Duration::MAX,
        }
    }

    /// How many tokens the bucket holds at `now`, for a caller that reports its headroom:
    /// negative while a settled debt is being paid.
    #[must_use]
    pub fn tokens(&self, now: Duration) -> f64 {
        self.held(self.elapsed(now))
    }

    /// How long the bucket takes to be as good as new when left alone: the time to refill
    /// from empty, `burst / rate`, rounded up to the first whole nanosecond at which it is
    /// full.
    ///
    /// From a debt (a [`settle`](Bucket::settle) above its estimate) the refill takes longer,
    /// by the debt over the rate, and so does this answer.
    ///
    /// After this long without a take the bucket is full whatever it held, so it answers as
    /// a fresh one would: a caller keeping a bucket per key may forget a key idle for longer
    /// and give it a new bucket when it returns, changing no answer. `Duration::MAX` when the
    /// bucket never fills (a rate of 0, an infinite burst, or a refill longer than the
    /// clock's range of about 584 years).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::Bucket;
    ///
    /// // Twenty tokens at ten a second: two seconds from empty to full.
    /// assert_eq!(Bucket::new(10.0, 20.0, Duration::ZERO).idle(), Duration::from_secs(2));
    /// assert_eq!(Bucket::new(0.0, 20.0, Duration::ZERO).idle(), Duration::MAX);
    /// ```
    #[must_use]
    pub fn idle(&self) -> Duration {
        if self.rate == 0.0 || self.burst == f64::INFINITY {
            return Duration::MAX;
        }
        // An empty bucket (or one as deep in debt as this one) with the same rate and burst,
        // its clock at zero: the first nanosecond at which it holds the burst, found as
        // `next` finds one.
        let empty = Self {
            tokens: self.tokens.min(0.0),
            latest: Latest::default(),
            owner: Owner::default(),
            ..*self
        };
        // The burst is at least 1, so the empty bucket falls short of it at zero.
        match empty.first_reaching(self.burst, 0) {
            Some(at) => Duration::from_nanos(at),
            None => Duration::MAX,
        }
    }

    /// Takes an estimated cost now, to be settled at the actual cost with
    /// [`settle`](Bucket::settle) within `timeout`.
    ///
    /// The estimate is decided exactly as [`check`](Bucket::check) decides a cost (so a
    /// refused estimate takes nothing and says why); the reservation it answers carries the
    /// estimate and its deadline, `now` (read as the latest seen) plus `timeout`. A
    /// reservation never settled, or settled after its deadline, costs its estimate.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::Bucket;
    ///
    /// let secs = Duration::from_secs;
    /// let mut bucket = Bucket::new(100.0, 1_000.0, secs(0));
    /// let reservation = bucket.reserve(secs(0), 800.0, secs(60)).expect("room for it");
    /// assert_eq!(bucket.tokens(secs(0)), 200.0);
    /// assert!(bucket.reserve(secs(0), 300.0, secs(60)).is_err());
    /// // It cost 500: 300 come back.
    /// bucket.settle(reservation, 500.0, secs(0));
    /// assert_eq!(bucket.tokens(secs(0)), 500.0);
    /// ```
    #[must_use = "a reservation left unsettled keeps costing its estimate: settle it with the actual cost"]
    pub fn reserve(
        &mut self,
        now: Duration,
        estimate: f64,
        timeout: Duration,
    ) -> Result<Reservation, BucketReason> {
        self.check(now, estimate)?;
        let at = self.counted_at();
        Ok(Reservation::taken(
            &mut self.owner,
            estimate,
            at,
            0,
            timeout,
        ))
    }

    /// Settles a [`reserve`](Bucket::reserve)d cost at its `actual` cost, at `now`.
    ///
    /// Below the estimate, the difference comes back, capped at the burst: a refund is lost
    /// to the extent that the bucket has refilled since and has no room for it. Above the
    /// estimate, the difference is taken as a debt, even past what the bucket holds: the
    /// tokens go negative and no take passes until the refill has paid it, so a request that
    /// cost more than it said delays the next ones rather than being forgiven. At `now`
    /// after the reservation's deadline, or for an `actual` that is negative, NaN or
    /// infinite, nothing changes (not even the clock): the estimate stands. A `now` earlier
    /// than one already seen is read as the latest seen. The answer is `None`, except for a
    /// reservation another bucket made: that changes nothing here either, and comes back as
    /// `Some`, to be settled on the bucket that made it.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::Bucket;
    ///
    /// let secs = Duration::from_secs;
    /// let mut bucket = Bucket::new(10.0, 100.0, secs(0));
    /// let reservation = bucket.reserve(secs(0), 50.0, secs(60)).unwrap();
    /// // It cost 130: 80 more than the estimate, and the bucket held only 50.
    /// bucket.settle(reservation, 130.0, secs(0));
    /// assert_eq!(bucket.tokens(secs(0)), -30.0);
    /// assert!(!bucket.take(secs(0), 0.0));
    /// // The debt is paid in 3 s, one token more takes a tenth of a second longer.
    /// assert_eq!(bucket.next(secs(0), 1.0), Duration::from_millis(3_100));
    /// ```
    pub fn settle(
        &mut self,
        reservation: Reservation,
        actual: f64,
        now: Duration,
    ) -> Option<Reservation> {
        reservation::settle(self, reservation, actual, now)
    }

    /// Tokens a second, as read by [`new`](Bucket::new).
    #[must_use]
    pub fn rate(&self) -> f64 {
        self.rate
    }

    /// The most the bucket holds, as read by [`new`](Bucket::new).
    #[must_use]
    pub fn burst(&self) -> f64 {
        self.burst
    }

    /// When `tokens` was counted: the latest reading seen, in nanoseconds.
    #[inline]
    fn counted_at(&self) -> u64 {
        self.latest.get()
    }

    /// Nanoseconds from the latest reading to `now`, zero for a `now` that is not later.
    #[inline]
    fn elapsed(&self, now: Duration) -> u64 {
        self.latest.read(now) - self.counted_at()
    }

    /// The tokens held `elapsed` nanoseconds after the latest reading, before the burst
    /// caps them. Never NaN: the rate is finite, the product at worst `+inf`.
    #[inline]
    fn grown(&self, elapsed: u64) -> f64 {
        self.tokens + self.rate * whole_f64(u128::from(elapsed)) / PER_SEC
    }

    /// The tokens held `elapsed` nanoseconds after the latest reading: [`grown`](Bucket::grown)
    /// capped at the burst. A comparison rather than `f64::min`, whose NaN handling costs
    /// several instructions on a value that is never NaN.
    #[inline]
    fn held(&self, elapsed: u64) -> f64 {
        let grown = self.grown(elapsed);
        if grown < self.burst {
            grown
        } else {
            self.burst
        }
    }

    /// The first `elapsed` at which [`grown`](Bucket::grown) reaches `n`, or `None` when it
    /// does not within the clock's range. Given that it has not reached `n` at `short`.
    ///
    /// The quotient `(n − tokens) / rate` is only an estimate of the float sum `take` will
    /// compute, usually exact and otherwise off by a few nanoseconds either way; `grown` is
    /// monotone in `elapsed`, so the estimate is corrected by searching for the exact first
    /// nanosecond: gallop up from it while it falls short, or down while the point below is
    /// still enough, then bisect the last step. The cost grows with the logarithm of the
    /// estimate's error, not of the wait.
    fn first_reaching(&self, n: f64, mut short: u64) -> Option<u64> {
        let limit = u64::MAX - self.counted_at();
        let guess = ceil_nanos((n - self.tokens) / self.rate * PER_SEC);
        let mut enough = u64::try_from(guess)
            .unwrap_or(u64::MAX)
            .min(limit)
            .max(short);
        let mut step = 1_u64;
        while self.grown(enough) < n {
            if enough == limit {
                return None;
            }
            short = enough;
            enough = enough.saturating_add(step).min(limit);
            step = step.saturating_mul(2);
        }
        // `grown(short) < n <= grown(enough)` from here on.
        let mut step = 1_u64;
        while enough - short > 1 {
            let below = enough - step.min(enough - short - 1);
            if self.grown(below) < n {
                short = below;
                break;
            }
            enough = below;
            step = step.saturating_mul(2);
        }
        while enough - short > 1 {
            let mid = short + (enough - short) / 2;
            if self.grown(mid) < n {
                short = mid;
            } else {
                enough = mid;
            }
        }
        Some(enough)
    }
}

/// A rate as a bucket reads it: a negative, NaN or infinite one is 0, which never refills.
fn read_rate(rate: f64) -> f64 {
    if rate.is_finite() && rate > 0.0 {
        rate
    } else {
        0.0
    }
}

/// A burst as a bucket reads it: below 1, or NaN, is 1.
fn read_burst(burst: f64) -> f64 {
    // `max` returns the other operand when one is NaN, so NaN becomes 1 here too.
    burst.max(1.0)
}

/// Whether `n` is a cost a bucket can charge: finite and not negative.
#[inline]
fn is_cost(n: f64) -> bool {
    // Two comparisons, false for NaN; `is_finite` compiles to bit tests several times longer.
    (0.0..=f64::MAX).contains(&n)
}

impl Reserves for Bucket {
    type Cost = f64;

    fn owner(&self) -> &Owner {
        &self.owner
    }

    fn settle_own(&mut self, reservation: &Reservation, actual: f64, now: Duration) {
        if reservation.lapsed(self.latest.read(now)) || !is_cost(actual) {
            return;
        }
        let estimate = reservation.estimate;
        let elapsed = self.elapsed(now);
        self.latest.advance(now);
        let held = self.held(elapsed);
        self.tokens = if actual < estimate {
            // A refund: `estimate − actual` is finite and positive, the sum at worst `+inf`.
            (held + (estimate - actual)).min(self.burst)
        } else {
            // A debt (or nothing): kept finite, so that a refill never meets `-inf`.
            (held - (actual - estimate)).max(-f64::MAX)
        };
    }
}

#[cfg(test)]
mod tests;
