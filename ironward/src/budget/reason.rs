//! Why the retry budget refused: the tokens it held against its maximum.

use core::fmt;

/// Why a [`Budget`](crate::Budget) refused a retry: the tokens it held against its maximum,
/// from [`Budget::check`](crate::Budget::check).
///
/// gRPC A6 retries only while the tokens are above half of the maximum, so a refusal always
/// has `2·tokens ≤ max_tokens`.
///
/// # Examples
///
/// ```
/// use ironward::Budget;
///
/// let mut budget = Budget::new(10, 0.1);
/// for _ in 0..6 {
///     budget.fail();
/// }
/// let reason = budget.check().expect_err("4 tokens of 10");
/// assert!(2.0 * reason.tokens <= f64::from(reason.max_tokens));
/// assert_eq!(reason.to_string(), "retry budget spent: 4 tokens, not above half of 10");
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BudgetReason {
    /// The tokens held, to three decimal places.
    pub tokens: f64,
    /// The most tokens the budget holds.
    pub max_tokens: u32,
}

impl fmt::Display for BudgetReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "retry budget spent: {} tokens, not above half of {}",
            self.tokens, self.max_tokens
        )
    }
}

impl core::error::Error for BudgetReason {}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::string::ToString;

    use super::*;

    #[test]
    fn a_budget_reason_is_an_error_with_no_source() {
        let budget = BudgetReason {
            tokens: 0.5,
            max_tokens: 1,
        };
        let reason: &dyn core::error::Error = &budget;
        assert!(reason.source().is_none());
        let line = reason.to_string();
        assert!(!line.contains('\n') && !line.ends_with('.'), "{line}");
        assert_eq!(line, line.to_lowercase());
        assert_eq!(
            budget.to_string(),
            "retry budget spent: 0.5 tokens, not above half of 1"
        );
    }
}
