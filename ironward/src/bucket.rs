//! A token bucket: a rate that lets a burst through after a quiet spell.

use core::time::Duration;

use crate::clock::Latest;
use crate::float::{ceil_nanos, whole_f64};

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
/// * a `now` earlier than one already seen is read as the latest seen, so a clock that steps
///   back never adds tokens.
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
    /// Tokens held at the latest reading; never NaN, never negative.
    tokens: f64,
    /// The latest reading seen, which is when `tokens` was counted.
    latest: Latest,
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
    /// the burst, and NaN or negative tokens are none.
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
        // NaN is not at least 0, so it is none too.
        let tokens = if tokens >= 0.0 {
            tokens.min(burst)
        } else {
            0.0
        };
        Self {
            rate,
            burst,
            tokens,
            latest: Latest::new(now),
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
    /// A cost that is negative, NaN or infinite is refused. A cost of zero always passes.
    #[must_use = "an unchecked take spends the tokens without enforcing the limit"]
    pub fn take(&mut self, now: Duration, n: f64) -> bool {
        let elapsed = self.elapsed(now);
        self.latest.advance(now);
        let held = self.held(elapsed);
        // `n <= held` first: it is the test that usually decides.
        if n <= held && is_cost(n) {
            self.tokens = held - n;
            true
        } else {
            self.tokens = held;
            false
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

    /// How many tokens the bucket holds at `now`, for a caller that reports its headroom.
    #[must_use]
    pub fn tokens(&self, now: Duration) -> f64 {
        self.held(self.elapsed(now))
    }

    /// How long the bucket takes to be as good as new when left alone: the time to refill
    /// from empty, `burst / rate`, rounded up to the first whole nanosecond at which it is
    /// full.
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
        // An empty bucket with the same rate and burst, its clock at zero: the first
        // nanosecond at which it holds the burst, found as `next` finds one.
        let empty = Self {
            tokens: 0.0,
            latest: Latest::default(),
            ..*self
        };
        // The burst is at least 1, so the empty bucket falls short of it at zero.
        match empty.first_reaching(self.burst, 0) {
            Some(at) => Duration::from_nanos(at),
            None => Duration::MAX,
        }
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
    fn counted_at(&self) -> u64 {
        self.latest.get()
    }

    /// Nanoseconds from the latest reading to `now`, zero for a `now` that is not later.
    fn elapsed(&self, now: Duration) -> u64 {
        self.latest.read(now) - self.counted_at()
    }

    /// The tokens held `elapsed` nanoseconds after the latest reading, before the burst
    /// caps them. Never NaN: the rate is finite, the product at worst `+inf`.
    fn grown(&self, elapsed: u64) -> f64 {
        self.tokens + self.rate * whole_f64(u128::from(elapsed)) / PER_SEC
    }

    /// The tokens held `elapsed` nanoseconds after the latest reading: [`grown`](Bucket::grown)
    /// capped at the burst. A comparison rather than `f64::min`, whose NaN handling costs
    /// several instructions on a value that is never NaN.
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
fn is_cost(n: f64) -> bool {
    // Two comparisons, false for NaN; `is_finite` compiles to bit tests several times longer.
    (0.0..=f64::MAX).contains(&n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn secs(n: u64) -> Duration {
        Duration::from_secs(n)
    }

    #[test]
    fn a_bucket_made_with_tokens_holds_them_within_the_burst() {
        assert_eq!(
            Bucket::with_tokens(1.0, 3.0, 2.5, secs(0)).tokens(secs(0)),
            2.5
        );
        assert_eq!(
            Bucket::with_tokens(1.0, 3.0, 7.0, secs(0)).tokens(secs(0)),
            3.0
        );
        assert_eq!(
            Bucket::with_tokens(1.0, 3.0, f64::NAN, secs(0)).tokens(secs(0)),
            0.0
        );
        assert_eq!(
            Bucket::with_tokens(1.0, 3.0, -1.0, secs(0)).tokens(secs(0)),
            0.0
        );
        let mut bucket = Bucket::with_tokens(3.0, 1.0, 0.0, secs(5));
        let wait = bucket.next(secs(5), 1.0);
        assert!(!bucket.take(secs(5) + wait - Duration::from_nanos(1), 1.0));
        assert!(bucket.take(secs(5) + wait, 1.0));
    }

    #[test]
    fn starts_full_and_lets_the_burst_through() {
        let mut bucket = Bucket::new(1.0, 3.0, secs(0));
        assert_eq!(bucket.tokens(secs(0)), 3.0);
        assert!(bucket.take(secs(0), 1.0));
        assert!(bucket.take(secs(0), 1.0));
        assert!(bucket.take(secs(0), 1.0));
        assert!(!bucket.take(secs(0), 1.0));
    }

    #[test]
    fn refills_at_the_rate() {
        let mut bucket = Bucket::new(10.0, 1.0, secs(0));
        assert!(bucket.take(secs(0), 1.0));
        assert_eq!(bucket.tokens(ms(50)), 0.5);
        assert!(!bucket.take(ms(50), 1.0));
        assert!(bucket.take(ms(100), 1.0));
    }

    #[test]
    fn never_holds_more_than_the_burst() {
        let bucket = Bucket::new(100.0, 5.0, secs(0));
        assert_eq!(bucket.tokens(secs(3600)), 5.0);
        let mut bucket = Bucket::new(100.0, 5.0, secs(0));
        assert!(bucket.take(secs(0), 5.0));
        assert_eq!(bucket.tokens(secs(3600)), 5.0);
    }

    #[test]
    fn the_clock_starts_at_creation() {
        let mut bucket = Bucket::new(1.0, 2.0, secs(100));
        assert!(bucket.take(secs(100), 2.0));
        assert_eq!(bucket.tokens(secs(101)), 1.0);
    }

    #[test]
    fn takes_fractional_costs() {
        let mut bucket = Bucket::new(0.5, 1.0, secs(0));
        assert!(bucket.take(secs(0), 0.25));
        assert!(bucket.take(secs(0), 0.75));
        assert!(!bucket.take(secs(0), 0.25));
        assert!(bucket.take(ms(500), 0.25));
    }

    #[test]
    fn a_cost_of_zero_always_passes() {
        let mut bucket = Bucket::new(0.0, 1.0, secs(0));
        assert!(bucket.take(secs(0), 1.0));
        assert!(bucket.take(secs(0), 0.0));
        assert!(bucket.take(secs(0), -0.0));
        assert_eq!(bucket.next(secs(0), 0.0), Duration::ZERO);
    }

    #[test]
    fn a_burst_below_one_or_nan_is_raised_to_one() {
        for burst in [0.0, 0.5, -3.0, f64::NEG_INFINITY, f64::NAN] {
            let mut bucket = Bucket::new(1.0, burst, secs(0));
            assert_eq!(bucket.burst(), 1.0, "burst {burst}");
            assert!(bucket.take(secs(0), 1.0));
            assert!(!bucket.take(secs(0), 1.0));
        }
    }

    #[test]
    fn an_infinite_burst_admits_every_finite_cost() {
        let mut bucket = Bucket::new(0.0, f64::INFINITY, secs(0));
        for _ in 0..1000 {
            assert!(bucket.take(secs(0), f64::MAX));
        }
        assert_eq!(bucket.tokens(secs(0)), f64::INFINITY);
        assert_eq!(bucket.next(secs(0), 1e300), Duration::ZERO);
        assert!(!bucket.take(secs(0), f64::INFINITY));
    }

    #[test]
    fn a_negative_nan_or_infinite_rate_never_refills() {
        for rate in [-1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let mut bucket = Bucket::new(rate, 1.0, secs(0));
            assert_eq!(bucket.rate(), 0.0, "rate {rate}");
            assert!(bucket.take(secs(0), 1.0));
            assert!(!bucket.take(secs(1_000_000), 1.0));
            assert_eq!(bucket.next(secs(1_000_000), 1.0), Duration::MAX);
        }
    }

    #[test]
    fn a_negative_nan_or_infinite_cost_is_refused() {
        let mut bucket = Bucket::new(1.0, 5.0, secs(0));
        for n in [
            -1.0,
            -f64::MIN_POSITIVE,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            assert!(!bucket.take(secs(0), n), "cost {n}");
            assert_eq!(bucket.next(secs(0), n), Duration::MAX, "cost {n}");
        }
        assert_eq!(bucket.tokens(secs(0)), 5.0);
    }

    #[test]
    fn a_huge_rate_fills_at_once_without_overflowing() {
        let mut bucket = Bucket::new(f64::MAX, 2.0, secs(0));
        assert!(bucket.take(secs(0), 2.0));
        assert_eq!(bucket.tokens(Duration::from_nanos(1)), 2.0);
        assert_eq!(bucket.tokens(Duration::MAX), 2.0);
        assert_eq!(bucket.next(secs(0), 1.0), Duration::from_nanos(1));
    }

    #[test]
    fn next_is_zero_when_the_tokens_are_there() {
        let bucket = Bucket::new(1.0, 2.0, secs(0));
        assert_eq!(bucket.next(secs(0), 2.0), Duration::ZERO);
    }

    #[test]
    fn next_is_forever_past_the_burst() {
        let bucket = Bucket::new(1.0, 2.0, secs(0));
        assert_eq!(bucket.next(secs(0), 2.5), Duration::MAX);
    }

    #[test]
    fn next_counts_from_what_is_already_there() {
        let mut bucket = Bucket::new(2.0, 4.0, secs(0));
        assert!(bucket.take(secs(0), 4.0));
        // At 250 ms half a token is there; the three more needed take 1.5 s at two a second.
        assert_eq!(bucket.next(ms(250), 3.5), ms(1500));
    }

    // The one place the crate rounds up: a third of a second is not whole nanoseconds.
    #[test]
    fn next_rounds_up_so_that_taking_then_succeeds() {
        let mut bucket = Bucket::new(3.0, 1.0, secs(0));
        assert!(bucket.take(secs(0), 1.0));
        let wait = bucket.next(secs(0), 1.0);
        assert_eq!(wait, Duration::from_nanos(333_333_334));
        assert!(!bucket.clone().take(wait - Duration::from_nanos(1), 1.0));
        assert!(bucket.take(wait, 1.0));
    }

    #[test]
    fn next_is_exact_for_awkward_rates() {
        for rate in [3.0, 7.0, 0.3, 1e-3, 123.456, 1e9 / 3.0] {
            let mut bucket = Bucket::new(rate, 1.5, secs(7));
            assert!(bucket.take(secs(7), 1.5));
            let now = secs(7) + Duration::from_nanos(1);
            let wait = bucket.next(now, 1.0);
            assert!(wait > Duration::ZERO, "rate {rate}");
            assert!(bucket.clone().take(now + wait, 1.0), "rate {rate}");
            assert!(
                !bucket.take(now + wait - Duration::from_nanos(1), 1.0),
                "rate {rate}"
            );
        }
    }

    #[test]
    fn next_is_forever_when_the_tokens_would_come_after_the_clock_runs_out() {
        let mut bucket = Bucket::new(1e-300, 1.0, secs(0));
        assert!(bucket.take(secs(0), 1.0));
        assert_eq!(bucket.next(secs(0), 1.0), Duration::MAX);
        // Half a token in 584 years.
        let mut bucket = Bucket::new(1.0 / u64::MAX as f64 * 5e8, 1.0, secs(0));
        assert!(bucket.take(secs(0), 1.0));
        assert_eq!(bucket.next(secs(0), 1.0), Duration::MAX);
        assert!(bucket.next(secs(0), 0.4) < Duration::MAX);
    }

    #[test]
    fn a_clock_going_backwards_never_adds_tokens() {
        let mut bucket = Bucket::new(1.0, 1.0, secs(10));
        assert!(bucket.take(secs(10), 1.0));
        assert!(!bucket.take(secs(5), 1.0));
        assert!(!bucket.take(secs(0), 1.0));
        assert_eq!(bucket.tokens(secs(0)), 0.0);
        assert_eq!(bucket.next(secs(0), 1.0), secs(1));
        // The steps back did not move the clock either.
        assert!(bucket.take(secs(11), 1.0));
    }

    #[test]
    fn survives_a_clock_at_the_end_of_its_range() {
        let mut bucket = Bucket::new(1.0, 2.0, Duration::MAX);
        assert!(bucket.take(Duration::MAX, 2.0));
        assert!(!bucket.take(Duration::MAX, 1.0));
        // Time has stopped: the tokens never come back.
        assert_eq!(bucket.next(Duration::MAX, 1.0), Duration::MAX);
        assert_eq!(bucket.tokens(Duration::MAX), 0.0);

        let mut bucket = Bucket::new(1.0, 2.0, secs(0));
        assert!(bucket.take(secs(0), 2.0));
        assert_eq!(bucket.tokens(Duration::MAX), 2.0);
        assert!(bucket.take(Duration::MAX, 2.0));
    }

    #[test]
    fn idle_is_the_time_from_empty_to_full() {
        assert_eq!(Bucket::new(10.0, 20.0, secs(0)).idle(), secs(2));
        assert_eq!(Bucket::new(4.0, 2.0, secs(9)).idle(), ms(500));
        // A third of a second is not whole nanoseconds: rounded up, so the bucket is full.
        let idle = Bucket::new(3.0, 1.0, secs(0)).idle();
        assert_eq!(idle, Duration::from_nanos(333_333_334));
        for (rate, burst) in [
            (3.0, 1.0),
            (7.0, 2.5),
            (0.3, 1.0),
            (123.456, 9.75),
            (1e9 / 3.0, 5.0),
        ] {
            let mut bucket = Bucket::new(rate, burst, secs(0));
            assert!(bucket.take(secs(0), burst));
            let idle = bucket.idle();
            assert_eq!(bucket.tokens(idle), burst, "rate {rate}, burst {burst}");
            assert!(
                bucket.tokens(idle - Duration::from_nanos(1)) < burst,
                "rate {rate}, burst {burst}"
            );
        }
    }

    #[test]
    fn idle_does_not_depend_on_what_the_bucket_holds_or_its_clock() {
        let mut bucket = Bucket::new(2.0, 4.0, secs(100));
        let fresh = bucket.idle();
        assert!(bucket.take(secs(100), 3.5));
        assert_eq!(bucket.idle(), fresh);
        assert_eq!(
            Bucket::with_tokens(2.0, 4.0, 1.0, Duration::MAX).idle(),
            fresh
        );
    }

    #[test]
    fn idle_is_forever_for_a_bucket_that_never_fills() {
        for rate in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert_eq!(
                Bucket::new(rate, 5.0, secs(0)).idle(),
                Duration::MAX,
                "rate {rate}"
            );
        }
        assert_eq!(
            Bucket::new(1.0, f64::INFINITY, secs(0)).idle(),
            Duration::MAX
        );
        // Longer than the clock's range.
        assert_eq!(Bucket::new(1e-300, 1.0, secs(0)).idle(), Duration::MAX);
        // A burst below 1 is 1, a huge rate fills in a nanosecond.
        assert_eq!(Bucket::new(2.0, 0.0, secs(0)).idle(), ms(500));
        assert_eq!(
            Bucket::new(f64::MAX, 2.0, secs(0)).idle(),
            Duration::from_nanos(1)
        );
    }

    #[test]
    fn retuning_refills_at_the_old_rate_up_to_now_then_at_the_new_one() {
        let mut bucket = Bucket::new(10.0, 5.0, secs(0));
        assert!(bucket.take(secs(0), 5.0));
        bucket.retune(1.0, 5.0, ms(200));
        // Two tokens at ten a second, then one a second.
        assert_eq!(bucket.tokens(ms(200)), 2.0);
        assert_eq!(bucket.tokens(ms(1200)), 3.0);
        assert_eq!(bucket.next(ms(200), 3.0), secs(1));
        let twin = Bucket::with_tokens(1.0, 5.0, 2.0, ms(200));
        for at in [ms(200), ms(700), secs(3), secs(60)] {
            assert_eq!(bucket.tokens(at), twin.tokens(at));
            assert_eq!(bucket.next(at, 4.5), twin.next(at, 4.5));
        }
    }

    #[test]
    fn retuning_caps_the_tokens_at_the_new_burst_and_never_fills_a_larger_one() {
        let mut bucket = Bucket::new(1.0, 10.0, secs(0));
        // Full, and capped at the old burst however long it waited.
        bucket.retune(1.0, 4.0, secs(100));
        assert_eq!(bucket.tokens(secs(100)), 4.0);
        bucket.retune(1.0, 50.0, secs(100));
        assert_eq!(bucket.tokens(secs(100)), 4.0);
        assert!(!bucket.take(secs(100), 5.0));
        assert!(bucket.take(secs(101), 5.0));
        // An infinite burst held infinite tokens: a finite one caps them.
        let mut endless = Bucket::new(0.0, f64::INFINITY, secs(0));
        endless.retune(0.0, 7.0, secs(0));
        assert_eq!(endless.tokens(secs(0)), 7.0);
    }

    #[test]
    fn retuning_reads_the_rate_and_burst_as_new_does() {
        let mut bucket = Bucket::new(2.0, 3.0, secs(0));
        for (rate, burst) in [
            (f64::NAN, f64::NAN),
            (-1.0, 0.5),
            (f64::INFINITY, f64::NEG_INFINITY),
        ] {
            bucket.retune(rate, burst, secs(1));
            let fresh = Bucket::new(rate, burst, secs(0));
            assert_eq!(
                (bucket.rate(), bucket.burst()),
                (fresh.rate(), fresh.burst())
            );
            assert_eq!((bucket.rate(), bucket.burst()), (0.0, 1.0));
        }
        assert_eq!(bucket.tokens(Duration::MAX), 1.0);
    }

    #[test]
    fn retuning_reads_a_clock_going_backwards_as_the_latest_seen() {
        let mut bucket = Bucket::new(1.0, 10.0, secs(10));
        assert!(bucket.take(secs(10), 10.0));
        // Read as 10 s: nothing accrued at the old rate, and the clock stays at 10 s.
        bucket.retune(5.0, 10.0, secs(2));
        assert_eq!(bucket.tokens(secs(0)), 0.0);
        assert_eq!(bucket.tokens(secs(11)), 5.0);
    }

    #[test]
    fn retuning_to_the_same_policy_changes_nothing() {
        let mut bucket = Bucket::new(3.0, 2.0, secs(0));
        assert!(bucket.take(secs(0), 2.0));
        let twin = bucket.clone();
        // Not even the clock: a later `now` read before this one still counts from 0 s.
        bucket.retune(3.0, 2.0, secs(50));
        assert_eq!(bucket.tokens(ms(100)), twin.tokens(ms(100)));
        assert_eq!(bucket.next(ms(100), 1.0), twin.next(ms(100), 1.0));
        // A NaN burst is 1 as read, which is the burst `new` gave `Bucket::new(_, 0.2, _)`.
        let mut low = Bucket::new(1.0, 0.2, secs(0));
        let low_twin = low.clone();
        low.retune(1.0, f64::NAN, secs(9));
        assert_eq!(low.tokens(secs(1)), low_twin.tokens(secs(1)));
    }

    #[test]
    fn a_clone_spends_independently() {
        let mut bucket = Bucket::new(0.0, 1.0, secs(0));
        let mut twin = bucket.clone();
        assert!(bucket.take(secs(0), 1.0));
        assert!(twin.take(secs(0), 1.0));
        assert!(!bucket.take(secs(0), 1.0));
    }
}
