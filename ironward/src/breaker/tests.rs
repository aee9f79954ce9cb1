//! Unit tests of `breaker` that need its private items.

extern crate std;

use super::*;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A preset breaker whose buckets hold `(success, failure, drop)`, oldest first, one per
/// 250 ms, read at the start of the newest.
fn with_buckets(buckets: &[(u64, u64, u64)]) -> (SreBreaker, u64) {
    with_policy(SRE, buckets)
}

/// [`with_buckets`] under the policy `sre`.
fn with_policy(sre: Sre, buckets: &[(u64, u64, u64)]) -> (SreBreaker, u64) {
    let mut breaker = SreBreaker::new(sre, ms(0));
    let width = nanos(breaker.window.width());
    let mut now = 0;
    for (i, &(success, failure, drop)) in buckets.iter().enumerate() {
        now = i as u64 * width;
        *breaker.roll(now) = Tally {
            total: success + failure + drop,
            success,
            failure,
            drop,
        };
        breaker.accepts += success;
        breaker.total += success + failure + drop;
    }
    let history = breaker.history(now);
    breaker.runs = Runs {
        failing: history.failing,
        working: history.working,
        succeeded: buckets.iter().filter(|b| b.0 > 0).count(),
        failed: buckets.iter().filter(|b| b.1 > 0).count(),
    };
    (breaker, now)
}

fn repeat(n: usize, bucket: (u64, u64, u64)) -> impl Iterator<Item = (u64, u64, u64)> {
    core::iter::repeat_n(bucket, n)
}

// The breaker's worked values, from go-zero googlebreaker_test.go's history
// cases, with the production constants.
#[test]
fn reproduces_the_worked_drop_ratios() {
    // (buckets oldest first, accepts, total, failing, working, drop)
    type Case<'a> = (&'a [(u64, u64, u64)], u64, u64, usize, usize, f64);
    let cases: [Case<'_>; 8] = [
        (&[(0, 100, 0)], 0, 100, 1, 0, 0.9405940594059405),
        (&[(100, 100, 0)], 100, 200, 0, 0, 0.22388059701492538),
        (
            &repeat(10, (0, 10, 0))
                .chain(repeat(4, (10, 0, 0)))
                .collect::<std::vec::Vec<_>>(),
            40,
            140,
            0,
            4,
            0.4787234042553192,
        ),
        (
            &repeat(1, (100, 0, 0))
                .chain(repeat(20, (0, 10, 0)))
                .collect::<std::vec::Vec<_>>(),
            100,
            300,
            20,
            0,
            0.5481727574750831,
        ),
        (&[(0, 6, 0)], 0, 6, 1, 0, 0.14285714285714285),
        (
            &[
                (10, 0, 0),
                (10, 0, 0),
                (10, 0, 0),
                (0, 0, 10),
                (0, 0, 10),
                (0, 50, 0),
            ],
            30,
            100,
            1,
            0,
            0.498019801980198,
        ),
        (
            &repeat(20, (0, 20, 0))
                .chain(repeat(10, (10, 0, 0)))
                .collect::<std::vec::Vec<_>>(),
            100,
            500,
            0,
            10,
            0.5164670658682635,
        ),
        (&[(0, 5, 0)], 0, 5, 1, 0, 0.0),
    ];
    for (buckets, accepts, total, failing, working, drop) in cases {
        let (breaker, now) = with_buckets(buckets);
        let history = breaker.history(now);
        assert_eq!(
            history,
            History {
                accepts,
                total,
                working,
                failing
            },
            "{buckets:?}"
        );
        assert_eq!(
            breaker.ratio(Duration::from_nanos(now)),
            drop,
            "{buckets:?}"
        );
    }
}

// (0,5,0) is the protection at work: five failures are never throttled.
#[test]
fn allows_everything_within_the_protection() {
    let (mut breaker, now) = with_buckets(&[(0, 5, 0)]);
    let now = Duration::from_nanos(now);
    let history = breaker.history(nanos(now));
    assert!(breaker.weigh(&history).drop(history.total) <= 0.0);
    for _ in 0..10 {
        let permit = breaker.allow(now, 0.0).expect("within the protection");
        breaker.pass(permit, now);
    }
    // Allowing while healthy records nothing and leaves the probe clock alone.
    assert_eq!(breaker.last, None);
}

// A virtual-clock sequence after go-zero googlebreaker_test.go's probe cases.
#[test]
fn reproduces_the_virtual_clock_sequence() {
    let mut breaker = SreBreaker::new(SRE, ms(0));
    for _ in 0..100 {
        let permit = breaker.allow(ms(0), 0.99).expect("a roll of 0.99 passes");
        breaker.fail(permit, ms(0));
    }
    assert_eq!(breaker.ratio(ms(100)), 0.9405940594059405);
    let permit = breaker.allow(ms(100), 0.99).expect("0.99 is over 0.9405…");
    breaker.fail(permit, ms(100));

    assert_eq!(breaker.ratio(ms(200)), 0.9411764705882353);
    assert!(breaker.allow(ms(200), 0.0).is_none());
    // Exactly one probe interval since the last pass is not more than it.
    assert!(breaker.allow(ms(1100), 0.0).is_none());
    let probe = ms(1100) + Duration::from_nanos(1);
    assert!(
        breaker.allow(probe, 0.0).is_some(),
        "the probe lets one through"
    );

    // At 10 s the first bucket has left the window; what remains is the drop at 1100 ms.
    let history = breaker.history(nanos(ms(10_000)));
    assert_eq!((history.total, history.accepts), (1, 0));
    assert!(breaker.allow(ms(10_000), 0.0).is_some());
    assert_eq!(breaker.ratio(ms(10_000)), 0.0);
}

#[test]
fn refusals_are_recorded_as_drops() {
    let (mut breaker, now) = with_buckets(&[(0, 100, 0)]);
    let now = Duration::from_nanos(now);
    assert!(breaker.allow(now, 0.0).is_none());
    assert!(breaker.allow(now, 0.5).is_none());
    let history = breaker.history(nanos(now));
    assert_eq!(history.total, 102);
    assert_eq!(breaker.window.slot(now).drop, 2);
}

#[test]
fn a_run_of_successes_eases_the_throttle() {
    let (breaker, now) = with_buckets(&[(0, 100, 0), (0, 0, 0), (5, 0, 0), (0, 0, 3), (5, 0, 0)]);
    let history = breaker.history(now);
    assert_eq!((history.working, history.failing), (2, 0));
    let drop = breaker.weigh(&history).drop(history.total);
    assert_eq!(
        breaker.ratio(Duration::from_nanos(now)),
        drop * (38.0 / 40.0)
    );
}

#[test]
fn a_bucket_with_both_outcomes_ends_both_runs() {
    let (breaker, now) = with_buckets(&[(0, 10, 0), (0, 10, 0), (1, 1, 0)]);
    let history = breaker.history(now);
    assert_eq!((history.working, history.failing), (0, 0));
    let (breaker, now) = with_buckets(&[(0, 10, 0), (1, 1, 0), (0, 10, 0), (0, 0, 4)]);
    assert_eq!(breaker.history(now).failing, 1);
}

#[test]
fn a_clock_going_backwards_is_read_as_the_latest_seen() {
    let (mut breaker, now) = with_buckets(&[(0, 100, 0)]);
    let later = Duration::from_nanos(now) + ms(100);
    assert!(breaker.allow(later, 0.0).is_none());
    // Settling at an earlier time lands in the newest bucket, not a past one.
    let permit = breaker.allow(later, 0.999).expect("over the ratio");
    breaker.fail(permit, ms(0));
    assert_eq!(breaker.window.slot(later).failure, 101);
    // The probe measures from the latest time seen, so going back cannot trigger it.
    assert!(breaker.allow(ms(0), 0.0).is_none());
    assert_eq!(breaker.ratio(ms(0)), breaker.ratio(later));
}

#[test]
fn hostile_rolls_are_clamped() {
    let (mut breaker, now) = with_buckets(&[(0, 100, 0)]);
    let now = Duration::from_nanos(now);
    assert!(breaker.allow(now, f64::NAN).is_none(), "NaN reads as 0");
    assert!(breaker.allow(now, -3.0).is_none());
    assert!(breaker.allow(now, 1.0).is_some(), "1 reads as just below 1");
    assert!(breaker.allow(now, f64::INFINITY).is_some());
}

#[test]
fn the_probe_lets_one_call_through_per_interval() {
    let (mut breaker, now) = with_buckets(&[(0, 100, 0)]);
    let now = Duration::from_nanos(now);
    assert!(
        breaker.allow(now, 0.999).is_some(),
        "a lucky draw sets the probe clock"
    );
    let probe = now + SRE.probe + Duration::from_nanos(1);
    assert!(breaker.allow(probe, 0.0).is_some());
    assert!(breaker.allow(probe, 0.0).is_none());
    assert!(breaker.allow(probe + SRE.probe, 0.0).is_none());
    assert!(
        breaker
            .allow(probe + SRE.probe + Duration::from_nanos(1), 0.0)
            .is_some()
    );
}

#[test]
fn the_kept_totals_match_a_scan_of_the_window() {
    let mut breaker = SreBreaker::new(SRE, ms(0));
    let mut draw = 0.37;
    for step in 0..5_000u64 {
        // Bursts of failures and quiet spells, with the clock sometimes stepping back.
        let now = ms(step * 7 % 40_000 + step / 3);
        draw = (draw * 7.3) % 1.0;
        if let Some(permit) = breaker.allow(now, draw) {
            if (step / 400) % 2 == 0 {
                breaker.fail(permit, now);
            } else {
                breaker.pass(permit, now);
            }
        }
        let latest = breaker.clock.read(now);
        breaker.roll(latest);
        let history = breaker.history(latest);
        assert_eq!(
            (breaker.accepts, breaker.total),
            (history.accepts, history.total)
        );
    }
}

#[test]
fn the_kept_runs_match_a_scan_of_the_window() {
    for size in [1, 3, 40, 100] {
        let mut breaker = SreBreaker::new(Sre { size, ..SRE }, ms(0));
        let mut walk = crate::internal::walk::Walk::new();
        for step in 0..20_000u64 {
            let (now, x) = walk.step();
            let at = ms(now);
            let draw = (x >> 11) as f64 / (1u64 << 53) as f64;
            if let Some(permit) = breaker.allow(at, draw) {
                // Phases of failures and of successes, with mixed spells between.
                let settled = match (step / 700) % 3 {
                    0 => breaker.fail(permit, at),
                    1 => breaker.pass(permit, at),
                    _ if x & 1 == 0 => breaker.fail(permit, at),
                    _ => breaker.pass(permit, at),
                };
                assert!(settled.is_none());
            }
            let latest = breaker.clock.get();
            breaker.roll(latest);
            let history = breaker.history(latest);
            assert_eq!(
                (breaker.runs.failing, breaker.runs.working),
                (history.failing, history.working),
                "size {size}, step {step}"
            );
        }
    }
}

/// Windows that exercise every part of the formula: failing, recovering, healthy, empty,
/// within the protection, and decaying `k` over a long failing run.
const WINDOWS: [&[(u64, u64, u64)]; 6] = [
    &[(0, 100, 0)],
    &[(100, 100, 0)],
    &[(10, 0, 0), (0, 0, 4), (10, 0, 0)],
    &[],
    &[(0, 3, 0)],
    &[
        (100, 0, 0),
        (0, 10, 0),
        (0, 10, 0),
        (0, 10, 0),
        (0, 10, 0),
        (0, 10, 0),
    ],
];

/// Every field of `Sre` that is an `f64`, set to `value`.
fn each_constant(value: f64) -> [(&'static str, Sre); 3] {
    [
        ("k", Sre { k: value, ..SRE }),
        (
            "floor",
            Sre {
                floor: value,
                ..SRE
            },
        ),
        (
            "protection",
            Sre {
                protection: value,
                ..SRE
            },
        ),
    ]
}

// Edge cases: a NaN constant is read as infinity, the value that refuses least, and an
// infinite one turns the throttle off. A NaN `floor` or `protection` used to refuse
// every call while `ratio` reported 0.
#[test]
fn a_nan_or_infinite_constant_lets_every_call_through() {
    for value in [f64::NAN, f64::INFINITY] {
        for (field, sre) in each_constant(value) {
            for buckets in WINDOWS {
                let (mut breaker, now) = with_policy(sre, buckets);
                let now = Duration::from_nanos(now);
                assert_eq!(breaker.ratio(now), 0.0, "{field} {value} {buckets:?}");
                for _ in 0..50 {
                    let permit = breaker.allow(now, 0.0).expect("the throttle is off");
                    breaker.fail(permit, now);
                }
                assert_eq!(breaker.ratio(now), 0.0, "{field} {value} {buckets:?}");
            }
        }
    }
}

// Edge cases: a constant below its range (negative, `-inf` included) is read as 0. A
// `protection` of `-inf` used to refuse everything with a ratio of infinity.
#[test]
fn a_negative_constant_is_read_as_zero() {
    for value in [-1.0, -f64::MIN_POSITIVE, -1e300, f64::NEG_INFINITY] {
        for ((field, hostile), (_, zero)) in
            each_constant(value).into_iter().zip(each_constant(0.0))
        {
            for buckets in WINDOWS {
                let (mut a, now) = with_policy(hostile, buckets);
                let (mut b, _) = with_policy(zero, buckets);
                let at = Duration::from_nanos(now);
                let ratio = a.ratio(at);
                assert_eq!(ratio, b.ratio(at), "{field} {value} {buckets:?}");
                assert!((0.0..=1.0).contains(&ratio), "{field} {value}: {ratio}");
                for roll in [0.0, 0.25, 0.5, 0.75, 0.999] {
                    // Each refusal is a drop in the window: read the ratio afresh.
                    let ratio = a.ratio(at);
                    assert_eq!(ratio, b.ratio(at), "{field} {value} {roll}");
                    let (x, y) = (a.allow(at, roll), b.allow(at, roll));
                    assert_eq!(x.is_some(), y.is_some(), "{field} {value} {roll}");
                    assert_eq!(x.is_none(), roll < ratio, "{field} {value} {roll}");
                    for permit in [x, y].into_iter().flatten() {
                        drop(permit);
                    }
                }
            }
        }
    }
}

// Huge finite constants stay finite in the decay of `k`: with `k` at `f64::MAX` the
// product `(k − floor)·failing` overflows, and `w` would fall to the floor.
#[test]
fn huge_constants_never_make_a_nan() {
    let buckets = WINDOWS[5];
    let sre = Sre {
        k: f64::MAX,
        floor: 0.0,
        ..SRE
    };
    let (breaker, now) = with_policy(sre, buckets);
    assert_eq!(breaker.history(now).failing, 5);
    // Half of `f64::MAX` and more weighs on the 100 accepts: nothing is refused.
    assert_eq!(breaker.ratio(Duration::from_nanos(now)), 0.0);
    for (k, floor, protection) in [
        (0.0, f64::MAX, 0.0),
        (f64::MAX, f64::MAX, f64::MAX),
        (0.0, 0.0, f64::MAX),
        (f64::MIN_POSITIVE, 0.0, 0.0),
    ] {
        for buckets in WINDOWS {
            let sre = Sre {
                k,
                floor,
                protection,
                ..SRE
            };
            let (breaker, now) = with_policy(sre, buckets);
            let ratio = breaker.ratio(Duration::from_nanos(now));
            assert!((0.0..=1.0).contains(&ratio), "{sre:?} {buckets:?}: {ratio}");
        }
    }
}

#[test]
fn a_huge_size_is_lowered_to_the_most_buckets_a_window_holds() {
    for size in [usize::MAX, 1 << 61, crate::window::MAX_SIZE + 1] {
        let mut breaker = SreBreaker::new(Sre { size, ..SRE }, ms(0));
        assert_eq!(breaker.window.size(), crate::window::MAX_SIZE);
        for i in 0..200 {
            if let Some(permit) = breaker.allow(ms(i), 0.5) {
                breaker.fail(permit, ms(i));
            }
        }
        assert!(breaker.ratio(ms(200)) > 0.0);
        assert!(breaker.ratio(ms(200)) <= 1.0);
    }
}

#[test]
fn a_zero_sized_policy_is_raised_to_one_bucket() {
    let sre = Sre {
        size: 0,
        window: Duration::ZERO,
        ..SRE
    };
    let mut breaker = SreBreaker::new(sre, ms(0));
    for _ in 0..50 {
        if let Some(permit) = breaker.allow(ms(0), 0.5) {
            breaker.fail(permit, ms(0));
        }
    }
    assert!(breaker.ratio(ms(0)) > 0.0);
    assert_eq!(breaker.ratio(Duration::MAX), 0.0);
}

/// Every bucket still in the window at `now`, oldest first.
fn buckets(breaker: &SreBreaker, now: u64) -> std::vec::Vec<Tally> {
    let mut seen = std::vec::Vec::new();
    breaker.window.visit(now, true, |tally| seen.push(*tally));
    seen
}

#[test]
fn retuning_the_constants_changes_the_next_ratio_and_keeps_the_window() {
    let (mut breaker, now) = with_buckets(&[(0, 40, 0), (100, 100, 0)]);
    let at = Duration::from_nanos(now);
    let twin = breaker.clone();
    // 240 calls, 100 accepted: (240 − 5 − 1.5·100) / 241 under the preset.
    assert_eq!(breaker.ratio(at), 85.0 / 241.0);
    breaker.retune(Sre { k: 1.75, ..SRE }, at);
    assert_eq!(breaker.ratio(at), 60.0 / 241.0);
    assert_eq!(buckets(&breaker, now), buckets(&twin, now));
    assert_eq!(breaker.history(now), twin.history(now));
    assert_eq!(
        (breaker.accepts, breaker.total, breaker.runs),
        (twin.accepts, twin.total, twin.runs)
    );
    // A draw between the two ratios: the old policy refuses it, the new one does not.
    assert!(twin.clone().allow(at, 0.3).is_none());
    assert!(breaker.allow(at, 0.3).is_some());
    assert_eq!(breaker.sre().k, 1.75);
}

#[test]
fn retuning_away_and_back_changes_nothing() {
    let mut breaker = SreBreaker::new(SRE, ms(0));
    let mut twin = breaker.clone();
    let mut walk = crate::internal::walk::Walk::new();
    for step in 0..5_000u64 {
        let (now, x) = walk.step();
        let at = ms(now);
        if step % 97 == 0 {
            // Constants only, then the same policy, neither of which reads the clock.
            breaker.retune(
                Sre {
                    k: 9.0,
                    probe: Duration::ZERO,
                    window: SRE.window + Duration::from_nanos(39),
                    ..SRE
                },
                at + ms(10_000),
            );
            breaker.retune(SRE, at + ms(10_000));
            breaker.retune(SRE, at + ms(10_000));
        }
        let draw = (x >> 11) as f64 / (1u64 << 53) as f64;
        assert_eq!(breaker.ratio(at), twin.ratio(at), "step {step}");
        match (breaker.allow(at, draw), twin.allow(at, draw)) {
            (Some(a), Some(b)) if x & 1 == 0 => {
                breaker.fail(a, at);
                twin.fail(b, at);
            }
            (Some(a), Some(b)) => {
                breaker.pass(a, at);
                twin.pass(b, at);
            }
            (None, None) => {}
            _ => panic!("the two breakers disagree at step {step}"),
        }
    }
}

#[test]
fn a_new_window_moves_every_outcome_into_its_first_bucket() {
    let (mut breaker, now) = with_buckets(&[(10, 0, 0), (0, 0, 4), (0, 30, 0), (0, 20, 0)]);
    let before = breaker.history(now);
    assert_eq!((before.accepts, before.total, before.failing), (10, 64, 2));
    let sre = Sre {
        size: 10,
        window: Duration::from_secs(5),
        ..SRE
    };
    breaker.retune(sre, Duration::from_nanos(now));
    let mut expected = [Tally::default(); 10];
    expected[9] = Tally {
        total: 64,
        success: 10,
        failure: 50,
        drop: 4,
    };
    assert_eq!(buckets(&breaker, now), expected);
    // The one bucket holds successes and failures: both runs start again at 0.
    let after = breaker.history(now);
    assert_eq!(
        after,
        History {
            accepts: 10,
            total: 64,
            working: 0,
            failing: 0
        }
    );
    assert_eq!(breaker.ratio(Duration::from_nanos(now)), 44.0 / 65.0);
    // The kept outcomes leave together, one new window after the retune.
    let gone = now + nanos(Duration::from_secs(5));
    assert_eq!(breaker.history(gone - 1).total, 64);
    assert_eq!(breaker.history(gone).total, 0);
    assert_eq!(breaker.ratio(Duration::from_nanos(gone)), 0.0);
}

#[test]
fn a_new_window_keeps_a_failing_run_of_one_bucket() {
    let (mut breaker, now) = with_buckets(&[(0, 10, 0), (0, 10, 0), (0, 0, 3), (0, 10, 0)]);
    assert_eq!(breaker.history(now).failing, 3);
    breaker.retune(Sre { size: 20, ..SRE }, Duration::from_nanos(now));
    assert_eq!(
        breaker.runs,
        Runs {
            failing: 1,
            working: 0,
            succeeded: 0,
            failed: 1
        }
    );
    assert_eq!(breaker.history(now).failing, 1);
    let (mut working, now) = with_buckets(&[(5, 0, 0), (5, 0, 2)]);
    working.retune(Sre { size: 3, ..SRE }, Duration::from_nanos(now));
    assert_eq!((working.runs.working, working.history(now).working), (1, 1));
}

#[test]
fn rebuilding_the_window_reads_a_clock_going_backwards_as_the_latest_seen() {
    let (mut breaker, now) = with_buckets(&[(0, 100, 0)]);
    let later = Duration::from_nanos(now) + ms(100);
    assert!(breaker.allow(later, 0.0).is_none());
    breaker.retune(Sre { size: 8, ..SRE }, ms(0));
    assert_eq!(breaker.window.newest().0, nanos(later));
    assert_eq!(breaker.history(nanos(later)).total, 101);
    // The new window opened at the latest reading, not at zero.
    assert_eq!(breaker.history(nanos(later + SRE.window) - 1).total, 101);
}

#[test]
fn the_probe_keeps_its_clock_across_a_retune() {
    let (mut breaker, now) = with_buckets(&[(0, 100, 0)]);
    let now = Duration::from_nanos(now);
    assert!(breaker.allow(now, 0.999).is_some(), "sets the probe clock");
    let sre = Sre {
        size: 7,
        window: Duration::from_secs(30),
        ..SRE
    };
    breaker.retune(sre, now + ms(500));
    assert!(breaker.allow(now + SRE.probe, 0.0).is_none());
    assert!(
        breaker
            .allow(now + SRE.probe + Duration::from_nanos(1), 0.0)
            .is_some()
    );
}

#[test]
fn hostile_sizes_and_windows_retune_without_panicking() {
    let (mut breaker, now) = with_buckets(&[(3, 40, 1), (0, 9, 0)]);
    let at = Duration::from_nanos(now);
    for (size, window) in [
        (usize::MAX, Duration::MAX),
        (0, Duration::ZERO),
        (1 << 61, Duration::from_nanos(3)),
        (40, Duration::MAX),
        (1, Duration::ZERO),
    ] {
        breaker.retune(
            Sre {
                size,
                window,
                ..SRE
            },
            at,
        );
        assert!(breaker.window.fits(size, window));
        let history = breaker.history(nanos(at));
        assert_eq!(
            (history.accepts, history.total),
            (3, 53),
            "{size} {window:?}"
        );
        let ratio = breaker.ratio(at);
        assert!((0.0..=1.0).contains(&ratio));
    }
    breaker.retune(SRE, Duration::MAX);
    assert!(breaker.allow(Duration::MAX, 0.5).is_some());
}

#[test]
fn the_kept_totals_and_runs_match_a_scan_across_retunes() {
    let policies = [
        SRE,
        Sre { size: 3, ..SRE },
        Sre {
            size: 100,
            window: Duration::from_secs(3),
            ..SRE
        },
        Sre { k: 1.2, ..SRE },
        Sre {
            size: 1,
            window: Duration::from_millis(700),
            ..SRE
        },
    ];
    let mut breaker = SreBreaker::new(SRE, ms(0));
    let mut walk = crate::internal::walk::Walk::new();
    for step in 0..20_000u64 {
        let (now, x) = walk.step();
        let at = ms(now);
        if step % 333 == 0 {
            let sre = policies[(x >> 40) as usize % policies.len()];
            breaker.retune(sre, at);
        }
        let draw = (x >> 11) as f64 / (1u64 << 53) as f64;
        if let Some(permit) = breaker.allow(at, draw) {
            let settled = match (step / 700) % 3 {
                0 => breaker.fail(permit, at),
                1 => breaker.pass(permit, at),
                _ if x & 1 == 0 => breaker.fail(permit, at),
                _ => breaker.pass(permit, at),
            };
            assert!(settled.is_none());
        }
        let latest = breaker.clock.get();
        breaker.roll(latest);
        let history = breaker.history(latest);
        assert_eq!(
            History {
                accepts: breaker.accepts,
                total: breaker.total,
                working: breaker.runs.working,
                failing: breaker.runs.failing
            },
            history,
            "step {step}"
        );
    }
}

// The reason a refusal gives is the numbers the decision used: go-zero
// googlebreaker_test.go's history cases, refused with a draw of 0.
#[test]
fn a_refusal_gives_the_numbers_of_the_worked_drop_ratios() {
    // (buckets oldest first, accepts, total, failing, working, drop)
    type Case = (std::vec::Vec<(u64, u64, u64)>, u64, u64, usize, usize, f64);
    let cases: [Case; 4] = [
        (std::vec![(0, 100, 0)], 0, 100, 1, 0, 0.9405940594059405),
        (
            std::vec![(100, 100, 0)],
            100,
            200,
            0,
            0,
            0.22388059701492538,
        ),
        (
            repeat(10, (0, 10, 0))
                .chain(repeat(4, (10, 0, 0)))
                .collect(),
            40,
            140,
            0,
            4,
            0.4787234042553192,
        ),
        (
            repeat(1, (100, 0, 0))
                .chain(repeat(20, (0, 10, 0)))
                .collect(),
            100,
            300,
            20,
            0,
            0.5481727574750831,
        ),
    ];
    for (buckets, accepts, total, failing, working, drop) in cases {
        let (mut breaker, now) = with_buckets(&buckets);
        let now = Duration::from_nanos(now);
        let reason = breaker.check(now, 0.0).expect_err("a draw of 0 is refused");
        // k decays from 1.5 towards 1.1 by the failing run, over the 40 buckets.
        let k = 1.5 - (1.5 - 1.1) * failing as f64 / 40.0;
        assert_eq!(
            reason,
            SreReason {
                total,
                accepts,
                failing,
                working,
                k,
                drop,
                roll: 0.0,
            },
            "{buckets:?}"
        );
        // The refusal was recorded after the reason was read.
        assert_eq!(breaker.history(nanos(now)).total, total + 1);
    }
}

#[test]
fn a_refusal_gives_the_draw_as_clamped_and_the_ratio_it_fell_under() {
    let (mut breaker, now) = with_buckets(&[(0, 100, 0)]);
    let now = Duration::from_nanos(now);
    for (roll, read) in [(f64::NAN, 0.0), (-3.0, 0.0), (0.5, 0.5)] {
        let ratio = breaker.ratio(now);
        let reason = breaker.check(now, roll).expect_err("under the ratio");
        assert_eq!((reason.roll, reason.drop), (read, ratio));
        assert!(reason.roll < reason.drop);
    }
    assert!(breaker.check(now, 1.0).is_ok(), "1 reads as just below 1");
}

#[test]
fn a_refusal_during_a_run_of_successes_gives_the_eased_drop() {
    let (mut breaker, now) =
        with_buckets(&[(0, 100, 0), (0, 0, 0), (5, 0, 0), (0, 0, 3), (5, 0, 0)]);
    let history = breaker.history(now);
    let eased = breaker.weigh(&history).drop(history.total) * (38.0 / 40.0);
    let reason = breaker
        .check(Duration::from_nanos(now), 0.0)
        .expect_err("a draw of 0 is refused");
    assert_eq!((reason.working, reason.failing), (2, 0));
    assert_eq!((reason.accepts, reason.total, reason.k), (10, 113, 1.5));
    assert_eq!(reason.drop, eased);
}

#[test]
fn the_throttle_worked_out_once_weighs_each_total_as_check_does() {
    // A working run eases the drop (a scale below 1), a failing run decays `k`, and an
    // infinite `k` turns the throttle off: each weighed once, then over growing totals.
    let eased = [(0, 100, 0), (0, 0, 0), (5, 0, 0), (0, 0, 3), (5, 0, 0)];
    let failing = [(0, 60, 0), (0, 60, 0), (0, 60, 0)];
    for (buckets, k) in [
        (&eased[..], 1.5),
        (&failing[..], 1.5),
        (&failing[..], f64::INFINITY),
    ] {
        let (mut breaker, now) = with_buckets(buckets);
        let sre = Sre {
            k,
            probe: Duration::from_secs(3600),
            ..*breaker.sre()
        };
        breaker.retune(sre, Duration::from_nanos(now));
        let history = breaker.history(now);
        let throttle = sre.throttle(history.accepts, history.failing, history.working);
        assert_eq!(throttle.scale == 1.0, history.working == 0);
        let mut refused = 0;
        for i in 0..50u64 {
            let roll = (i % 10) as f64 / 10.0;
            let total = breaker.history(now).total;
            let weighed = throttle.refusal(total, roll);
            refused += usize::from(weighed.is_some());
            assert_eq!(
                weighed,
                breaker.check(Duration::from_nanos(now), roll).err(),
                "{i}"
            );
            assert_eq!(
                weighed,
                sre.refusal(
                    total,
                    history.accepts,
                    history.failing,
                    history.working,
                    roll
                )
            );
        }
        assert_eq!(refused > 0, k.is_finite(), "refusals {refused} with k {k}");
    }
}

#[test]
fn allow_is_check_with_the_reason_discarded() {
    let (mut breaker, now) = with_buckets(&[(0, 100, 0)]);
    let mut twin = breaker.clone();
    let mut at = Duration::from_nanos(now);
    for i in 0..2_000u64 {
        at += ms(i % 7);
        let roll = (i % 100) as f64 / 100.0;
        let (a, b) = (breaker.allow(at, roll), twin.check(at, roll));
        assert_eq!(a.is_some(), b.is_ok(), "call {i}");
        if let (Some(a), Ok(b)) = (a, b) {
            breaker.fail(a, at);
            twin.fail(b, at);
        }
    }
    assert_eq!(breaker.ratio(at), twin.ratio(at));
}

/// What a fresh `check` at `now` would find on its first test: whether the window's totals,
/// with `k` at its floor, put the drop at or below zero.
fn first_test_passes(breaker: &SreBreaker) -> bool {
    breaker.throttled(breaker.constants.floor) <= 0.0
}

#[test]
fn a_fresh_breaker_is_healthy_until_its_first_bucket_ends() {
    let breaker = SreBreaker::new(SRE, ms(1_000));
    assert_eq!(breaker.healthy_until(), Some(ms(1_250)));
    // A window of one bucket of the whole width.
    let one = SreBreaker::new(Sre { size: 1, ..SRE }, ms(0));
    assert_eq!(one.healthy_until(), Some(Duration::from_secs(10)));
}

// The promise of `healthy_until`: from any window it answers `Some` for, any number of
// successes keeps the first test of `check` passing, so a call is let through unweighed.
#[test]
fn successes_never_end_the_healthy_answer() {
    let mut healthy = 0;
    for buckets in WINDOWS {
        for sre in [
            SRE,
            Sre { floor: 1.0, ..SRE },
            Sre {
                k: 1.0,
                floor: 1.0,
                protection: 0.3,
                ..SRE
            },
        ] {
            let (mut breaker, now) = with_policy(sre, buckets);
            breaker.roll(now);
            let Some(end) = breaker.healthy_until() else {
                continue;
            };
            assert!(first_test_passes(&breaker), "{buckets:?}");
            let end = nanos(end);
            for n in [1, 2, 7, 1_000, 1 << 20, 1 << 40] {
                let mut more = breaker.clone();
                more.record(Outcome::Success, n, Duration::from_nanos(end - 1));
                assert!(first_test_passes(&more), "{buckets:?} + {n}");
                assert!(more.check(Duration::from_nanos(end - 1), 0.0).is_ok());
            }
            healthy += 1;
        }
    }
    assert!(healthy >= 6, "only {healthy} healthy windows tried");
}

#[test]
fn a_throttling_window_or_a_floor_below_one_is_not_certainly_healthy() {
    let (mut breaker, now) = with_buckets(&[(0, 100, 0)]);
    breaker.roll(now);
    assert_eq!(breaker.healthy_until(), None);
    // Exactly on the line (no protection, one accept per call, a floor of 1): the drop is 0
    // and the call goes through, but the margin against rounding is not there.
    let mut line = SreBreaker::new(
        Sre {
            k: 1.0,
            floor: 1.0,
            protection: 0.0,
            ..SRE
        },
        ms(0),
    );
    line.record(Outcome::Success, 10, ms(0));
    assert!(first_test_passes(&line));
    assert_eq!(line.healthy_until(), None);
    // Below a floor of 1 each success raises the drop a little: never certain.
    let low = SreBreaker::new(Sre { floor: 0.9, ..SRE }, ms(0));
    assert!(first_test_passes(&low));
    assert_eq!(low.healthy_until(), None);
}

// Edge cases: an infinite or NaN constant turns the throttle off, and a protection past any
// count covers failures too; either is healthy to the end of every bucket.
#[test]
fn a_throttle_that_is_off_is_always_healthy_until_the_bucket_ends() {
    for value in [f64::NAN, f64::INFINITY, 1e300] {
        for (field, sre) in each_constant(value) {
            if field != "protection" && value == 1e300 {
                continue;
            }
            let mut breaker = SreBreaker::new(sre, ms(0));
            for _ in 0..50 {
                let permit = breaker.allow(ms(10), 0.0).expect("the throttle is off");
                breaker.fail(permit, ms(10));
            }
            assert_eq!(breaker.healthy_until(), Some(ms(250)), "{field} {value}");
        }
    }
}

// Edge cases: a bucket ending past the end of the clock saturates there, and a total too
// large to convert exactly gives no answer rather than a wrong one.
#[test]
fn the_healthy_answer_saturates_and_stops_at_inexact_totals() {
    let far = SreBreaker::new(SRE, Duration::MAX);
    assert_eq!(far.healthy_until(), Some(Duration::from_nanos(u64::MAX)));
    let mut huge = SreBreaker::new(SRE, ms(0));
    huge.record(Outcome::Success, u64::MAX, ms(0));
    assert_eq!((huge.total, huge.accepts), (u64::MAX, u64::MAX));
    assert_eq!(huge.healthy_until(), None);
    assert!(first_test_passes(&huge));
}

#[test]
fn recording_many_is_settling_each() {
    let (mut many, now) = with_buckets(&[(3, 1, 0), (0, 4, 2)]);
    let mut each = many.clone();
    let later = Duration::from_nanos(now) + ms(700);
    many.record(Outcome::Success, 5, later);
    for _ in 0..5 {
        let permit = each.permit();
        assert!(each.pass(permit, later).is_none());
    }
    assert_eq!(buckets(&many, nanos(later)), buckets(&each, nanos(later)));
    assert_eq!(
        (many.accepts, many.total, many.runs),
        (each.accepts, each.total, each.runs)
    );
    assert_eq!(many.clock, each.clock);
    // None at all only moves the clock, as a call let through does.
    let mut none = each.clone();
    none.record(Outcome::Success, 0, later + ms(1));
    assert_eq!(none.clock.get(), nanos(later + ms(1)));
    assert_eq!(buckets(&none, nanos(later)), buckets(&each, nanos(later)));
}

#[test]
fn recording_many_failures_or_drops_is_recording_each() {
    for outcome in [Outcome::Failure, Outcome::Drop] {
        let (mut many, now) = with_buckets(&[(3, 0, 0), (2, 0, 1)]);
        let mut each = many.clone();
        let at = Duration::from_nanos(now) + ms(10);
        many.record(outcome, 4, at);
        for _ in 0..4 {
            each.add(nanos(at), outcome);
        }
        assert_eq!(
            buckets(&many, nanos(at)),
            buckets(&each, nanos(at)),
            "{outcome:?}"
        );
        assert_eq!(
            (many.accepts, many.total, many.runs),
            (each.accepts, each.total, each.runs)
        );
        assert_eq!(many.ratio(at), each.ratio(at));
    }
}
