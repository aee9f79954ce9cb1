//! Metered quotas: a cost per request, reservations settled at the actual cost, and several
//! limits decided as one, on `Bucket`, `Sliding` and `Period`, through the public API.
//!
//! The properties check, over random sequences of takes, reservations and settles at random
//! times and costs: that a cost of 1 decides exactly as the methods without a cost do, and
//! the bound each type's docs state for reservations, that the cost charged over any window
//! (any stretch, for a bucket; any period) is at most the quota plus the debts settled in it
//! after its last admission, which with one reservation in flight at a time is at most the
//! quota plus the largest single overshoot (actual minus estimate).

use std::time::Duration;

use ironward::{Bucket, Period, Reservation, Sliding, Usage};
use proptest::prelude::*;

mod costs;
mod reservations;
mod several;

fn ns(n: u64) -> Duration {
    Duration::from_nanos(n)
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// One step of a random sequence.
#[derive(Debug, Clone)]
enum Op {
    /// A take of this cost.
    Take(u32),
    /// A reservation of this estimate, timing out after this many nanoseconds.
    Reserve(u32, u64),
    /// The settle of the reservation in flight at this index (modulo), at this actual cost.
    Settle(usize, u32),
}

/// Costs around a quota of up to 20, with the hostile ones mixed in.
fn cost() -> impl Strategy<Value = u32> {
    prop_oneof![8 => 0..25_u32, 1 => Just(0), 1 => Just(u32::MAX)]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => cost().prop_map(Op::Take),
        3 => (cost(), prop_oneof![0..3_000_u64, Just(u64::MAX)]).prop_map(|(e, t)| Op::Reserve(e, t)),
        3 => (any::<usize>(), cost()).prop_map(|(i, a)| Op::Settle(i, a)),
    ]
}

/// A clock reading: forward by up to 1 000 ns, sometimes back.
fn step() -> impl Strategy<Value = (bool, u64)> {
    (prop::bool::weighted(0.15), 0..1_000_u64)
}
