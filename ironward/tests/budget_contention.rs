//! `SharedBudget` under contention, on real threads: the count never leaves
//! `[0, max_tokens]`, no pass or fail is lost, and a retune changes the count and the policy
//! together.
//!
//! Passes and fails are additions clamped at the ends, so they commute while no clamp is
//! reached, and passes commute with passes (and fails with fails) even when one is: in those
//! cases the final count under any interleaving is exactly the sequential replay's, and the
//! tests assert it to the thousandth.

use std::sync::Barrier;
use std::thread;

use ironward::{Budget, SharedBudget};

const THREADS: usize = 8;

/// Runs `work(thread)` on every thread at once.
fn hammer(work: impl Fn(usize) + Sync) {
    let barrier = Barrier::new(THREADS);
    thread::scope(|s| {
        for thread in 0..THREADS {
            let (barrier, work) = (&barrier, &work);
            s.spawn(move || {
                barrier.wait();
                work(thread);
            });
        }
    });
}

/// A budget of `max_tokens` and `token_ratio` after `failures` failed attempts.
fn spent(max_tokens: u32, token_ratio: f64, failures: u32) -> Budget {
    let mut budget = Budget::new(max_tokens, token_ratio);
    for _ in 0..failures {
        budget.fail();
    }
    budget
}

/// Asserts that one load of the budget is a state a `Budget` could hold.
fn assert_in_range(budget: &SharedBudget) {
    let seen = budget.snapshot();
    assert!(
        seen.tokens() >= 0.0 && seen.tokens() <= f64::from(seen.max_tokens()),
        "{seen:?}"
    );
}

// Far from both ends, every interleaving of passes and fails is the same sum: 8 threads
// each give back 60 000 thousandths and take 48 tokens, from 500 tokens of 1000. All the
// passes first reach 980 tokens, all the fails first 116, so no interleaving reaches a clamp
// and every one ends at exactly 500 + 480 - 384 tokens. A lost update would
// show as a count off by at least a thousandth.
#[test]
fn passes_and_fails_away_from_the_ends_sum_exactly() {
    let budget = SharedBudget::from(spent(1000, 0.001, 500));
    hammer(|_| {
        for round in 0..60_000 {
            budget.pass();
            if round % 1250 == 0 {
                budget.fail();
            }
            if round % 4096 == 0 {
                assert_in_range(&budget);
            }
        }
    });
    let fails_per_thread = 60_000 / 1250;
    let mut replay = spent(1000, 0.001, 500);
    for _ in 0..THREADS {
        for _ in 0..60_000 {
            replay.pass();
        }
        for _ in 0..fails_per_thread {
            replay.fail();
        }
    }
    assert_eq!(budget.snapshot(), replay);
    assert_eq!(budget.tokens(), 500.0 + 480.0 - 384.0);
}

// Passes alone commute even through the cap: from empty, a run that cannot fill the budget
// ends at exactly the sum, and one that can ends full.
#[test]
fn passes_alone_sum_exactly_and_stop_at_the_maximum() {
    for (rounds, full) in [(10_000, false), (100_000, true)] {
        let budget = SharedBudget::from(spent(1000, 0.007, 1000));
        hammer(|_| {
            for round in 0..rounds {
                budget.pass();
                if round % 4096 == 0 {
                    assert_in_range(&budget);
                }
            }
        });
        let sum = (THREADS as u32 * rounds * 7).min(1_000_000);
        assert_eq!(budget.tokens(), f64::from(sum) / 1000.0);
        assert_eq!(budget.tokens() == 1000.0, full);
    }
}

// Fails alone commute even through zero: a full budget of 1000 tokens loses exactly one per
// fail until it is empty, and stays empty.
#[test]
fn fails_alone_take_one_token_each_and_stop_at_zero() {
    for (rounds, empty) in [(100, false), (1_000, true)] {
        let budget = SharedBudget::new(1000, 0.1);
        hammer(|_| {
            for _ in 0..rounds {
                budget.fail();
                assert_in_range(&budget);
            }
        });
        let left = 1000_u32.saturating_sub(THREADS as u32 * rounds);
        assert_eq!(budget.tokens(), f64::from(left));
        assert_eq!(budget.can_retry(), !empty && left > 500);
    }
}

// Passes, fails and retunes between two policies at once: every load shows one policy or the
// other, never one's maximum with the other's ratio, and a count within that maximum, and
// every retune reports a budget that was in force.
#[test]
fn a_retune_under_contention_changes_the_count_and_the_policy_together() {
    let policies = [(4_u32, 0.5_f64), (1000, 0.001)];
    let is_policy = |seen: Budget| {
        policies
            .iter()
            .any(|&(max, ratio)| (seen.max_tokens(), seen.token_ratio()) == (max, ratio))
    };
    let budget = SharedBudget::new(4, 0.5);
    hammer(|thread| {
        for round in 0..50_000_usize {
            match (thread, round % 3) {
                (0, _) => {
                    let (max, ratio) = policies[round % 2];
                    let was = budget.retune(max, ratio);
                    assert!(is_policy(was), "{was:?}");
                }
                (_, 0) => budget.fail(),
                _ => budget.pass(),
            }
            let seen = budget.snapshot();
            assert!(is_policy(seen), "{seen:?}");
            assert!(seen.tokens() <= f64::from(seen.max_tokens()), "{seen:?}");
        }
    });
    assert_in_range(&budget);
    assert!(is_policy(budget.snapshot()));
}

// Hostile policies on every thread at once: a maximum of 0 (read as 1), `u32::MAX` (1000),
// NaN and infinite ratios. Nothing panics and no count leaves its range.
#[test]
fn hostile_policies_under_contention_never_panic_or_leave_the_range() {
    let budget = SharedBudget::new(0, f64::NAN);
    hammer(|thread| {
        for round in 0..20_000_u32 {
            match (thread, round % 2) {
                (0, 0) => drop(budget.retune(u32::MAX, f64::INFINITY)),
                (0, _) => drop(budget.retune(0, f64::NAN)),
                (_, 0) => budget.fail(),
                _ => budget.pass(),
            }
            assert_in_range(&budget);
        }
    });
    assert_eq!(budget.max_tokens(), 1);
    assert_eq!(budget.token_ratio(), 0.0);
}
