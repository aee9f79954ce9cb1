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
        let shed = Shed { size, window, cpu: threshold, latency, beta, cool, floor };
        let mut shedder = Shedder::new(shed, calls[0].0);
        let mut admitted = 0u64;
        for (now, cpu, ok) in calls {
            match shedder.allow(now, cpu) {
                Some(ticket) => {
                    admitted += 1;
                    if ok { shedder.pass(ticket, now) } else { shedder.fail(ticket) }
                }
                None => prop_assert!(!beta.is_nan(), "a NaN beta shed a call"),
            }
            prop_assert!(shedder.average().is_finite() && shedder.average() >= 0.0);
        }
        prop_assert_eq!(shedder.flying(), 0);
        prop_assert!(admitted >= 1, "the first call always finds nothing in flight");
    }
}
