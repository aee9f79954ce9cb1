//! Properties of `Budget`: the count matches a naive model in whole thousandths, stays in
//! `[0, max_tokens]`, retries are allowed exactly while it is above half, and the ratio is the
//! decimal written truncated to three places, as gRPC A6 says.

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

    // gRPC A6: "tokenRatio ... will be truncated to three decimal places (e.g. 0.5466 is
    // 0.546)". The decimal is what a configuration holds, so the property parses it.
    #[test]
    fn a6_truncates_the_written_ratio_to_three_decimal_places(
        whole in 0..=999u32,
        milli in 0..=999u32,
        extra in prop::option::of(0..1_000_000u32),
    ) {
        let written = match extra {
            Some(extra) => format!("{whole}.{milli:03}{extra:06}"),
            None => format!("{whole}.{milli:03}"),
        };
        let ratio: f64 = written.parse().expect("a decimal");
        let budget = Budget::new(1000, ratio);
        let expected = f64::from(whole * 1000 + milli) / 1000.0;
        prop_assert_eq!(budget.token_ratio(), expected, "{}", written);
    }

    #[test]
    fn retuning_keeps_the_count_within_the_new_maximum(
        max_tokens in prop_oneof![Just(0u32), 1..=1000u32, Just(u32::MAX)],
        retuned in prop_oneof![Just(0u32), 1..=1000u32, Just(u32::MAX)],
        ratio in prop_oneof![Just(f64::NAN), Just(f64::INFINITY), -1.0..2.0f64],
        failures in 0..1200u32,
    ) {
        let mut budget = Budget::new(max_tokens, 0.1);
        for _ in 0..failures {
            budget.fail();
        }
        let before = budget.tokens();
        budget.retune(retuned, ratio);
        let fresh = Budget::new(retuned, ratio);
        prop_assert_eq!(budget.max_tokens(), fresh.max_tokens());
        prop_assert_eq!(budget.token_ratio(), fresh.token_ratio());
        prop_assert_eq!(budget.tokens(), before.min(f64::from(budget.max_tokens())));
    }
}

proptest! {
    // `can_retry` is `check` with the reason discarded, through any run of outcomes and
    // retunes. A refusal's reason shows a budget at or below half, its tokens and maximum
    // those the budget reports.
    #[test]
    fn check_decides_as_can_retry_and_its_reason_shows_a_spent_budget(
        max_tokens in prop_oneof![Just(0u32), 1..=20u32, Just(1000), Just(u32::MAX)],
        ratio in prop_oneof![Just(f64::NAN), 0.0..2.0f64],
        ops in prop::collection::vec(
            prop_oneof![
                6 => any::<bool>().prop_map(Some),
                1 => Just(None),
            ],
            0..300,
        ),
        retunes in prop::collection::vec((prop_oneof![Just(0u32), 1..=20u32, Just(u32::MAX)], 0.0..2.0f64), 300),
    ) {
        let mut budget = Budget::new(max_tokens, ratio);
        for (op, (max_tokens, ratio)) in ops.into_iter().zip(retunes) {
            match op {
                Some(true) => budget.pass(),
                Some(false) => budget.fail(),
                None => budget.retune(max_tokens, ratio),
            }
            match (budget.can_retry(), budget.check()) {
                (true, Ok(())) => {}
                (false, Err(reason)) => {
                    prop_assert!(2.0 * reason.tokens <= f64::from(reason.max_tokens), "{:?}", reason);
                    prop_assert_eq!(reason.tokens, budget.tokens());
                    prop_assert_eq!(reason.max_tokens, budget.max_tokens());
                }
                (a, b) => prop_assert!(false, "can_retry {}, check {:?}", a, b),
            }
        }
    }
}
