//! A retry budget: gRPC proposal A6's retry throttling.

mod reason;
#[cfg(target_has_atomic = "64")]
mod shared;
mod teller;

pub use reason::BudgetReason;
#[cfg(target_has_atomic = "64")]
pub use shared::SharedBudget;
pub(crate) use teller::Teller;

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
/// `max_tokens` is held to `1..=1000` (A6 rejects 0 and bounds it at 1000). `token_ratio` is
/// truncated to three decimal places, as A6 says ("0.5466 is 0.546"), by the decimal the
/// caller wrote rather than the binary float that holds it: `1.005`, stored as
/// 1.00499999999999989…, stays 1.005. A ratio that truncates to 0 (`0.0005`, as well as NaN,
/// zero and negatives) is 0: no success ever gives a token back, so once failures have taken
/// the count to half of `max_tokens` retries stop for good, until [`retune`](Budget::retune)
/// gives the budget a ratio again. A6 requires a ratio above 0; reading a bad one as 0 fails
/// closed, as a retry storm is the thing a budget exists to stop. A ratio above `max_tokens`
/// (infinity included) is `max_tokens`.
///
/// `Clone` copies the count; the copies then evolve independently. To share one budget
/// between calls on many threads, use [`SharedBudget`]: the same budget shared by `&`
/// without a lock.
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
    ///
    /// `max_tokens` is held to `1..=1000` and `token_ratio` truncated to three decimal places,
    /// as gRPC A6 says (see the guide's [edge cases](crate::_guide::edge_cases)).
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::Budget;
    ///
    /// // gRPC A6: "0.5466 is 0.546".
    /// assert_eq!(Budget::new(10, 0.5466).token_ratio(), 0.546);
    /// assert_eq!(Budget::new(10, 1.005).token_ratio(), 1.005);
    /// assert_eq!(Budget::new(0, 0.1).max_tokens(), 1);
    /// ```
    pub fn new(max_tokens: u32, token_ratio: f64) -> Self {
        let most = most(max_tokens);
        Self {
            most,
            ratio: thousandths(token_ratio, most),
            held: most,
        }
    }

    /// Changes the policy in place, keeping the tokens held (capped at the new maximum).
    ///
    /// `max_tokens` and `token_ratio` are read as [`new`](Budget::new) reads them. A larger
    /// maximum does not fill the budget: the tokens come back as calls succeed, so a budget
    /// that has stopped retries does not start a storm because its policy was reloaded.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::Budget;
    ///
    /// let mut budget = Budget::new(10, 0.1);
    /// budget.fail();
    /// budget.retune(100, 0.5);
    /// assert_eq!((budget.tokens(), budget.max_tokens(), budget.token_ratio()), (9.0, 100, 0.5));
    /// // Retries stop: 9 is not above half of 100.
    /// assert!(!budget.can_retry());
    /// budget.retune(4, 0.5);
    /// assert_eq!(budget.tokens(), 4.0);
    /// ```
    pub fn retune(&mut self, max_tokens: u32, token_ratio: f64) {
        self.most = most(max_tokens);
        self.ratio = thousandths(token_ratio, self.most);
        self.held = self.held.min(self.most);
    }

    /// An attempt succeeded: `token_ratio` tokens come back, up to `max_tokens`.
    #[inline]
    pub fn pass(&mut self) {
        self.held = self.held.saturating_add(self.ratio).min(self.most);
    }

    /// An attempt failed: one token goes, down to zero.
    #[inline]
    pub fn fail(&mut self) {
        self.held = self.held.saturating_sub(MILLI);
    }

    /// Whether a retry may be made now: the count is above half of `max_tokens`.
    ///
    /// This is [`check`](Budget::check) without the reason for a refusal.
    #[must_use = "a retry budget only throttles when its answer decides whether to retry"]
    pub fn can_retry(&self) -> bool {
        self.check().is_ok()
    }

    /// [`can_retry`](Budget::can_retry) with the numbers behind a refusal: `can_retry` is
    /// this with the reason discarded, so the two always decide alike.
    ///
    /// `Err` is a refusal, an answer rather than a failure: it carries the tokens held and
    /// the maximum they are at or below half of (see [`BudgetReason`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::Budget;
    ///
    /// let mut budget = Budget::new(10, 0.1);
    /// for _ in 0..5 {
    ///     budget.fail();
    /// }
    /// let reason = budget.check().expect_err("5 is not above half of 10");
    /// assert_eq!((reason.tokens, reason.max_tokens), (5.0, 10));
    /// ```
    #[inline]
    #[must_use = "a retry budget only throttles when its answer decides whether to retry"]
    pub fn check(&self) -> Result<(), BudgetReason> {
        // `held > most / 2`, without rounding the half down for an odd `most`.
        if u64::from(self.held) * 2 > u64::from(self.most) {
            Ok(())
        } else {
            Err(BudgetReason {
                tokens: self.tokens(),
                max_tokens: self.max_tokens(),
            })
        }
    }

    /// The tokens held now, to three decimal places.
    #[must_use]
    pub fn tokens(&self) -> f64 {
        f64::from(self.held) / f64::from(MILLI)
    }

    /// The most tokens the budget holds, as read by [`new`](Budget::new).
    #[must_use]
    pub fn max_tokens(&self) -> u32 {
        self.most / MILLI
    }

    /// The tokens a success gives back, as read by [`new`](Budget::new): truncated to three
    /// decimal places.
    #[must_use]
    pub fn token_ratio(&self) -> f64 {
        f64::from(self.ratio) / f64::from(MILLI)
    }
}

/// `max_tokens` held to `1..=1000`, in thousandths of a token.
fn most(max_tokens: u32) -> u32 {
    max_tokens.clamp(1, MOST_TOKENS) * MILLI
}

/// `token_ratio` in whole thousandths, truncated as gRPC A6 says ("0.5466 is 0.546"), at most
/// `most`; NaN, zero and negatives are 0.
///
/// Truncating the float itself would take a thousandth off every ratio that binary cannot
/// hold exactly and stores just below its decimal: 1.005 is 1.00499999999999989… as an
/// `f64`, and its thousandfold 1004.9999999999999. A ratio is therefore read as the whole
/// number of thousandths it lies within a few ulps of, which is what the caller wrote, and
/// truncated only when it lies clearly between two (0.5466 is 546.6 thousandths: 546).
fn thousandths(token_ratio: f64, most: u32) -> u32 {
    if token_ratio.is_nan() || token_ratio <= 0.0 {
        return 0;
    }
    let scaled = token_ratio * f64::from(MILLI);
    if scaled >= f64::from(most) {
        return most;
    }
    // Below a million, so both conversions are exact and in range; `as` truncates.
    let nearest = (scaled + 0.5) as u32;
    let whole = f64::from(nearest);
    if (scaled - whole).abs() <= whole * NEAR {
        nearest
    } else {
        scaled as u32
    }
}

/// How near a whole number of thousandths, relative to it, a scaled ratio must be to be read
/// as that number: four ulps, against the one ulp of storing the decimal and the half ulp of
/// multiplying it by a thousand.
const NEAR: f64 = 4.0 * f64::EPSILON;

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
    }

    // gRPC A6, "Throttling Retry Attempts and Hedged RPCs": "tokenRatio ... will be
    // truncated to three decimal places (e.g. 0.5466 is 0.546)".
    #[test]
    fn a6_truncates_the_token_ratio_to_three_decimal_places() {
        assert_eq!(Budget::new(10, 0.5466).token_ratio(), 0.546);
        assert_eq!(Budget::new(10, 0.5469999).token_ratio(), 0.546);
        assert_eq!(Budget::new(10, 0.0009).token_ratio(), 0.0);
        assert_eq!(Budget::new(10, 0.0019).token_ratio(), 0.001);
        assert_eq!(Budget::new(10, 2.9999).token_ratio(), 2.999);
        assert_eq!(Budget::new(1000, 999.9999).token_ratio(), 999.999);
    }

    // gRPC A6 truncates the decimal written in the service config, not its binary float.
    #[test]
    fn a6_truncates_the_decimal_written_not_the_float_below_it() {
        // 1.00499999999999989… as an f64.
        assert_eq!(Budget::new(10, 1.005).token_ratio(), 1.005);
        assert_eq!(Budget::new(10, 0.1).token_ratio(), 0.1);
        assert_eq!(Budget::new(10, 0.3).token_ratio(), 0.3);
        assert_eq!(Budget::new(10, 0.001).token_ratio(), 0.001);
        assert_eq!(Budget::new(10, 0.007).token_ratio(), 0.007);
        assert_eq!(Budget::new(10, 0.29).token_ratio(), 0.29);
        assert_eq!(Budget::new(10, 4.35).token_ratio(), 4.35);
        // Every decimal of three places reads back as itself.
        for milli in 0..=10_000u32 {
            let written = f64::from(milli) / 1000.0;
            assert_eq!(thousandths(written, 10_000), milli, "{written}");
            // And as the sum a configuration parser may have built it from.
            let summed = f64::from(milli / 1000) + f64::from(milli % 1000) * 0.001;
            assert_eq!(thousandths(summed, 10_000), milli, "{summed}");
        }
    }

    // gRPC A6 truncates 0.0005 to 0, which it would reject; a ratio of 0 fails closed.
    #[test]
    fn a6_ratio_truncated_to_zero_never_gives_a_token_back() {
        let mut budget = Budget::new(4, 0.0005);
        assert_eq!(budget.token_ratio(), 0.0);
        budget.fail();
        budget.fail();
        for _ in 0..10_000 {
            budget.pass();
        }
        assert_eq!(budget.tokens(), 2.0);
        assert!(!budget.can_retry());
    }

    #[test]
    fn retuning_keeps_the_tokens_held_within_the_new_maximum() {
        let mut budget = Budget::new(10, 0.1);
        budget.fail();
        budget.fail();
        budget.retune(20, 0.5466);
        assert_eq!(
            budget.tokens(),
            8.0,
            "a larger maximum does not fill the budget"
        );
        assert_eq!((budget.max_tokens(), budget.token_ratio()), (20, 0.546));
        assert!(!budget.can_retry(), "8 is not above half of 20");
        budget.pass();
        assert_eq!(budget.tokens(), 8.546);
        budget.retune(5, 1.0);
        assert_eq!(budget.tokens(), 5.0, "capped at the new maximum");
        assert!(budget.can_retry());
        budget.pass();
        assert_eq!(budget.tokens(), 5.0);
    }

    #[test]
    fn retuning_reads_hostile_parameters_as_new_does() {
        let mut budget = Budget::new(10, 0.1);
        budget.retune(0, f64::NAN);
        assert_eq!(budget, Budget::new(0, f64::NAN));
        budget.retune(u32::MAX, f64::INFINITY);
        assert_eq!((budget.max_tokens(), budget.token_ratio()), (1000, 1000.0));
        assert_eq!(
            budget.tokens(),
            1.0,
            "the token held at a maximum of 1 is kept"
        );
        budget.retune(3, -2.0);
        assert_eq!((budget.tokens(), budget.token_ratio()), (1.0, 0.0));
    }

    // gRPC A6's example policy: the refusal at exactly half gives the tokens it counted.
    #[test]
    fn a_refusal_gives_the_tokens_at_or_below_half() {
        let mut budget = Budget::default();
        for _ in 0..5 {
            assert!(budget.check().is_ok());
            budget.fail();
        }
        let reason = budget.check().expect_err("exactly half is not above half");
        assert_eq!(
            reason,
            BudgetReason {
                tokens: 5.0,
                max_tokens: 10
            }
        );
        budget.fail();
        budget.pass();
        assert_eq!(budget.check().unwrap_err().tokens, 4.1);
        // An odd maximum is halved exactly: 1.5 of 3 is refused.
        let mut odd = Budget::new(3, 0.5);
        odd.fail();
        odd.fail();
        odd.pass();
        assert_eq!(
            odd.check(),
            Err(BudgetReason {
                tokens: 1.5,
                max_tokens: 3
            })
        );
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
