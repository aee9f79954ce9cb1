//! Why a breaker refused: the window it read and the draw it compared.

use core::fmt;

/// Why an [`SreBreaker`](crate::SreBreaker) refused a call: the window it read and the draw it
/// compared, from [`SreBreaker::check`](crate::SreBreaker::check).
///
/// The numbers are those of the formula on [`SreBreaker`](crate::SreBreaker), read before the
/// refusal was recorded as a drop: `drop = (total − protection − k·accepts) / (total + 1)`,
/// scaled by `(size − working) / size`. A refusal always has `roll < drop`.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::{SreBreaker, SRE};
///
/// let mut breaker = SreBreaker::new(SRE, Duration::ZERO);
/// for _ in 0..100 {
///     let permit = breaker.allow(Duration::ZERO, 0.99).expect("over the drop fraction");
///     breaker.fail(permit, Duration::ZERO);
/// }
/// let reason = breaker.check(Duration::ZERO, 0.25).expect_err("under the drop fraction");
/// assert!(reason.roll < reason.drop);
/// assert_eq!(
///     reason.to_string(),
///     "breaker dropped 94.1% of calls (roll 0.25): 0 accepts in 100 calls, failing 1 bucket, working 0",
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SreReason {
    /// Calls in the window, current bucket included: successes, failures and drops.
    pub total: u64,
    /// Successes in the window.
    pub accepts: u64,
    /// The run of buckets holding only failures at the window's newest end.
    pub failing: usize,
    /// The run of buckets holding only successes at the window's newest end.
    pub working: usize,
    /// The weight each accept was given: [`Sre::k`](crate::Sre::k) decayed towards
    /// [`Sre::floor`](crate::Sre::floor) by the failing run (`w` in the formula on
    /// [`SreBreaker`](crate::SreBreaker)).
    pub k: f64,
    /// The probability the call was refused with, after the recovery scaling: what
    /// [`SreBreaker::ratio`](crate::SreBreaker::ratio) read at the same instant.
    pub drop: f64,
    /// The caller's draw, clamped into `[0, 1)` (NaN and negatives are 0).
    pub roll: f64,
}

impl fmt::Display for SreReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "breaker dropped {:.1}% of calls (roll {:.2}): {} in {}, failing {}, working {}",
            self.drop * 100.0,
            self.roll,
            Count(self.accepts, "accept"),
            Count(self.total, "call"),
            Count(self.failing as u64, "bucket"),
            self.working,
        )
    }
}

impl core::error::Error for SreReason {}

/// A count and its noun, the noun plural unless the count is 1: "1 call", "2 calls".
struct Count(u64, &'static str);

impl fmt::Display for Count {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Self(n, noun) = *self;
        write!(f, "{n} {noun}{}", if n == 1 { "" } else { "s" })
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::string::ToString;

    use super::*;

    // The line the crate docs give as the shape of a breaker's reason.
    #[test]
    fn a_breaker_reason_reads_as_one_line_with_its_numbers() {
        let reason = SreReason {
            total: 140,
            accepts: 40,
            failing: 3,
            working: 0,
            k: 1.47,
            drop: 0.623,
            roll: 0.41,
        };
        assert_eq!(
            reason.to_string(),
            "breaker dropped 62.3% of calls (roll 0.41): 40 accepts in 140 calls, failing 3 buckets, working 0"
        );
        let one = SreReason {
            total: 1,
            accepts: 1,
            failing: 1,
            working: 1,
            ..reason
        };
        assert_eq!(
            one.to_string(),
            "breaker dropped 62.3% of calls (roll 0.41): 1 accept in 1 call, failing 1 bucket, working 1"
        );
    }
}
