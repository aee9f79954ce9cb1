//! What a chaos layer reports of each fault it decides: a counter through the `metrics`
//! facade and a `tracing` event.
//!
//! | name | kind | unit | labels | what |
//! | --- | --- | --- | --- | --- |
//! | `ironward.chaos.injected` | counter | `{fault}` | `name`, `fault` | faults injected into calls |
//! | `ironward.chaos.shadowed` | counter | `{fault}` | `name`, `fault` | faults a policy in shadow mode decided and did not inject |
//!
//! Shadow decisions are a counter of their own rather than a label, so that
//! `ironward.chaos.injected` counts exactly the calls that were harmed on purpose, whatever a
//! query forgets to filter. Both are registered, at zero for each of the four faults, when
//! the layer makes a service (its name then final), as the other layers' counters are.

#[cfg(feature = "metrics")]
use std::sync::OnceLock;

use ironward::chaos::Injected;
#[cfg(any(feature = "metrics", test))]
use ironward::chaos::{Delay, Fault};

/// The counter of injected faults.
#[cfg(feature = "metrics")]
const INJECTED: &str = "ironward.chaos.injected";
/// The counter of faults decided in shadow mode and not injected.
#[cfg(feature = "metrics")]
const SHADOWED: &str = "ironward.chaos.shadowed";

/// One fault of each kind, in the order of the meter's series: their labels are the
/// `fault` label's values.
#[cfg(any(feature = "metrics", test))]
const FAULTS: [Fault; 4] = [
    Fault::Error,
    Fault::Latency(Delay::Fixed(std::time::Duration::ZERO)),
    Fault::Abort,
    Fault::Replace,
];

/// Where `fault`'s series is in [`FAULTS`].
#[cfg(any(feature = "metrics", test))]
fn slot(fault: &Fault) -> usize {
    match fault {
        Fault::Error => 0,
        Fault::Latency(_) => 1,
        Fault::Abort => 2,
        Fault::Replace => 3,
    }
}

/// One chaos layer's counters and events, under its name.
#[derive(Debug)]
pub(super) struct ChaosMeter {
    name: &'static str,
    /// The injected series, one per fault in [`FAULTS`]' order, then the shadowed ones.
    #[cfg(feature = "metrics")]
    series: [OnceLock<metrics::Counter>; 8],
}

impl ChaosMeter {
    pub(super) fn new(name: &'static str) -> Self {
        Self {
            name,
            #[cfg(feature = "metrics")]
            series: Default::default(),
        }
    }

    /// The name the layer reports under.
    pub(super) fn name(&self) -> &'static str {
        self.name
    }

    /// Registers every series, at zero, if they are not yet.
    pub(super) fn register(&self) {
        #[cfg(feature = "metrics")]
        for index in 0..self.series.len() {
            self.counter(index);
        }
    }

    /// Reports the fault decided for the request numbered `request`: counted as injected,
    /// or as shadowed, and one debug event.
    pub(super) fn report(&self, request: u64, injected: &Injected) {
        let fault = injected.fault.label();
        #[cfg(feature = "metrics")]
        {
            let shadow = if injected.shadow { FAULTS.len() } else { 0 };
            self.counter(shadow + slot(&injected.fault)).increment(1);
        }
        let verb = if injected.shadow {
            "shadowed"
        } else {
            "injected"
        };
        tracing::debug!(
            name = self.name,
            fault,
            request,
            shadow = injected.shadow,
            delay = ?injected.delay,
            "chaos {verb} a fault"
        );
    }

    /// The handle of the series at `index`, registered on first use.
    #[cfg(feature = "metrics")]
    fn counter(&self, index: usize) -> &metrics::Counter {
        self.series[index].get_or_init(|| {
            let fault = FAULTS[index % FAULTS.len()].label();
            if index < FAULTS.len() {
                metrics::describe_counter!(
                    INJECTED,
                    metrics::Unit::Count,
                    "Faults a chaos layer injected into calls on purpose ({fault})"
                );
                metrics::counter!(INJECTED, "name" => self.name, "fault" => fault)
            } else {
                metrics::describe_counter!(
                    SHADOWED,
                    metrics::Unit::Count,
                    "Faults a chaos policy in shadow mode decided and did not inject ({fault})"
                );
                metrics::counter!(SHADOWED, "name" => self.name, "fault" => fault)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_fault_has_its_own_series_labelled_by_the_core() {
        let labels: Vec<_> = FAULTS.iter().map(Fault::label).collect();
        assert_eq!(labels, ["error", "latency", "abort", "replace"]);
        for (index, fault) in FAULTS.iter().enumerate() {
            assert_eq!(slot(fault), index);
        }
    }
}
