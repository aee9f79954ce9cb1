//! Why a bucket refused: the tokens it held against the cost wanted.

use core::fmt;
use core::time::Duration;

use super::Bucket;

/// Why a [`Bucket`] refused a take: the tokens it held and the cost wanted, from
/// [`Bucket::check`].
///
/// When the tokens will be there is not worked out on the refusal, which would cost more than
/// the decision: [`next`](BucketReason::next) works it out from the fields when asked.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::Bucket;
///
/// let ms = Duration::from_millis;
/// let mut bucket = Bucket::new(10.0, 20.0, ms(0));
/// assert!(bucket.take(ms(0), 19.5));
/// let reason = bucket.check(ms(0), 1.0).expect_err("half a token left");
/// assert!(reason.tokens < reason.wanted);
/// assert_eq!(reason.next(), ms(50));
/// assert_eq!(
///     reason.to_string(),
///     "bucket holds 0.50 of the 1.00 tokens wanted (burst 20.00, 10.00 a second): next in 50ms",
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BucketReason {
    /// The tokens the bucket held at `at`, refilled and capped at the burst; a refusal keeps
    /// them all.
    pub tokens: f64,
    /// The cost asked for, as given: more than `tokens`, or not a cost at all (negative, NaN
    /// or infinite).
    pub wanted: f64,
    /// The most the bucket holds: at least 1, possibly infinite.
    pub burst: f64,
    /// Tokens a second, as the bucket reads it: finite and at least 0.
    pub rate: f64,
    /// When the tokens were counted: the latest reading the bucket had seen.
    pub at: Duration,
}

impl BucketReason {
    /// How long after `at` the tokens wanted will be there: what [`Bucket::next`] answers at
    /// `at` on the bucket the refusal left, worked out now.
    ///
    /// `Duration::MAX` when they never will be: the cost is over the burst or not a cost, the
    /// bucket does not refill, or the clock's range runs out first. The answer is exact, not
    /// an estimate: it is a bucket holding `tokens` at `at` asked for `wanted`, rounded up
    /// to the first whole nanosecond at which a take succeeds.
    #[must_use = "next only computes the wait"]
    pub fn next(&self) -> Duration {
        Bucket::with_tokens(self.rate, self.burst, self.tokens, self.at).next(self.at, self.wanted)
    }
}

impl fmt::Display for BucketReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "bucket holds {:.2} of the {:.2} tokens wanted (burst {:.2}, {:.2} a second): ",
            self.tokens, self.wanted, self.burst, self.rate,
        )?;
        match self.next() {
            Duration::MAX => f.write_str("never there"),
            next => write!(f, "next in {next:?}"),
        }
    }
}

impl core::error::Error for BucketReason {}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::string::ToString;

    use super::*;

    #[test]
    fn a_bucket_reason_that_never_fills_says_so() {
        let reason = BucketReason {
            tokens: 1.0,
            wanted: 3.0,
            burst: 2.0,
            rate: 1.0,
            at: Duration::ZERO,
        };
        assert_eq!(reason.next(), Duration::MAX);
        assert_eq!(
            reason.to_string(),
            "bucket holds 1.00 of the 3.00 tokens wanted (burst 2.00, 1.00 a second): never there"
        );
        let nan = BucketReason {
            wanted: f64::NAN,
            ..reason
        };
        assert_eq!(nan.next(), Duration::MAX);
    }
}
