//! A retry budget: gRPC proposal A6's retry throttling.

use crate::float::round_nanos;

/// The most tokens a budget holds: gRPC A6 bounds `maxTokens` to 1000.
const MOST_TOKENS: u32 = 1000;

/// Thousandths in one token: A6 gives `tokenRatio` three decimal places, so the count is
/// kept in whole thousandths and never drifts as a float sum would.
const MILLI: u32 = 1000;

/// A retry budget shared by every call to one backend: retries stop while too many calls
/// fail, and resume as calls succeed again.
///
/// This is the retry throttling of gRPC proposal A6: the budget holds up to `max_tokens`
/// tokens and starts full; each failed attempt takes one token, each successful one gives
/// back `token_ratio`; retries are allowed only while the count is above half of
/// `max_tokens`. First attempts are never throttled, only retries, so when a backend fails
/// outright the retries it receives fall to a fraction of its traffic instead of multiplying
/// it (a retry storm).
///
/// Like the rest of the core it reads no clock: the caller reports each attempt's outcome
/// ([`pass`](Budget::pass), [`fail`](Budget::fail)) and asks before each retry
/// ([`can_retry`](Budget::can_retry)). The count is kept in whole thousandths of a token, the
/// precision A6 gives `tokenRatio`, so it is exact and never drifts.
///
/// # Edge cases
///
/// `max_tokens` is held to `1..=1000` (A6 rejects 0 and bounds it at 1000); `token_ratio` is
/// read to three decimal places, NaN and negatives as 0 (no success ever restores a token),
/// values above `max_tokens` as `max_tokens`. `Clone` copies the count; the copies then
/// evolve independently (share one budget behind a lock to share it between calls).
///
/// # Default
///
/// `Budget::default()` is A6's example policy: `max_tokens` 10, `token_ratio` 0.1.
///
/// # Examples
///
/// ```
/// use ironward::Budget;
///
/// let mut budget = Budget::new(10, 0.1);
/// assert!(budget.can_retry());
/// // Five failed attempts leave 5 tokens: not above half, so retries stop.
/// for _ in 0..5 {
///     budget.fail();
/// }
/// assert_eq!(budget.tokens(), 5.0);
/// assert!(!budget.can_retry());
/// // Ten successes give back one token, and retries resume.
/// for _ in 0..10 {
///     budget.pass();
/// }
/// assert_eq!(budget.tokens(), 6.0);
/// assert!(budget.can_retry());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Budget {
    /// The most thousandths of a token the budget holds.
    most: u32,
    /// Thousandths of a token a success gives back.
    ratio: u32,
    /// Thousandths of a token held now.
    held: u32,
}

impl Budget {
    /// A full budget of `max_tokens` tokens, each success giving back `token_ratio` of one.
    pub fn new(max_tokens: u32, token_ratio: f64) -> Self {
        let most = max_tokens.clamp(1, MOST_TOKENS) * MILLI;
        // Whole thousandths, rounded to the nearest; NaN and negatives round to 0.
        let ratio = round_nanos(token_ratio * f64::from(MILLI)).min(u128::from(most)) as u32;
        Self {
            most,
            ratio,
            held: most,
        }
    }

    /// An attempt succeeded: `token_ratio` tokens come back, up to `max_tokens`.
    pub fn pass(&mut self) {
        self.held = self.held.saturating_add(self.ratio).min(self.most);
    }

    /// An attempt failed: one token goes, down to zero.
    pub fn fail(&mut self) {
        self.held = self.held.saturating_sub(MILLI);
    }

    /// Whether a retry may be made now: the count is above half of `max_tokens`.
    pub fn can_retry(&self) -> bool {
        // `held > most / 2`, without rounding the half down for an odd `most`.
        u64::from(self.held) * 2 > u64::from(self.most)
    }

    /// The tokens held now, to three decimal places.
    pub fn tokens(&self) -> f64 {
        f64::from(self.held) / f64::from(MILLI)
    }

    /// The most tokens the budget holds, as read by [`new`](Budget::new).
    pub fn max_tokens(&self) -> u32 {
        self.most / MILLI
    }

    /// The tokens a success gives back, as read by [`new`](Budget::new).
    pub fn token_ratio(&self) -> f64 {
        f64::from(self.ratio) / f64::from(MILLI)
    }
}

impl Default for Budget {
    /// gRPC A6's example: 10 tokens, 0.1 back per success.
    fn default() -> Self {
        Self::new(10, 0.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // gRPC A6, "Throttling Retry Attempts and Hedged RPCs": with maxTokens 10 and tokenRatio
    // 0.1, retries stop once the count is at or below 5 and resume above it.
    #[test]
    fn reproduces_the_a6_example_policy() {
        let mut budget = Budget::default();
        assert_eq!((budget.max_tokens(), budget.token_ratio()), (10, 0.1));
        assert_eq!(budget.tokens(), 10.0);
        for expected in [9.0, 8.0, 7.0, 6.0] {
            budget.fail();
            assert_eq!(budget.tokens(), expected);
            assert!(budget.can_retry());
        }
        budget.fail();
        assert_eq!(budget.tokens(), 5.0);
        assert!(!budget.can_retry(), "exactly half is not above half");
        budget.pass();
        assert_eq!(budget.tokens(), 5.1);
        assert!(budget.can_retry());
    }

    #[test]
    fn the_count_stays_between_zero_and_the_maximum() {
        let mut budget = Budget::new(3, 0.5);
        for _ in 0..10 {
            budget.fail();
        }
        assert_eq!(budget.tokens(), 0.0);
        for _ in 0..100 {
            budget.pass();
        }
        assert_eq!(budget.tokens(), 3.0);
    }

    #[test]
    fn thousandths_never_drift() {
        let mut budget = Budget::new(10, 0.001);
        for _ in 0..10 {
            budget.fail();
        }
        for _ in 0..5_001 {
            budget.pass();
        }
        assert_eq!(budget.tokens(), 5.001);
        assert!(budget.can_retry());
    }

    #[test]
    fn an_odd_maximum_is_halved_exactly() {
        let mut budget = Budget::new(3, 0.5);
        budget.fail();
        assert_eq!(budget.tokens(), 2.0);
        assert!(budget.can_retry(), "2 is above 1.5");
        budget.fail();
        budget.pass();
        budget.pass();
        assert_eq!(budget.tokens(), 2.0);
        assert!(budget.can_retry());
        budget.fail();
        budget.pass();
        assert_eq!(budget.tokens(), 1.5);
        assert!(!budget.can_retry(), "1.5 is not above 1.5");
    }

    #[test]
    fn out_of_range_parameters_are_held_to_what_a6_allows() {
        assert_eq!(Budget::new(0, 0.1).max_tokens(), 1);
        assert_eq!(Budget::new(u32::MAX, 0.1).max_tokens(), 1000);
        assert_eq!(Budget::new(10, f64::NAN).token_ratio(), 0.0);
        assert_eq!(Budget::new(10, -1.0).token_ratio(), 0.0);
        assert_eq!(Budget::new(10, f64::INFINITY).token_ratio(), 10.0);
        assert_eq!(Budget::new(10, 0.0004).token_ratio(), 0.0);
        assert_eq!(Budget::new(10, 0.0005).token_ratio(), 0.001);
    }

    #[test]
    fn a_budget_with_no_ratio_never_recovers() {
        let mut budget = Budget::new(2, 0.0);
        budget.fail();
        for _ in 0..1000 {
            budget.pass();
        }
        assert!(!budget.can_retry());
    }
}
