//! Properties of `deadline`, against a naive model in 128-bit nanoseconds, where
//! `start + budget` cannot overflow.

use std::time::Duration;

use ironward::Deadline;
use proptest::prelude::*;

/// A span or a reading: ordinary values mixed with zero and the ends of the range.
fn span() -> impl Strategy<Value = Duration> {
    prop_oneof![
        4 => (0..10_000_000_000_u64).prop_map(Duration::from_nanos),
        1 => Just(Duration::ZERO),
        1 => Just(Duration::MAX),
        1 => any::<u64>().prop_map(Duration::from_nanos),
        1 => (any::<u64>(), 0..1_000_000_000_u32).prop_map(|(s, n)| Duration::new(s, n)),
    ]
}

proptest! {
    // A deadline expires exactly when `now ≥ start + budget`, never with a zero budget, and
    // what remains is `start + budget − max(now, start)`, never below zero nor above the
    // budget.
    #[test]
    fn matches_a_naive_model_in_128_bit_nanoseconds(
        budget in span(),
        start in span(),
        now in span(),
    ) {
        let deadline = Deadline::start(budget, start);
        if budget.is_zero() {
            prop_assert!(!deadline.expired(now));
            prop_assert_eq!(deadline.remaining(now), None);
        } else {
            let end = start.as_nanos() + budget.as_nanos();
            let now_ns = now.as_nanos().max(start.as_nanos());
            prop_assert_eq!(deadline.expired(now), now_ns >= end);
            let remaining = deadline.remaining(now).expect("a budget has a remainder");
            prop_assert_eq!(remaining.as_nanos(), end.saturating_sub(now_ns));
            prop_assert!(remaining <= budget);
            prop_assert_eq!(deadline.expired(now), remaining.is_zero());
        }
    }

    // Later readings never leave more time, and once expired a deadline stays expired.
    #[test]
    fn time_only_runs_down(budget in span(), start in span(), a in span(), b in span()) {
        let deadline = Deadline::start(budget, start);
        let (early, late) = (a.min(b), a.max(b));
        prop_assert!(deadline.remaining(late) <= deadline.remaining(early));
        prop_assert!(!deadline.expired(early) || deadline.expired(late));
    }
}
