use alloc::string::ToString;
use alloc::vec;

use super::*;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn on(faults: Vec<Injection>) -> Chaos {
    Chaos {
        enabled: true,
        shadow: false,
        faults,
    }
}

fn mixed() -> Injector {
    Injector::new(on(vec![
        Injection {
            fault: Fault::Error,
            rate: 0.01,
        },
        Injection {
            fault: Fault::Latency(Delay::Uniform {
                low: ms(10),
                high: ms(110),
            }),
            rate: 0.05,
        },
        Injection {
            fault: Fault::Abort,
            rate: 0.04,
        },
        Injection {
            fault: Fault::Replace,
            rate: 0.10,
        },
    ]))
    .expect("a valid policy")
}

#[test]
fn the_faults_share_the_unit_interval_in_order() {
    let injector = mixed();
    let fault = |draw| injector.decide(draw).map(|i| (i.index, i.fault.label()));
    assert_eq!(fault(0.0), Some((0, "error")));
    assert_eq!(fault(0.009_999), Some((0, "error")));
    assert_eq!(fault(0.01), Some((1, "latency")));
    assert_eq!(fault(0.059_999), Some((1, "latency")));
    // The shares' ends are sums of rates, rounded as floats add: 0.01 + 0.05 is a hair over
    // 0.06.
    assert_eq!(fault(0.060_001), Some((2, "abort")));
    assert_eq!(fault(0.100_001), Some((3, "replace")));
    assert_eq!(fault(0.199_999), Some((3, "replace")));
    assert_eq!(fault(0.200_001), None);
    assert_eq!(fault(0.999), None);
}

#[test]
fn a_latency_draws_its_delay_from_the_rest_of_the_draw() {
    let injector = mixed();
    // The latency's share is [0.01, 0.06): its start draws the low end, its middle the middle.
    assert_eq!(injector.decide(0.01).unwrap().delay, Some(ms(10)));
    assert_eq!(injector.decide(0.035).unwrap().delay, Some(ms(60)));
    assert!(injector.decide(0.059_999_999).unwrap().delay.unwrap() < ms(110));
    assert_eq!(injector.decide(0.0).unwrap().delay, None);
}

#[test]
fn over_many_requests_each_fault_takes_its_rate() {
    let injector = mixed();
    let mut counts = [0_u32; 5];
    let n = 200_000;
    for index in 0..n {
        let slot = injector.decide(draw(1, index)).map_or(4, |i| i.index);
        counts[slot] += 1;
    }
    for (count, rate) in counts.iter().zip([0.01, 0.05, 0.04, 0.10, 0.80]) {
        let share = f64::from(*count) / n as f64;
        assert!((share - rate).abs() < 0.003, "{counts:?}");
    }
}

#[test]
fn off_decides_nothing_and_shadow_marks_each_decision() {
    let mut policy = mixed().policy().clone();
    policy.enabled = false;
    let off = Injector::new(policy.clone()).unwrap();
    assert!((0..1000).all(|i| off.decide(draw(3, i)).is_none()));
    policy.enabled = true;
    policy.shadow = true;
    let shadow = Injector::new(policy).unwrap();
    let decided = shadow.decide(0.0).expect("decided as if on");
    assert!(decided.shadow);
    assert!(!mixed().decide(0.0).unwrap().shadow);
}

#[test]
fn bad_draws_are_held_to_the_unit_interval() {
    let injector = Injector::new(on(vec![Injection {
        fault: Fault::Abort,
        rate: 0.5,
    }]))
    .unwrap();
    assert!(injector.decide(f64::NAN).is_some(), "NaN reads as 0");
    assert!(injector.decide(-3.0).is_some());
    assert!(injector.decide(1.0).is_none());
    assert!(injector.decide(f64::INFINITY).is_none());
    let all = Injector::new(on(vec![Injection {
        fault: Fault::Error,
        rate: 1.0,
    }]))
    .unwrap();
    assert!(
        all.decide(f64::INFINITY).is_some(),
        "a rate of 1 takes every draw"
    );
}

#[test]
fn bad_policies_are_refused_with_the_reason() {
    let one = |fault, rate| Injector::new(on(vec![Injection { fault, rate }]));
    for rate in [f64::NAN, -0.1, 1.5, f64::INFINITY] {
        match one(Fault::Error, rate) {
            Err(ChaosError::Rate {
                index: 0,
                rate: got,
            }) => {
                assert!(got.is_nan() || got == rate);
            }
            other => panic!("{rate}: {other:?}"),
        }
    }
    let reversed = Fault::Latency(Delay::Uniform {
        low: ms(2),
        high: ms(1),
    });
    assert_eq!(one(reversed, 0.1), Err(ChaosError::Delay { index: 0 }));
    let over = on(vec![
        Injection {
            fault: Fault::Error,
            rate: 0.6,
        },
        Injection {
            fault: Fault::Abort,
            rate: 0.6,
        },
    ]);
    let Err(ChaosError::Total { sum }) = Injector::new(over) else {
        panic!("1.2 in all");
    };
    assert!((sum - 1.2).abs() < 1e-12);
    assert!(
        ChaosError::Total { sum }
            .to_string()
            .contains("add up to 1.2")
    );
    // Rates that add up to 1 but for rounding are 1.
    let whole = on([0.1, 0.2, 0.7]
        .iter()
        .map(|&rate| Injection {
            fault: Fault::Error,
            rate,
        })
        .collect());
    assert!(Injector::new(whole).is_ok());
}

#[test]
fn a_refused_retune_keeps_the_policy_in_force() {
    let mut injector = mixed();
    let before = injector.clone();
    let bad = on(vec![Injection {
        fault: Fault::Error,
        rate: 2.0,
    }]);
    assert!(injector.retune(bad).is_err());
    assert_eq!(injector, before);
}

#[test]
fn delays_hold_at_their_extremes() {
    let wide = Delay::Uniform {
        low: Duration::ZERO,
        high: Duration::MAX,
    };
    assert_eq!(wide.at(0.0), Duration::ZERO);
    assert!(wide.at(0.999_999) <= Duration::MAX);
    assert_eq!(wide.at(f64::NAN), Duration::ZERO);
    let point = Delay::Uniform {
        low: ms(5),
        high: ms(5),
    };
    assert_eq!(point.at(0.7), ms(5));
}

#[test]
fn draws_follow_splitmix64_from_the_seed_and_never_panic() {
    let mut dice = SplitMix64::new(0xC0FFEE);
    for index in 0..1000 {
        assert_eq!(draw(0xC0FFEE, index), dice.roll());
    }
    for (seed, index) in [(0, 0), (u64::MAX, u64::MAX), (1, u64::MAX - 1)] {
        assert!((0.0..1.0).contains(&draw(seed, index)));
    }
    assert_ne!(draw(1, 0), draw(2, 0));
}
