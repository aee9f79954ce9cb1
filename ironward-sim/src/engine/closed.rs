//! Closed-loop clients: each call of theirs, once ended, sends the client's next.

use crate::arrivals::{Closed, Traffic};
use crate::scenario::Variant;
use ironward::clock::nanos;

use super::Engine;
use super::call::{Call, What};

/// The [`Call::source`] of a call from an open-loop source: no client waits for it.
pub(super) const OPEN: u16 = u16::MAX;

/// The closed-loop sources of `v`, in the order listed, each with when it stops.
pub(super) fn loops(v: &Variant) -> Vec<(Closed, u64)> {
    let run = nanos(v.duration);
    v.arrivals
        .iter()
        .filter_map(|source| match source {
            Traffic::Closed(c) => Some((*c, c.end(run))),
            _ => None,
        })
        .collect()
}

impl Engine {
    /// Schedules every closed-loop client's first call at its source's start.
    pub(super) fn open_loops(&mut self) {
        for (i, (source, end)) in self.loops.clone().into_iter().enumerate() {
            let start = nanos(source.start);
            if start < end {
                let call = Call::first(start, source.criticality, i as u16);
                for _ in 0..source.clients {
                    self.push(start, What::Start { call });
                }
            }
        }
    }

    /// `call` has ended: if a closed-loop client sent it, the client sends its next after
    /// its think time, unless its source has stopped by then. Only the test is inlined
    /// into the paths that end a call: an open-loop run pays a compare.
    #[inline(always)]
    pub(super) fn answered(&mut self, call: &Call) {
        if call.source != OPEN {
            self.again(call);
        }
    }

    /// Schedules the next call of the client that sent `call`.
    #[inline(never)]
    fn again(&mut self, call: &Call) {
        let (source, end) = &self.loops[usize::from(call.source)];
        if let Some(at) = source.next(call.start, self.now, *end, &mut self.think) {
            let next = Call::first(at, call.class, call.source);
            self.push(at, What::Start { call: next });
        }
    }
}

#[cfg(test)]
#[path = "closed_tests.rs"]
mod tests;
