//! Properties of `Shedder`: the count in flight matches a counter, an empty or cool server
//! refuses nothing, and hostile input never panics.

use core::time::Duration;

use ironward::{SHED, Shed, Shedder, Ticket};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Allow { at: u64, cpu: u32 },
    Pass { which: usize, at: u64 },
    Fail { which: usize },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0..10_000u64, prop_oneof![0..1000u32, 850..=1000u32, Just(u32::MAX)])
            .prop_map(|(at, cpu)| Op::Allow { at, cpu }),
        2 => (any::<usize>(), 0..10_000u64).prop_map(|(which, at)| Op::Pass { which, at }),
        1 => any::<usize>().prop_map(|which| Op::Fail { which }),
    ]
}

/// A policy to retune to: mostly buckets of 50 or 100 ms (the preset's width, so that a new
/// count keeps the buckets), sometimes any size and window at all, with hostile constants.
fn policy() -> impl Strategy<Value = Shed> {
    (
        prop_oneof![1 => Just(0usize), 10 => 1..80usize, 1 => Just(usize::MAX)],
        prop_oneof![
            4 => prop::sample::select(vec![50u64, 100]).prop_map(Some),
            1 => Just(None),
        ],
        prop_oneof![
            1 => any::<u64>().prop_map(Duration::from_nanos),
            1 => Just(Duration::ZERO),
            1 => Just(Duration::MAX),
        ],
        prop_oneof![Just(0u32), 850..=1000u32, Just(u32::MAX)],
        prop_oneof![Just(f64::NAN), Just(-1.0), 0.0..1.0f64, Just(2.0)],
        prop_oneof![
            Just(Duration::ZERO),
            Just(Duration::MAX),
            (0..2_000u64).prop_map(Duration::from_millis)
        ],
    )
        .prop_map(|(size, width, any, cpu, beta, cool)| {
            // Whole buckets of `width` ms where one was drawn, else the hostile window.
            let window = width.map_or(any, |ms| {
                Duration::from_millis(ms) * size.clamp(1, 80) as u32
            });
            Shed {
                size,
                window,
                cpu,
                beta,
                cool,
                ..SHED
            }
        })
}

proptest! {
    /// Calls in flight are exactly those let through and not yet settled; with nothing in
    /// flight, or a CPU under the threshold and no refusal yet, every call is let through.
    #[test]
    fn flight_matches_a_counter_and_refusals_need_load_and_heat(
        ops in prop::collection::vec(op(), 1..300),
    ) {
        let ms = Duration::from_millis;
        let mut shedder = Shedder::new(SHED, Duration::ZERO);
        let mut open: Vec<Ticket> = Vec::new();
        let mut refused_ever = false;
        for op in ops {
            match op {
                Op::Allow { at, cpu } => {
                    let empty = shedder.flying() == 0;
                    let cool = cpu.min(1000) < SHED.cpu && !refused_ever;
                    match shedder.allow(ms(at), cpu) {
                        Some(ticket) => open.push(ticket),
                        None => {
                            prop_assert!(!empty, "refused with nothing in flight");
                            prop_assert!(!cool, "refused on a cool CPU that never refused");
                            refused_ever = true;
                        }
                    }
                }
                Op::Pass { which, at } if !open.is_empty() => {
                    let ticket = open.swap_remove(which % open.len());
                    shedder.pass(ticket, ms(at));
                }
                Op::Fail { which } if !open.is_empty() => {
                    let ticket = open.swap_remove(which % open.len());
                    shedder.fail(ticket);
                }
                _ => {}
            }
            prop_assert_eq!(shedder.flying(), open.len() as u64);
            prop_assert!(shedder.average() >= 0.0);
        }
    }

    /// No policy, CPU reading or clock reading panics; the moving average stays finite and
    /// not negative whatever `beta`, and a NaN `beta` never sheds (the crate docs' "Edge
    /// cases").
    #[test]
    fn hostile_input_never_panics(
        size in prop_oneof![Just(0usize), 1..80usize, Just(usize::MAX)],
        window in prop_oneof![Just(Duration::ZERO), Just(Duration::MAX), any::<u64>().prop_map(Duration::from_nanos)],
        threshold in prop_oneof![Just(0u32), Just(1000), Just(u32::MAX), any::<u32>()],
        latency in prop_oneof![Just(Duration::ZERO), Just(Duration::MAX), any::<u64>().prop_map(Duration::from_nanos)],
        beta in prop_oneof![Just(f64::NAN), Just(f64::INFINITY), Just(f64::NEG_INFINITY), Just(-1.0), any::<f64>(), 0.0..1.0f64],
        cool in prop_oneof![Just(Duration::ZERO), Just(Duration::MAX), any::<u64>().prop_map(Duration::from_nanos)],
        floor in prop_oneof![Just(f64::NAN), Just(f64::INFINITY), Just(f64::NEG_INFINITY), Just(-1.0), any::<f64>(), 0.0..1.0f64],
        calls in prop::collection::vec((
            prop_oneof![Just(Duration::ZERO), Just(Duration::MAX), any::<u64>().prop_map(Duration::from_nanos)],
            any::<u32>(),
            any::<bool>(),
        ), 1..80),
    ) {
        let shed = Shed { size, window, cpu: threshold, latency, beta, cool, floor, shares: ironward::SHARES };
        let mut shedder = Shedder::new(shed, calls[0].0);
        let mut admitted = 0u64;
        for (now, cpu, ok) in calls {
            match shedder.allow(now, cpu) {
                Some(ticket) => {
                    admitted += 1;
                    let settled = if ok { shedder.pass(ticket, now) } else { shedder.fail(ticket) };
                    prop_assert!(settled.is_none());
                }
                None => prop_assert!(!beta.is_nan(), "a NaN beta shed a call"),
            }
            prop_assert!(shedder.average().is_finite() && shedder.average() >= 0.0);
        }
        prop_assert_eq!(shedder.flying(), 0);
        prop_assert!(admitted >= 1, "the first call always finds nothing in flight");
    }

    /// Retuning to the policy the shedder runs, or to other constants over the same buckets
    /// and straight back, changes nothing: every later decision, count in flight and
    /// moving average is the un-retuned twin's, a clock going backwards included.
    #[test]
    fn retuning_to_the_same_policy_changes_nothing(
        ops in prop::collection::vec((op(), prop::option::weighted(0.2, (0..10_000u64, 0..50u64, 0.0..1.0f64, 0..1000u32))), 1..300),
    ) {
        let ms = Duration::from_millis;
        let mut shedder = Shedder::new(SHED, Duration::ZERO);
        let mut twin = shedder.clone();
        let mut open: Vec<(Ticket, Ticket)> = Vec::new();
        for (op, retune) in ops {
            if let Some((at, nanos, beta, cpu)) = retune {
                // Still 50 buckets of 100 ms.
                let window = SHED.window + Duration::from_nanos(nanos);
                let away = Shed { window, beta, cpu, cool: Duration::ZERO, floor: 1.0, ..SHED };
                shedder.retune(away, ms(at));
                shedder.retune(SHED, ms(at));
            }
            match op {
                Op::Allow { at, cpu } => match (shedder.allow(ms(at), cpu), twin.allow(ms(at), cpu)) {
                    (Some(a), Some(b)) => open.push((a, b)),
                    (None, None) => {}
                    (a, _) => prop_assert!(false, "the twins disagree: retuned {:?}", a.is_some()),
                },
                Op::Pass { which, at } if !open.is_empty() => {
                    let (a, b) = open.swap_remove(which % open.len());
                    shedder.pass(a, ms(at));
                    twin.pass(b, ms(at));
                }
                Op::Fail { which } if !open.is_empty() => {
                    let (a, b) = open.swap_remove(which % open.len());
                    shedder.fail(a);
                    twin.fail(b);
                }
                _ => {}
            }
            prop_assert_eq!(shedder.flying(), twin.flying());
            prop_assert_eq!(shedder.average().to_bits(), twin.average().to_bits());
        }
    }

    /// Retunes to any policy, hostile ones included, keep the calls in flight and their
    /// moving average exactly; the count still matches a counter, a refusal still needs
    /// calls in flight, and nothing panics. (Debug builds also check, on every decision,
    /// that the busiest and fastest buckets the shedder keeps match a scan of its window,
    /// rebuilt or not.)
    #[test]
    fn retuning_keeps_the_flight_and_its_average(
        ops in prop::collection::vec((op(), prop::option::weighted(0.1, (0..10_000u64, policy()))), 1..300),
    ) {
        let ms = Duration::from_millis;
        let mut shedder = Shedder::new(SHED, Duration::ZERO);
        let mut open: Vec<Ticket> = Vec::new();
        for (op, retune) in ops {
            if let Some((at, shed)) = retune {
                let (flying, average) = (shedder.flying(), shedder.average());
                shedder.retune(shed, ms(at));
                // As given, NaN included (which `==` would never match).
                prop_assert_eq!(format!("{:?}", shedder.shed()), format!("{:?}", shed));
                prop_assert_eq!(shedder.flying(), flying);
                prop_assert_eq!(shedder.average().to_bits(), average.to_bits());
            }
            match op {
                Op::Allow { at, cpu } => {
                    let empty = shedder.flying() == 0;
                    match shedder.allow(ms(at), cpu) {
                        Some(ticket) => open.push(ticket),
                        None => prop_assert!(!empty, "refused with nothing in flight"),
                    }
                }
                Op::Pass { which, at } if !open.is_empty() => {
                    let ticket = open.swap_remove(which % open.len());
                    shedder.pass(ticket, ms(at));
                }
                Op::Fail { which } if !open.is_empty() => {
                    let ticket = open.swap_remove(which % open.len());
                    shedder.fail(ticket);
                }
                _ => {}
            }
            prop_assert_eq!(shedder.flying(), open.len() as u64);
            prop_assert!(shedder.average().is_finite() && shedder.average() >= 0.0);
        }
    }
}

proptest! {
    /// `allow` is `check` with the reason discarded: twins, one asked through each, decide
    /// alike on every call, under the preset and under retuned policies. A refusal's reason
    /// shows a refusing state: the reading as read, the count in flight and its average both
    /// over the capacity, and exactly one heat, the reading's or the earlier refusal's.
    #[test]
    fn check_decides_as_allow_and_its_reason_shows_a_refusal(
        shed in prop_oneof![3 => Just(SHED), 1 => policy()],
        ops in prop::collection::vec(op(), 1..300),
    ) {
        let ms = Duration::from_millis;
        let mut shedder = Shedder::new(shed, Duration::ZERO);
        let mut twin = shedder.clone();
        let mut open: Vec<(Ticket, Ticket)> = Vec::new();
        for op in ops {
            match op {
                Op::Allow { at, cpu } => {
                    let (flying, average) = (twin.flying(), twin.average());
                    match (shedder.allow(ms(at), cpu), twin.check(ms(at), cpu)) {
                        (Some(a), Ok(b)) => open.push((a, b)),
                        (None, Err(reason)) => {
                            prop_assert_eq!(reason.cpu, cpu.min(1000));
                            prop_assert_eq!((reason.flying, reason.average), (flying, average));
                            prop_assert!(reason.average > reason.capacity, "{:?}", reason);
                            prop_assert!(reason.flying as f64 > reason.capacity, "{:?}", reason);
                            prop_assert!(reason.capacity >= 0.0, "{:?}", reason);
                            prop_assert_eq!(reason.overloaded, reason.cpu >= shed.cpu);
                            prop_assert_ne!(reason.overloaded, reason.cooling);
                        }
                        (a, b) => prop_assert!(false, "allow {:?}, check {:?}", a.is_some(), b.is_ok()),
                    }
                }
                Op::Pass { which, at } if !open.is_empty() => {
                    let (a, b) = open.swap_remove(which % open.len());
                    shedder.pass(a, ms(at));
                    twin.pass(b, ms(at));
                }
                Op::Fail { which } if !open.is_empty() => {
                    let (a, b) = open.swap_remove(which % open.len());
                    shedder.fail(a);
                    twin.fail(b);
                }
                _ => {}
            }
            prop_assert_eq!(shedder.flying(), twin.flying());
            prop_assert_eq!(shedder.average().to_bits(), twin.average().to_bits());
        }
    }
}
