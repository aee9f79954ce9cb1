extern crate std;

use super::*;
use std::vec;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn with(jitter: Jitter) -> Backoff {
    Backoff { jitter, ..BACKOFF }
}

#[test]
fn the_preset_is_grpc_a6_with_aws_standard_attempts() {
    let preset = Backoff::default();
    assert_eq!(preset, BACKOFF);
    assert_eq!(preset.base, ms(100));
    assert_eq!(preset.factor, 2.0);
    assert_eq!(preset.cap, ms(1000));
    assert_eq!(preset.attempts, 3);
    assert_eq!(preset.jitter, Jitter::Spread(0.2));
}

// gRPC A6: min(initialBackoff · backoffMultiplier^(n−1), maxBackoff).
#[test]
fn the_ceiling_doubles_from_the_base_to_the_cap() {
    let ceilings: Vec<_> = (1..=6).map(|r| BACKOFF.ceiling(r)).collect();
    assert_eq!(
        ceilings,
        [ms(100), ms(200), ms(400), ms(800), ms(1000), ms(1000)]
    );
}

#[test]
fn retry_zero_is_read_as_the_first() {
    assert_eq!(BACKOFF.ceiling(0), BACKOFF.ceiling(1));
    assert_eq!(BACKOFF.delay(0, 0.3, None), BACKOFF.delay(1, 0.3, None));
}

#[test]
fn the_ceiling_never_overflows() {
    assert_eq!(BACKOFF.ceiling(u32::MAX), ms(1000));
    let unbounded = Backoff {
        base: Duration::MAX,
        cap: Duration::MAX,
        ..BACKOFF
    };
    assert_eq!(unbounded.ceiling(1), Duration::MAX);
    assert_eq!(unbounded.ceiling(u32::MAX), Duration::MAX);
    let endless = Backoff {
        cap: Duration::MAX,
        ..BACKOFF
    };
    assert_eq!(endless.ceiling(u32::MAX), Duration::MAX);
    assert_eq!(endless.ceiling(11), ms(102_400));
}

#[test]
fn a_factor_that_is_nan_or_below_one_is_read_as_one() {
    for factor in [f64::NAN, 0.5, 0.0, -2.0, f64::NEG_INFINITY] {
        let flat = Backoff { factor, ..BACKOFF };
        assert_eq!(flat.ceiling(1), ms(100), "factor {factor}");
        assert_eq!(flat.ceiling(u32::MAX), ms(100), "factor {factor}");
    }
}

#[test]
fn an_infinite_factor_reaches_the_cap_on_the_second_retry() {
    let steep = Backoff {
        factor: f64::INFINITY,
        ..BACKOFF
    };
    assert_eq!(steep.ceiling(1), ms(100));
    assert_eq!(steep.ceiling(2), ms(1000));
    let idle = Backoff {
        base: Duration::ZERO,
        ..steep
    };
    assert_eq!(idle.ceiling(2), Duration::ZERO);
}

#[test]
fn a_base_above_the_cap_gives_the_cap() {
    let backoff = Backoff {
        base: ms(5000),
        ..BACKOFF
    };
    assert_eq!(backoff.ceiling(1), ms(1000));
    assert_eq!(with(Jitter::Decorrelated).delay(1, 0.0, None), ms(100));
    let decorrelated = Backoff {
        jitter: Jitter::Decorrelated,
        ..backoff
    };
    assert_eq!(decorrelated.delay(1, 0.0, None), ms(1000));
}

#[test]
fn rigid_waits_the_ceiling() {
    let rigid = with(Jitter::Rigid);
    assert_eq!(rigid.delay(3, 0.0, None), ms(400));
    assert_eq!(rigid.delay(3, 0.99, Some(ms(7))), ms(400));
}

// AWS "Exponential Backoff and Jitter": Full Jitter is random_between(0, ceiling).
#[test]
fn full_jitter_draws_over_zero_to_the_ceiling() {
    let full = with(Jitter::Full);
    assert_eq!(full.delay(3, 0.0, None), Duration::ZERO);
    assert_eq!(full.delay(3, 0.5, None), ms(200));
    assert_eq!(full.delay(3, 1.0, None), ms(400));
}

// AWS "Exponential Backoff and Jitter": Equal Jitter is ceiling/2 + random(0, ceiling/2).
#[test]
fn equal_jitter_keeps_half_the_ceiling() {
    let equal = with(Jitter::Equal);
    assert_eq!(equal.delay(3, 0.0, None), ms(200));
    assert_eq!(equal.delay(3, 0.5, None), ms(300));
    assert_eq!(equal.delay(3, 1.0, None), ms(400));
}

// AWS "Exponential Backoff and Jitter": Decorrelated Jitter is
// min(cap, random_between(base, sleep · 3)).
#[test]
fn decorrelated_jitter_grows_from_the_previous_delay() {
    let decorrelated = with(Jitter::Decorrelated);
    assert_eq!(decorrelated.delay(1, 0.5, None), ms(200));
    assert_eq!(decorrelated.delay(1, 0.5, Some(ms(200))), ms(350));
    assert_eq!(decorrelated.delay(7, 0.5, Some(ms(200))), ms(350));
    assert_eq!(decorrelated.delay(1, 0.9, Some(ms(10_000))), ms(1000));
    // A previous delay below a third of the base still draws from the base.
    assert_eq!(decorrelated.delay(1, 0.9, Some(Duration::ZERO)), ms(100));
    assert_eq!(decorrelated.delay(1, 0.9, Some(Duration::MAX)), ms(1000));
}

// gRPC A6, as revised in 2024: min(...) · random(0.8, 1.2).
#[test]
fn spread_draws_a_fifth_either_way_and_may_pass_the_cap() {
    assert_eq!(BACKOFF.delay(2, 0.0, None), ms(160));
    assert_eq!(BACKOFF.delay(2, 0.5, None), ms(200));
    assert_eq!(BACKOFF.delay(2, 1.0, None), ms(240));
    assert_eq!(BACKOFF.delay(5, 1.0, None), ms(1200));
}

// moonward's README comments `delay(2, random=0.5)` as 100 ms, but by its own
// `Backoff::ceiling` (the first retry is 1) the second retry's ceiling is 200 ms, and
// Spread(0.2) at a draw of 0.5 is the ceiling itself. The definition wins.
#[test]
fn moonward_readme_delay_of_the_second_retry_at_half_is_200ms_not_100ms() {
    assert_eq!(BACKOFF.delay(2, 0.5, None), ms(200));
    assert_ne!(BACKOFF.delay(2, 0.5, None), ms(100));
}

#[test]
fn a_spread_that_is_nan_or_out_of_range_is_held_to_zero_through_one() {
    for f in [f64::NAN, -0.5, f64::NEG_INFINITY] {
        assert_eq!(
            with(Jitter::Spread(f)).delay(2, 0.9, None),
            ms(200),
            "f {f}"
        );
    }
    for f in [1.0, 3.0, f64::INFINITY] {
        let wide = with(Jitter::Spread(f));
        assert_eq!(wide.delay(2, 0.0, None), Duration::ZERO, "f {f}");
        assert_eq!(wide.delay(2, 0.5, None), ms(200), "f {f}");
        assert_eq!(wide.delay(2, 1.0, None), ms(400), "f {f}");
    }
}

#[test]
fn draws_are_clamped_into_the_unit_interval() {
    let full = with(Jitter::Full);
    assert_eq!(full.delay(3, f64::NAN, None), Duration::ZERO);
    assert_eq!(full.delay(3, -1.0, None), Duration::ZERO);
    assert_eq!(full.delay(3, f64::NEG_INFINITY, None), Duration::ZERO);
    assert_eq!(full.delay(3, f64::INFINITY, None), ms(400));
    assert_eq!(full.delay(3, 7.0, None), ms(400));
}

#[test]
fn delays_saturate_at_duration_max() {
    let huge = Backoff {
        base: Duration::MAX,
        cap: Duration::MAX,
        jitter: Jitter::Spread(1.0),
        ..BACKOFF
    };
    assert_eq!(huge.delay(u32::MAX, 1.0, None), Duration::MAX);
    for jitter in [Jitter::Rigid, Jitter::Decorrelated] {
        let huge = Backoff { jitter, ..huge };
        assert_eq!(
            huge.delay(u32::MAX, 1.0, Some(Duration::MAX)),
            Duration::MAX
        );
    }
    // Full and Equal draw just below the ceiling: a draw of 1 is read as 1 − 2⁻⁵³, which
    // at 584 billion years is some 2000 s short.
    for jitter in [Jitter::Full, Jitter::Equal] {
        let huge = Backoff { jitter, ..huge };
        let delay = huge.delay(u32::MAX, 1.0, None);
        assert!(Duration::MAX - delay < Duration::from_secs(10_000));
    }
}

#[test]
fn more_counts_the_first_call_as_an_attempt() {
    assert!(BACKOFF.more(0));
    assert!(BACKOFF.more(1));
    assert!(BACKOFF.more(2));
    assert!(!BACKOFF.more(3));
    assert!(!BACKOFF.more(u32::MAX));
    let never = Backoff {
        attempts: 0,
        ..BACKOFF
    };
    assert!(!never.more(0));
}

#[test]
fn the_schedule_holds_attempts_minus_one_delays() {
    assert_eq!(BACKOFF.schedule(&[0.5, 0.5, 0.5]), [ms(100), ms(200)]);
    for attempts in [0, 1] {
        let once = Backoff {
            attempts,
            ..BACKOFF
        };
        assert!(once.schedule(&[0.5]).is_empty());
    }
    let five = Backoff {
        attempts: 5,
        jitter: Jitter::Rigid,
        ..BACKOFF
    };
    assert_eq!(five.schedule(&[]), [ms(100), ms(200), ms(400), ms(800)]);
}

#[test]
fn a_schedule_short_of_draws_draws_zero() {
    assert_eq!(BACKOFF.schedule(&[]), [ms(80), ms(160)]);
    assert_eq!(BACKOFF.schedule(&[0.5]), [ms(100), ms(160)]);
}

#[test]
fn a_decorrelated_schedule_chains_each_delay_into_the_next() {
    let decorrelated = Backoff {
        attempts: 4,
        jitter: Jitter::Decorrelated,
        ..BACKOFF
    };
    assert_eq!(
        decorrelated.schedule(&[0.5, 0.5, 0.5]),
        vec![ms(200), ms(350), ms(575)]
    );
}

#[test]
fn a_jitter_that_draws_nothing_waits_the_same_for_any_draw() {
    let draws = [0.0, 0.3, 0.999, 1.0, -1.0, f64::NAN, f64::INFINITY];
    for jitter in [
        Jitter::Rigid,
        Jitter::Spread(0.0),
        Jitter::Spread(-0.5),
        Jitter::Spread(f64::NAN),
    ] {
        assert!(!jitter.draws(), "{jitter:?}");
        let backoff = with(jitter);
        for retry in [1, 2, 5, u32::MAX] {
            let first = backoff.delay(retry, draws[0], Some(ms(300)));
            assert!(
                draws
                    .iter()
                    .all(|&u| backoff.delay(retry, u, Some(ms(300))) == first),
                "{jitter:?} at retry {retry}"
            );
        }
    }
    // Each of the others moves with the draw somewhere.
    for jitter in [
        Jitter::Full,
        Jitter::Equal,
        Jitter::Decorrelated,
        Jitter::Spread(0.2),
        Jitter::Spread(f64::INFINITY),
    ] {
        assert!(jitter.draws(), "{jitter:?}");
        let backoff = with(jitter);
        assert_ne!(
            backoff.delay(2, 0.1, None),
            backoff.delay(2, 0.9, None),
            "{jitter:?}"
        );
    }
}
