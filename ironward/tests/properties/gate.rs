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
}
