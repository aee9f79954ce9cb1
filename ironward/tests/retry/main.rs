//! `ironward::retry` through its public API: the engine against a naive model of its rule
//! order, and whole loops driven on a passed-in clock.
//!
//! - `properties`: for random rules (zero, `Duration::MAX` and `u32::MAX` among them), random
//!   sequences of attempts, failures of every class, named waits, timeouts, successes and
//!   refusals, with clocks that step back and draws that are NaN or infinite, the engine
//!   answers as a model written in `u128` nanoseconds, where nothing saturates, and leaves the
//!   same record and the same retry budget.
//! - `loops`: a loop that sleeps exactly what it is told never ends after its time budget,
//!   never makes more attempts than its backoff allows, and adds up its waits in the record.

mod loops;
mod properties;

use std::time::Duration;

use ironward::retry::Rules;
use ironward::{Backoff, Jitter};
use proptest::prelude::*;

/// Durations at the scale of a retry loop, and at the edges.
fn duration() -> impl Strategy<Value = Duration> {
    prop_oneof![
        4 => (0u64..20_000).prop_map(Duration::from_millis),
        1 => Just(Duration::ZERO),
        1 => Just(Duration::MAX),
        1 => Just(Duration::MAX - Duration::from_nanos(1)),
        1 => (any::<u64>(), 0u32..1_000_000_000).prop_map(|(s, n)| Duration::new(s, n)),
    ]
}

/// Every jitter, spreads out of range among them.
fn jitter() -> impl Strategy<Value = Jitter> {
    prop_oneof![
        Just(Jitter::Rigid),
        Just(Jitter::Full),
        Just(Jitter::Equal),
        Just(Jitter::Decorrelated),
        prop_oneof![Just(0.2), Just(f64::NAN), Just(-1.0), Just(3.0)].prop_map(Jitter::Spread),
    ]
}

/// Draws in range, at its edges and out of it.
fn roll() -> impl Strategy<Value = f64> {
    prop_oneof![
        6 => 0.0f64..1.0,
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
        1 => Just(f64::NEG_INFINITY),
        1 => Just(1.0),
    ]
}

/// Rules at a retry loop's scale (most), and of every kind: attempts from none to
/// `u32::MAX`, any factor, any spans.
fn rules() -> impl Strategy<Value = Rules> {
    let ms = |range: std::ops::Range<u64>| range.prop_map(Duration::from_millis);
    let sensible = (
        ms(0..500),
        ms(0..5_000),
        1u32..8,
        jitter(),
        ms(0..30_000),
        ms(0..2_000),
    )
        .prop_map(
            |(base, cap, attempts, jitter, total_budget, request_reserve)| Rules {
                backoff: Backoff {
                    base,
                    factor: 2.0,
                    cap,
                    attempts,
                    jitter,
                },
                total_budget,
                request_reserve,
            },
        );
    prop_oneof![3 => sensible, 2 => extreme()]
}

/// Rules of every kind: attempts from none to `u32::MAX`, any factor, any spans.
fn extreme() -> impl Strategy<Value = Rules> {
    let attempts = prop_oneof![0u32..=6, Just(u32::MAX)];
    let factor = prop_oneof![
        Just(2.0),
        Just(1.5),
        Just(0.5),
        Just(f64::NAN),
        Just(f64::INFINITY)
    ];
    (
        (duration(), factor, duration(), attempts, jitter()),
        duration(),
        duration(),
    )
        .prop_map(
            |((base, factor, cap, attempts, jitter), total_budget, request_reserve)| Rules {
                backoff: Backoff {
                    base,
                    factor,
                    cap,
                    attempts,
                    jitter,
                },
                total_budget,
                request_reserve,
            },
        )
}
