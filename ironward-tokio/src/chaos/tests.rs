//! The shared chaos piece: replay by request number, the dice, refusals, retuning, threads.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use ironward::chaos::{self, Chaos, ChaosError, Delay, Fault, Injection, Injector};

use super::SharedChaos;
use crate::Dice;

/// Every fault, 40 % of calls in all.
fn mixed() -> Chaos {
    Chaos {
        enabled: true,
        shadow: false,
        faults: vec![
            Injection {
                fault: Fault::Error,
                rate: 0.1,
            },
            Injection {
                fault: Fault::Latency(Delay::Uniform {
                    low: Duration::from_millis(10),
                    high: Duration::from_millis(50),
                }),
                rate: 0.1,
            },
            Injection {
                fault: Fault::Abort,
                rate: 0.1,
            },
            Injection {
                fault: Fault::Replace,
                rate: 0.1,
            },
        ],
    }
}

#[test]
fn a_seeded_run_replays_the_cores_decisions_request_by_request() {
    let shared = SharedChaos::new(mixed()).unwrap().with_seed(42);
    let injector = Injector::new(mixed()).unwrap();
    let got: Vec<_> = (0..1000).map(|_| shared.next()).collect();
    let want: Vec<_> = (0..1000)
        .map(|i| injector.decide(chaos::draw(42, i)))
        .collect();
    assert_eq!(got, want);
    // Every fault shows, so the comparison covers each.
    for label in ["error", "latency", "abort", "replace"] {
        assert!(
            got.iter().flatten().any(|i| i.fault.label() == label),
            "{label}"
        );
    }
    // Another seed decides otherwise.
    let other = SharedChaos::new(mixed()).unwrap().with_seed(43);
    assert_ne!((0..1000).map(|_| other.next()).collect::<Vec<_>>(), got);
}

#[test]
fn threads_share_one_count_and_each_number_is_drawn_once() {
    let shared = SharedChaos::new(mixed()).unwrap().with_seed(7);
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let shared = shared.clone();
            std::thread::spawn(move || (0..500).filter(|_| shared.next().is_some()).count())
        })
        .collect();
    let injected: usize = handles.into_iter().map(|h| h.join().unwrap()).sum();
    assert_eq!(shared.requests(), 2000);
    let injector = Injector::new(mixed()).unwrap();
    let want = (0..2000)
        .filter(|&i| injector.decide(chaos::draw(7, i)).is_some())
        .count();
    assert_eq!(injected, want);
}

#[test]
fn unseeded_it_rolls_the_dice_once_a_request() {
    let rolls = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&rolls);
    let script = [0.05, 0.5, 0.35];
    let dice = Dice::from_fn(move || script[counted.fetch_add(1, Ordering::Relaxed) % 3]);
    let shared = SharedChaos::new(mixed()).unwrap().with_dice(dice);
    let faults: Vec<_> = (0..3).map(|_| shared.next().map(|i| i.fault)).collect();
    assert_eq!(faults, vec![Some(Fault::Error), None, Some(Fault::Replace)]);
    assert_eq!(rolls.load(Ordering::Relaxed), 3);
}

#[test]
fn shadow_reports_every_fault_marked_and_disabled_decides_none() {
    let shadow = SharedChaos::new(Chaos {
        shadow: true,
        ..mixed()
    })
    .unwrap()
    .with_seed(42);
    let injector = Injector::new(mixed()).unwrap();
    for i in 0..500 {
        let want = injector.decide(chaos::draw(42, i));
        let got = shadow.next();
        assert_eq!(got.map(|g| g.fault), want.map(|w| w.fault));
        assert!(got.is_none_or(|g| g.shadow));
    }
    let off = SharedChaos::new(Chaos {
        enabled: false,
        ..mixed()
    })
    .unwrap()
    .with_seed(42);
    assert!((0..500).all(|_| off.next().is_none()));
    assert_eq!(off.requests(), 500, "every request is numbered, off or on");
}

#[test]
fn a_bad_policy_is_refused_with_the_cores_reason() {
    let with = |fault, rate| Chaos {
        enabled: true,
        shadow: false,
        faults: vec![Injection { fault, rate }],
    };
    assert_eq!(
        SharedChaos::new(with(Fault::Error, -0.1)).unwrap_err(),
        ChaosError::Rate {
            index: 0,
            rate: -0.1
        }
    );
    assert!(matches!(
        SharedChaos::new(with(Fault::Error, f64::NAN)),
        Err(ChaosError::Rate { index: 0, .. })
    ));
    let reversed = Fault::Latency(Delay::Uniform {
        low: Duration::from_secs(2),
        high: Duration::from_secs(1),
    });
    assert_eq!(
        SharedChaos::new(with(reversed, 0.5)).unwrap_err(),
        ChaosError::Delay { index: 0 }
    );
    let mut over = mixed();
    over.faults[0].rate = 0.9;
    assert!(matches!(
        SharedChaos::new(over.clone()),
        Err(ChaosError::Total { .. })
    ));
    // A refused retune keeps the policy in force and the count.
    let shared = SharedChaos::new(mixed()).unwrap().with_seed(1);
    let _ = shared.next();
    assert!(matches!(shared.retune(over), Err(ChaosError::Total { .. })));
    assert_eq!((shared.policy(), shared.requests()), (mixed(), 1));
}

#[test]
fn a_retune_keeps_the_request_numbers() {
    let shared = SharedChaos::new(Chaos::default()).unwrap().with_seed(9);
    assert!((0..10).all(|_| shared.next().is_none()));
    shared.retune(mixed()).unwrap();
    let injector = Injector::new(mixed()).unwrap();
    for i in 10..200 {
        assert_eq!(shared.next(), injector.decide(chaos::draw(9, i)));
    }
}

#[test]
fn renaming_keeps_the_policy_and_debug_never_draws() {
    let dice = Dice::from_fn(|| panic!("Debug must not roll"));
    let shared = SharedChaos::new(mixed())
        .unwrap()
        .with_dice(dice)
        .with_name("payments");
    assert_eq!((shared.name(), shared.policy()), ("payments", mixed()));
    let debug = format!("{shared:?}");
    assert!(
        debug.contains("payments") && debug.contains("requests: 0"),
        "{debug}"
    );
}

#[cfg(feature = "metrics")]
#[test]
fn each_fault_counts_under_its_label_and_shadow() {
    use metrics_util::debugging::DebuggingRecorder;

    let recorder = DebuggingRecorder::new();
    let (live, shadow) = metrics::with_local_recorder(&recorder, || {
        let live = SharedChaos::new(mixed())
            .unwrap()
            .with_seed(42)
            .with_name("live");
        let shadow = SharedChaos::new(Chaos {
            shadow: true,
            ..mixed()
        })
        .unwrap()
        .with_seed(42)
        .with_name("dry");
        let live: Vec<_> = (0..1000).filter_map(|_| live.next()).collect();
        let shadow: Vec<_> = (0..1000).filter_map(|_| shadow.next()).collect();
        (live, shadow)
    });
    let seen = crate::meter::tests::series(&recorder);
    let mut want = Vec::new();
    for (name, flag, faults) in [("dry", "true", &shadow), ("live", "false", &live)] {
        for label in ["abort", "error", "latency", "replace"] {
            let n = faults.iter().filter(|i| i.fault.label() == label).count() as u64;
            assert!(n > 0);
            want.push((
                format!("ironward.chaos.injected{{name={name},fault={label},shadow={flag}}}"),
                n,
            ));
        }
    }
    want.sort();
    assert_eq!(seen, want);
}

#[test]
fn injected_and_shadowed_count_the_cores_faults_apart_and_the_seed_is_read_back() {
    let injector = Injector::new(mixed()).unwrap();
    let faults = (0..1000)
        .filter(|&i| injector.decide(chaos::draw(5, i)).is_some())
        .count() as u64;
    assert!(faults > 300, "{faults} of 1000 at 40 %");

    let live = SharedChaos::new(mixed()).unwrap().with_seed(5);
    let dry = SharedChaos::new(Chaos {
        shadow: true,
        ..mixed()
    })
    .unwrap()
    .with_seed(5);
    for _ in 0..1000 {
        let _ = (live.next(), dry.next());
    }
    assert_eq!((live.injected(), live.shadowed()), (faults, 0));
    assert_eq!((dry.injected(), dry.shadowed()), (0, faults));
    assert_eq!((live.seed(), live.requests()), (Some(5), 1000));

    // A new seed, or a name, counts afresh; dice have no seed.
    let reseeded = live.clone().with_seed(6);
    assert_eq!((reseeded.injected(), reseeded.seed()), (0, Some(6)));
    assert_eq!(SharedChaos::new(mixed()).unwrap().seed(), None);
    // Off, nothing is counted however many requests ask.
    let off = SharedChaos::new(Chaos::default()).unwrap();
    for _ in 0..100 {
        assert_eq!(off.next(), None);
    }
    assert_eq!(
        (off.injected(), off.shadowed(), off.requests()),
        (0, 0, 100)
    );
}
