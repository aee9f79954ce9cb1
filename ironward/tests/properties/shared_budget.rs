//! Properties of `SharedBudget` on one thread, against its `&mut` twin: `Budget`.

use ironward::{Budget, SharedBudget};
use proptest::prelude::*;

/// One call on both budgets.
#[derive(Debug, Clone, Copy)]
enum Op {
    Pass,
    Fail,
    CanRetry,
    Check,
    Retune(u32, f64),
}

/// Maxima as `Budget` reads them: small ones that fill and empty within a run, and the
/// extremes it holds to `1..=1000` (0, `u32::MAX`).
fn maxima() -> impl Strategy<Value = u32> {
    prop_oneof![4 => 1..6_u32, 1 => Just(0), 1 => Just(1000), 1 => Just(u32::MAX), 1 => any::<u32>()]
}

/// Ratios including the hostile ones: NaN, zeros, negatives, below a thousandth, above any
/// maximum, infinities, and any float at all.
fn ratios() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => (0..3_000_u32).prop_map(|milli| f64::from(milli) / 1000.0),
        2 => 0.0..3.0_f64,
        1 => Just(f64::NAN),
        1 => Just(0.0),
        1 => Just(-0.0),
        1 => Just(-1.0),
        1 => Just(0.0005),
        1 => Just(1e300),
        1 => Just(f64::INFINITY),
        1 => Just(f64::NEG_INFINITY),
        1 => any::<f64>(),
    ]
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(
        prop_oneof![
            // More fails than passes at small ratios, so runs reach both ends.
            4 => Just(Op::Pass),
            4 => Just(Op::Fail),
            2 => Just(Op::CanRetry),
            2 => Just(Op::Check),
            1 => (maxima(), ratios()).prop_map(|(max, ratio)| Op::Retune(max, ratio)),
        ],
        0..300,
    )
}

proptest! {
    // Any run of passes, fails, questions and retunes under hostile policies: the shared
    // budget answers every call as `Budget` does, reasons included, retune returns the
    // budget it replaced, and the two hold the same count and policy after each call.
    #[test]
    fn decides_exactly_as_budget_on_one_thread(
        max_tokens in maxima(),
        ratio in ratios(),
        ops in ops(),
    ) {
        let shared = SharedBudget::new(max_tokens, ratio);
        let mut budget = Budget::new(max_tokens, ratio);
        prop_assert_eq!(shared.snapshot(), budget);
        for (step, op) in ops.into_iter().enumerate() {
            match op {
                Op::Pass => {
                    shared.pass();
                    budget.pass();
                }
                Op::Fail => {
                    shared.fail();
                    budget.fail();
                }
                Op::CanRetry => {
                    prop_assert_eq!(shared.can_retry(), budget.can_retry(), "step {}", step);
                }
                Op::Check => prop_assert_eq!(shared.check(), budget.check(), "step {}", step),
                Op::Retune(max, ratio) => {
                    let was = budget;
                    budget.retune(max, ratio);
                    prop_assert_eq!(shared.retune(max, ratio), was, "step {}", step);
                }
            }
            prop_assert_eq!(shared.snapshot(), budget, "step {}", step);
            prop_assert_eq!(
                (shared.tokens(), shared.max_tokens(), shared.token_ratio()),
                (budget.tokens(), budget.max_tokens(), budget.token_ratio()),
                "step {}", step
            );
        }
    }

    // The shared form of any budget starts where it was.
    #[test]
    fn from_a_budget_keeps_its_count_and_policy(
        max_tokens in maxima(),
        ratio in ratios(),
        failures in 0..1200_u32,
    ) {
        let mut budget = Budget::new(max_tokens, ratio);
        for _ in 0..failures {
            budget.fail();
        }
        prop_assert_eq!(SharedBudget::from(budget).snapshot(), budget);
    }
}
