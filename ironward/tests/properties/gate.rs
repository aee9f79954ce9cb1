//! Properties of `gate`, against a naive model: a plain counter.

use ironward::Gate;
use proptest::prelude::*;

proptest! {
    // Any run of enters and leaves: the gate answers as a counter with a ceiling would, and
    // never holds more than its limit nor less than zero.
    #[test]
    fn matches_a_counter_and_never_holds_more_than_the_limit(
        limit in prop_oneof![4 => 0..6_u32, 1 => Just(u32::MAX), 1 => any::<u32>()],
        ops in prop::collection::vec(any::<bool>(), 0..200),
    ) {
        let mut gate = Gate::new(limit);
        let mut held = 0_u64;
        for enter in ops {
            if enter {
                let room = held < u64::from(limit);
                if room {
                    held += 1;
                }
                prop_assert_eq!(gate.enter(), room);
            } else {
                held = held.saturating_sub(1);
                gate.leave();
            }
            prop_assert_eq!(u64::from(gate.held()), held);
            prop_assert!(gate.held() <= gate.limit());
        }
    }

    // Enters, leaves and retunes: the gate answers as a counter whose ceiling can move. A
    // lower limit turns nobody out and admits nobody until enough have left; the count never
    // grows past the larger of the limit and what was held when the limit was set.
    #[test]
    fn retuning_keeps_the_holders_and_a_lower_limit_admits_nobody_until_enough_leave(
        limit in prop_oneof![4 => 0..6_u32, 1 => Just(u32::MAX)],
        ops in prop::collection::vec(
            prop_oneof![
                3 => Just(None),
                1 => prop_oneof![4 => 0..6_u32, 1 => Just(u32::MAX), 1 => any::<u32>()].prop_map(Some),
            ],
            0..200,
        ),
        enters in prop::collection::vec(any::<bool>(), 200),
    ) {
        let mut gate = Gate::new(limit);
        let (mut held, mut limit, mut ceiling) = (0_u64, u64::from(limit), u64::from(limit));
        for (op, enter) in ops.into_iter().zip(enters) {
            match op {
                Some(retuned) => {
                    let twin = gate.clone();
                    gate.retune(retuned);
                    prop_assert_eq!(gate.held(), twin.held());
                    limit = u64::from(retuned);
                    ceiling = limit.max(held);
                }
                None if enter => {
                    let room = held < limit;
                    if room {
                        held += 1;
                    }
                    prop_assert_eq!(gate.enter(), room);
                }
                None => {
                    held = held.saturating_sub(1);
                    ceiling = ceiling.min(limit.max(held));
                    gate.leave();
                }
            }
            prop_assert_eq!(u64::from(gate.held()), held);
            prop_assert_eq!(u64::from(gate.limit()), limit);
            prop_assert!(held <= ceiling, "{} held past {}", held, ceiling);
        }
    }
}

proptest! {
    // `enter` is `check` with the reason discarded: twins, one asked through each, decide
    // alike through enters, leaves and retunes. A refusal's reason shows a full gate, its
    // count at or past its limit, both as the gate holds them.
    #[test]
    fn check_decides_as_enter_and_its_reason_shows_a_full_gate(
        limit in prop_oneof![4 => 0..6_u32, 1 => Just(u32::MAX)],
        ops in prop::collection::vec(
            prop_oneof![
                6 => Just(Some(true)),
                3 => Just(Some(false)),
                // A retune, to the next of `limits`.
                1 => Just(None),
            ],
            0..200,
        ),
        limits in prop::collection::vec(prop_oneof![4 => 0..6_u32, 1 => Just(u32::MAX)], 200),
    ) {
        let mut gate = Gate::new(limit);
        let mut twin = gate.clone();
        for (op, retuned) in ops.into_iter().zip(limits) {
            match op {
                Some(true) => match (gate.enter(), twin.check()) {
                    (true, Ok(())) => {}
                    (false, Err(reason)) => {
                        prop_assert!(reason.held >= reason.limit, "{:?}", reason);
                        prop_assert_eq!((reason.held, reason.limit), (twin.held(), twin.limit()));
                    }
                    (a, b) => prop_assert!(false, "enter {}, check {:?}", a, b),
                },
                Some(false) => {
                    gate.leave();
                    twin.leave();
                }
                None => {
                    gate.retune(retuned);
                    twin.retune(retuned);
                }
            }
            prop_assert_eq!(gate.held(), twin.held());
        }
    }
}
