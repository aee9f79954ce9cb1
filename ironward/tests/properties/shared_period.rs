//! Properties of `SharedPeriod` on one thread, against its `&mut` twin: `Period`.
//!
//! Its docs promise `Period`'s answers exactly, calls not overlapping, with two things not
//! kept: the latest reading (so a wait asked at an earlier reading is counted from it, at
//! most a period, and a retune is given the latest reading here), and refused events past
//! the first (so after a retune that raises the quota over a period that refused two or
//! more, the twins part; the model starts both afresh there).

use std::time::Duration;

use ironward::{Period, SharedPeriod, Usage};
use proptest::prelude::*;

use super::strategies::{Clock, Step, span, step};

/// One call on both counters.
#[derive(Debug, Clone, Copy)]
enum Op {
    Take,
    Check,
    CheckLeft,
    Left,
    Next,
    Retune(u32, Duration),
}

/// Quotas as callers pass them, with the extremes.
fn quotas() -> impl Strategy<Value = u32> {
    prop_oneof![6 => 0..8_u32, 1 => Just(u32::MAX), 1 => any::<u32>()]
}

fn ops(retunes: u32) -> impl Strategy<Value = Vec<(Step, Op)>> {
    prop::collection::vec(
        (
            step(3_000),
            prop_oneof![
                6 => Just(Op::Take),
                2 => Just(Op::Check),
                2 => Just(Op::CheckLeft),
                2 => Just(Op::Left),
                2 => Just(Op::Next),
                retunes => (quotas(), span()).prop_map(|(q, p)| Op::Retune(q, p)),
            ],
        ),
        0..200,
    )
}

/// A period as both read it, in nanoseconds.
fn read(period: Duration) -> u64 {
    u64::try_from(period.as_nanos()).unwrap_or(u64::MAX).max(1)
}

/// The twins, one made by `aligned` when `align` is set, else by `new`.
fn made(quota: u32, period: Duration, align: bool) -> (SharedPeriod, Period) {
    if align {
        (
            SharedPeriod::aligned(quota, period),
            Period::aligned(quota, period),
        )
    } else {
        (SharedPeriod::new(quota, period), Period::new(quota, period))
    }
}

/// Whether the open period of `alone` has refused two events or more at `now`: a clone's
/// refusal counts the open period's events plus its own.
fn refused_twice(alone: &Period, now: Duration) -> bool {
    let mut probe = alone.clone();
    probe
        .check(now)
        .is_err_and(|reason| u64::from(reason.count) >= u64::from(reason.quota) + 3)
}

/// Runs `ops` on both twins, asserting every promise of the docs.
fn agree(
    quota: u32,
    period: Duration,
    align: bool,
    ops: Vec<(Step, Op)>,
) -> Result<(), TestCaseError> {
    let (mut shared, mut alone) = made(quota, period, align);
    let mut clock = Clock::new(0);
    for (step, op) in ops {
        let now = clock.read(step);
        // Whether `now` is at least the latest reading `alone` has seen.
        let ns = u64::try_from(now.as_nanos()).unwrap_or(u64::MAX);
        let forward = ns >= clock.seen;
        let longest = alone.period();
        match op {
            Op::Take => {
                clock.change(now);
                prop_assert_eq!(shared.take(now), alone.take(now));
            }
            Op::Check => {
                clock.change(now);
                match (shared.check(now), alone.check(now)) {
                    (Ok(a), Ok(b)) => prop_assert_eq!(a, b),
                    (Err(a), Err(b)) => {
                        prop_assert_eq!(a.quota, b.quota);
                        // The events admitted and the first refusal: the quota plus one,
                        // or more when a retune lowered the quota over them.
                        let cap = u32::try_from(u64::from(b.quota) + 1).unwrap_or(u32::MAX);
                        prop_assert!(
                            cap <= a.count && a.count <= b.count,
                            "{:?} against {:?}",
                            a,
                            b
                        );
                        if forward {
                            prop_assert_eq!(a.next, b.next);
                        } else {
                            prop_assert!(b.next <= a.next && a.next <= longest);
                        }
                    }
                    (a, b) => prop_assert!(false, "{:?} against {:?}", a, b),
                }
            }
            Op::CheckLeft => {
                clock.change(now);
                let answer = alone.take(now);
                match shared.check_left(now) {
                    Ok(room) => {
                        prop_assert_eq!(room.quota, answer);
                        prop_assert_eq!(room.left, alone.left(now));
                        if forward {
                            prop_assert_eq!(room.reset, alone.next(now));
                        } else {
                            prop_assert!(alone.next(now) <= room.reset && room.reset <= longest);
                        }
                    }
                    Err(_) => prop_assert_eq!(answer, Usage::Over),
                }
            }
            Op::Left => prop_assert_eq!(shared.left(now), alone.left(now)),
            Op::Next => {
                let (a, b) = (shared.next(now), alone.next(now));
                if forward {
                    prop_assert_eq!(a, b);
                } else {
                    prop_assert!(b <= a && a <= longest, "{:?} against {:?}", a, b);
                }
            }
            Op::Retune(quota, period) => {
                // Given the latest reading, as the docs ask of a retune.
                let at = Duration::from_nanos(clock.query(now));
                if quota > alone.quota() && refused_twice(&alone, at) {
                    // The documented parting: both start afresh on the new terms.
                    (shared, alone) = made(quota, period, align);
                    clock = Clock::new(0);
                    continue;
                }
                if (quota, read(period)) != (alone.quota(), read(alone.period())) {
                    clock.change(at);
                }
                shared.retune(quota, period, at);
                alone.retune(quota, period, at);
                prop_assert_eq!(
                    (shared.quota(), shared.period()),
                    (alone.quota(), alone.period())
                );
            }
        }
    }
    Ok(())
}

proptest! {
    // Without retunes: every take, check and left is `Period`'s, a clock going backwards,
    // zero and `Duration::MAX` periods, quotas of 0 and `u32::MAX` and the end of the clock
    // included; a wait is `Period`'s whenever the reading is not behind the latest seen.
    #[test]
    fn decides_as_period_on_one_thread(
        quota in quotas(),
        period in span(),
        align in any::<bool>(),
        ops in ops(0),
    ) {
        agree(quota, period, align, ops)?;
    }

    // With retunes to any quota and period mixed in, aligned and not: the same.
    #[test]
    fn a_retuned_counter_decides_as_period(
        quota in quotas(),
        period in span(),
        align in any::<bool>(),
        ops in ops(2),
    ) {
        agree(quota, period, align, ops)?;
    }

    // Readings anywhere on the clock, hostile terms and retunes at raw readings, backwards
    // ones included: nothing panics, `left` stays within the quota, waits within the
    // period, and an admitted take's headroom is what `left` and `next` then say.
    #[test]
    fn no_input_makes_a_shared_period_panic(
        quota in quotas(),
        period in span(),
        align in any::<bool>(),
        ops in prop::collection::vec((step(u64::MAX), 0..4_u8, quotas(), span()), 1..100),
    ) {
        let (shared, _) = made(quota, period, align);
        let mut clock = Clock::new(0);
        for (step, op, quota, period) in ops {
            let now = clock.read(step);
            match op {
                0 => shared.retune(quota, period, now),
                1 => {
                    if let Ok(room) = shared.check_left(now) {
                        prop_assert_eq!(room.left, shared.left(now));
                        prop_assert_eq!(room.reset, shared.next(now));
                        prop_assert_eq!(room.quota == Usage::Hit, room.left == 0);
                    }
                }
                _ => {
                    let _ = shared.take(now);
                }
            }
            prop_assert!(shared.left(now) <= shared.quota());
            prop_assert!(shared.next(now) <= shared.period());
            prop_assert!(shared.next(now) > Duration::ZERO || shared.left(now) == shared.quota());
        }
    }
}
