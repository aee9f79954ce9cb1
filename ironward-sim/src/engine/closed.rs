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
                for _ in 0..source.clients {
                    self.push(start, What::Send { source: i as u16 });
                }
            }
        }
    }

    /// A closed-loop client of source `source` sends a call.
    pub(super) fn send(&mut self, source: u16) {
        let class = self.loops[usize::from(source)].0.criticality;
        self.arrive(class, source);
    }

    /// `call` has ended: if a closed-loop client sent it, the client sends its next after
    /// its think time, unless its source has stopped by then.
    #[inline(always)]
    pub(super) fn answered(&mut self, call: &Call) {
        if call.source == OPEN {
            return;
        }
        let (source, end) = &self.loops[usize::from(call.source)];
        if let Some(at) = source.next(call.start, self.now, *end, &mut self.think) {
            self.push(
                at,
                What::Send {
                    source: call.source,
                },
            );
        }
    }
}

#[cfg(test)]
#[path = "closed_tests.rs"]
mod tests;
