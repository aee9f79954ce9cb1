//! [`SharedBudget`]: the retry budget shared by `&`, in one atomic word.

use core::fmt;

use super::{Budget, MILLI};
use crate::budget::BudgetReason;
use crate::internal::sync::{AtomicU64, Ordering};

/// A [`Budget`] that many threads share by `&`, without a lock: the tokens held, the
/// maximum and the ratio packed into one `AtomicU64`.
///
/// Every call to one backend reports to the same budget, from every task of every core, and
/// a `Mutex<Budget>` makes them take turns for an add and a compare. This is the same gRPC A6
/// retry throttling, by the same rule and in the same whole thousandths of a token
/// ([`pass`](Self::pass) gives `token_ratio` back up to `max_tokens`, [`fail`](Self::fail)
/// takes one token down to zero, [`can_retry`](Self::can_retry) while the count is above
/// half of `max_tokens`, [`retune`](Self::retune) keeps the count, capped), with each change
/// a compare-and-swap loop on the one word. A refusal is one load, and so are the changes
/// that change nothing: a `pass` on a full budget (a healthy backend's every call) and a
/// `fail` on an empty one write nothing, so they do not bounce the cache line between cores.
///
/// # Why concurrent calls behave as one `Budget`
///
/// Each of the three numbers is at most 1000 tokens, a million thousandths, so each fits in
/// 20 bits and the three together in one word: every call reads the whole state in one load.
/// A `pass` or `fail` computes the word a `Budget` would hold after it, and writes it with one
/// compare-and-swap from the word it read; if anything changed in between (another pass or
/// fail, a retune) the swap fails and it computes again from the new word. So each call takes
/// effect at one instant, its successful swap (or, for a call that changes nothing and a
/// `check`, its last load), and the calls of all threads are the calls of one `Budget` made in
/// the order of those instants: the same count, the same answers. Under overlap nothing
/// differs but that order, and the count never leaves `[0, max_tokens]`, as each word written
/// is one a `Budget` could hold.
///
/// The policy lives in the same word, so a [`retune`](Self::retune) is atomic with the count:
/// a pass deciding while the policy changes adds either the old ratio under the old maximum or
/// the new ratio under the new one, never the old ratio under the new cap, and the cap of a
/// lowered maximum is applied to the count in force at that instant, not to a count a pass is
/// about to overwrite. (Two words, the count and the policy, would let a pass read the old
/// maximum and write back a count above the new one.)
///
/// The budget guards no data, so its operations are `Relaxed`: a retry is allowed or not by
/// the count alone, and nothing one caller wrote needs to be visible to the next.
///
/// This type is built only for targets with 64-bit atomics (every tier-1 target). It is not
/// `Clone`; share it by `&`, an `Arc` or a `static` in a `LazyLock`.
///
/// # Examples
///
/// ```
/// use ironward::SharedBudget;
/// use std::thread;
///
/// let budget = SharedBudget::new(10, 0.1);
/// thread::scope(|s| {
///     // Five failed attempts on other threads leave 5 tokens: not above half.
///     for _ in 0..5 {
///         s.spawn(|| budget.fail());
///     }
/// });
/// assert_eq!(budget.tokens(), 5.0);
/// assert!(!budget.can_retry());
/// // Ten successes give back one token, and retries resume.
/// for _ in 0..10 {
///     budget.pass();
/// }
/// assert_eq!(budget.tokens(), 6.0);
/// assert!(budget.can_retry());
/// ```
pub struct SharedBudget {
    /// `ratio << 40 | most << 20 | held`, each in thousandths of a token.
    state: AtomicU64,
}

/// The bits each number takes: a million thousandths is below 2^20.
const BITS: u32 = 20;

/// The low 20 bits.
const MASK: u64 = (1 << BITS) - 1;

/// The word holding a budget's state.
#[inline]
const fn pack(budget: Budget) -> u64 {
    (budget.ratio as u64) << (2 * BITS) | (budget.most as u64) << BITS | budget.held as u64
}

/// The budget a word holds.
#[inline]
const fn unpack(word: u64) -> Budget {
    Budget {
        held: (word & MASK) as u32,
        most: ((word >> BITS) & MASK) as u32,
        ratio: ((word >> (2 * BITS)) & MASK) as u32,
    }
}

impl SharedBudget {
    /// A full budget of `max_tokens` tokens, each success giving back `token_ratio` of one,
    /// read as [`Budget::new`] reads them (`max_tokens` held to `1..=1000`, the ratio truncated
    /// to three decimal places; NaN, zero and negatives are 0).
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::SharedBudget;
    ///
    /// let budget = SharedBudget::new(0, 0.5466);
    /// assert_eq!((budget.max_tokens(), budget.token_ratio()), (1, 0.546));
    /// ```
    pub fn new(max_tokens: u32, token_ratio: f64) -> Self {
        Self::from(Budget::new(max_tokens, token_ratio))
    }

    /// An attempt succeeded: `token_ratio` tokens come back, up to `max_tokens`. On a full
    /// budget, or one with no ratio, it writes nothing.
    #[inline]
    pub fn pass(&self) {
        self.update(Budget::pass);
    }

    /// An attempt failed: one token goes, down to zero. On an empty budget it writes nothing.
    #[inline]
    pub fn fail(&self) {
        self.update(Budget::fail);
    }

    /// Whether a retry may be made now: the count is above half of `max_tokens`.
    ///
    /// This is [`check`](Self::check) without the reason for a refusal.
    #[inline]
    #[must_use = "a retry budget only throttles when its answer decides whether to retry"]
    pub fn can_retry(&self) -> bool {
        self.check().is_ok()
    }

    /// [`can_retry`](Self::can_retry) with the numbers behind a refusal, as
    /// [`Budget::check`] gives them: the tokens held and the maximum, read together in the one
    /// load the answer decided by. It writes nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::SharedBudget;
    ///
    /// let budget = SharedBudget::new(2, 0.1);
    /// budget.fail();
    /// let reason = budget.check().expect_err("1 is not above half of 2");
    /// assert_eq!((reason.tokens, reason.max_tokens), (1.0, 2));
    /// ```
    #[inline]
    #[must_use = "a retry budget only throttles when its answer decides whether to retry"]
    pub fn check(&self) -> Result<(), BudgetReason> {
        self.snapshot().check()
    }

    /// Changes the policy in place, keeping the tokens held (capped at the new maximum), and
    /// returns the budget it replaced: its count and policy at the instant of the change, so
    /// that a caller logging a configuration reload logs the change that happened even while
    /// others report.
    ///
    /// `max_tokens` and `token_ratio` are read as [`new`](Self::new) reads them. As
    /// [`Budget::retune`], a larger maximum does not fill the budget. The count and the policy
    /// change together (see the type's docs).
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::SharedBudget;
    ///
    /// let budget = SharedBudget::new(10, 0.1);
    /// budget.fail();
    /// let was = budget.retune(4, 0.5);
    /// assert_eq!((was.tokens(), was.max_tokens(), was.token_ratio()), (9.0, 10, 0.1));
    /// assert_eq!((budget.tokens(), budget.max_tokens()), (4.0, 4));
    /// ```
    pub fn retune(&self, max_tokens: u32, token_ratio: f64) -> Budget {
        self.update(|budget| budget.retune(max_tokens, token_ratio))
    }

    /// The budget as it stands, count and policy read together in one load: a [`Budget`]
    /// that decides as this one does until another call lands.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::{Budget, SharedBudget};
    ///
    /// let budget = SharedBudget::new(10, 0.1);
    /// budget.fail();
    /// let mut alone = Budget::new(10, 0.1);
    /// alone.fail();
    /// assert_eq!(budget.snapshot(), alone);
    /// ```
    #[inline]
    #[must_use]
    pub fn snapshot(&self) -> Budget {
        unpack(self.state.load(Ordering::Relaxed))
    }

    /// The tokens held now, to three decimal places.
    #[must_use]
    pub fn tokens(&self) -> f64 {
        self.snapshot().tokens()
    }

    /// The most tokens the budget holds, as read by [`new`](Self::new).
    #[must_use]
    pub fn max_tokens(&self) -> u32 {
        self.snapshot().max_tokens()
    }

    /// The tokens a success gives back, as read by [`new`](Self::new): truncated to three
    /// decimal places.
    #[must_use]
    pub fn token_ratio(&self) -> f64 {
        self.snapshot().token_ratio()
    }

    /// Applies `change` to the budget in the word, writing only when the word changes, and
    /// answers the budget it found.
    #[inline]
    fn update(&self, change: impl Fn(&mut Budget)) -> Budget {
        let was = self
            .state
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |word| {
                let mut budget = unpack(word);
                change(&mut budget);
                let next = pack(budget);
                // Full on a pass, empty on a fail: nothing to write, the line stays shared.
                (next != word).then_some(next)
            })
            .unwrap_or_else(|word| word);
        unpack(was)
    }
}

/// The shared form of `budget`, holding its count and policy.
impl From<Budget> for SharedBudget {
    fn from(budget: Budget) -> Self {
        Self {
            state: AtomicU64::new(pack(budget)),
        }
    }
}

impl Default for SharedBudget {
    /// gRPC A6's example, as [`Budget::default`]: 10 tokens, 0.1 back per success.
    fn default() -> Self {
        Self::from(Budget::default())
    }
}

/// One load: the count and the policy shown were in force together.
impl fmt::Debug for SharedBudget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let budget = self.snapshot();
        f.debug_struct("SharedBudget")
            .field("tokens", &budget.tokens())
            .field("max_tokens", &budget.max_tokens())
            .field("token_ratio", &budget.token_ratio())
            .finish()
    }
}

// A million thousandths, the most any of the three numbers holds, fits in its 20 bits.
const _: () = assert!(1000 * MILLI as u64 <= MASK);

#[cfg(test)]
mod tests {
    extern crate std;

    use std::format;

    use super::*;

    #[test]
    fn the_extremes_of_each_number_round_trip_through_the_word() {
        for budget in [
            Budget::new(1000, f64::INFINITY),
            Budget::new(0, f64::NAN),
            Budget::new(u32::MAX, 0.001),
        ] {
            assert_eq!(unpack(pack(budget)), budget);
        }
    }

    // gRPC A6's example policy, as `Budget`'s own test reproduces it.
    #[test]
    fn reproduces_the_a6_example_policy() {
        let budget = SharedBudget::default();
        for _ in 0..5 {
            assert!(budget.can_retry());
            budget.fail();
        }
        assert_eq!(
            budget.check(),
            Err(BudgetReason {
                tokens: 5.0,
                max_tokens: 10
            })
        );
        budget.pass();
        assert_eq!(budget.tokens(), 5.1);
        assert!(budget.can_retry());
    }

    #[test]
    fn a_pass_on_a_full_budget_and_a_fail_on_an_empty_one_change_nothing() {
        let budget = SharedBudget::new(1, 1.0);
        budget.pass();
        assert_eq!(budget.snapshot(), Budget::new(1, 1.0));
        budget.fail();
        budget.fail();
        assert_eq!(budget.tokens(), 0.0);
        budget.pass();
        assert_eq!(budget.tokens(), 1.0);
    }

    #[test]
    fn retune_returns_the_budget_it_replaced() {
        let budget = SharedBudget::new(10, 0.1);
        budget.fail();
        let was = budget.retune(u32::MAX, -1.0);
        assert_eq!(was.tokens(), 9.0);
        assert_eq!(
            (budget.tokens(), budget.max_tokens(), budget.token_ratio()),
            (9.0, 1000, 0.0)
        );
    }

    #[test]
    fn debug_shows_the_count_and_the_policy() {
        let budget = SharedBudget::new(10, 0.5);
        budget.fail();
        assert_eq!(
            format!("{budget:?}"),
            "SharedBudget { tokens: 9.0, max_tokens: 10, token_ratio: 0.5 }"
        );
    }
}
