//! Properties of `Budget`: the count matches a naive model in whole thousandths, stays in
//! `[0, max_tokens]`, and retries are allowed exactly while it is above half.

use ironward::Budget;
use proptest::prelude::*;

proptest! {
    #[test]
    fn matches_a_model_in_thousandths(
        max_tokens in prop_oneof![Just(0u32), 1..=1000u32, Just(u32::MAX)],
        ratio_milli in 0..=2_000u32,
        outcomes in prop::collection::vec(any::<bool>(), 0..400),
    ) {
        let mut budget = Budget::new(max_tokens, f64::from(ratio_milli) / 1000.0);
        let most = i64::from(max_tokens.clamp(1, 1000)) * 1000;
        let ratio = i64::from(ratio_milli).min(most);
        let mut held = most;
        for passed in outcomes {
            if passed {
                budget.pass();
                held = (held + ratio).min(most);
            } else {
                budget.fail();
                held = (held - 1000).max(0);
            }
            prop_assert_eq!(budget.tokens(), held as f64 / 1000.0);
            prop_assert_eq!(budget.can_retry(), 2 * held > most);
            prop_assert!(budget.tokens() >= 0.0 && budget.tokens() <= f64::from(budget.max_tokens()));
        }
    }

    #[test]
    fn hostile_parameters_never_panic(
        max_tokens in any::<u32>(),
        ratio in prop_oneof![Just(f64::NAN), Just(f64::INFINITY), Just(f64::NEG_INFINITY), Just(-0.0), any::<f64>()],
        outcomes in prop::collection::vec(any::<bool>(), 0..50),
    ) {
        let mut budget = Budget::new(max_tokens, ratio);
        prop_assert!((1..=1000).contains(&budget.max_tokens()));
        prop_assert!(budget.token_ratio() >= 0.0 && budget.token_ratio() <= f64::from(budget.max_tokens()));
        for passed in outcomes {
            if passed { budget.pass() } else { budget.fail() }
        }
        prop_assert!(budget.tokens() >= 0.0);
    }
}
