//! Properties of `SharedGate` on one thread, against its `&mut` twin: `Gate`.

use ironward::{Gate, SharedGate};
use proptest::prelude::*;

/// One call on both gates.
#[derive(Debug, Clone, Copy)]
enum Op {
    Enter,
    Check,
    Leave,
    Retune(u32),
}

/// Limits as the gate's own tests pick them: small ones that fill, and the hostile extremes.
fn limits() -> impl Strategy<Value = u32> {
    prop_oneof![4 => 0..6_u32, 1 => Just(0), 1 => Just(u32::MAX), 1 => any::<u32>()]
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(
        prop_oneof![
            4 => Just(Op::Enter),
            4 => Just(Op::Check),
            // More leaves than a full gate needs, so that many have nobody to give back.
            4 => Just(Op::Leave),
            1 => limits().prop_map(Op::Retune),
        ],
        0..300,
    )
}

proptest! {
    // Any run of enters, checks, leaves (with or without anyone inside) and retunes: the
    // shared gate answers every call as `Gate` does, reasons included, and holds the same
    // count and limit after each.
    #[test]
    fn decides_exactly_as_gate_on_one_thread(limit in limits(), ops in ops()) {
        let shared = SharedGate::new(limit);
        let mut gate = Gate::new(limit);
        for (step, op) in ops.into_iter().enumerate() {
            match op {
                Op::Enter => prop_assert_eq!(shared.enter(), gate.enter(), "step {}", step),
                Op::Check => prop_assert_eq!(shared.check(), gate.check(), "step {}", step),
                Op::Leave => {
                    shared.leave();
                    gate.leave();
                }
                Op::Retune(to) => {
                    let was = gate.limit();
                    gate.retune(to);
                    prop_assert_eq!(shared.retune(to), was, "step {}", step);
                }
            }
            prop_assert_eq!(
                (shared.held(), shared.limit()),
                (gate.held(), gate.limit()),
                "step {}", step
            );
        }
    }
}
