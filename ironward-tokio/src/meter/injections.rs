//! [`Injections`]: the counter of the faults a chaos piece injected, or would have.

use std::fmt;
#[cfg(feature = "metrics")]
use std::sync::OnceLock;

use ironward::chaos::Fault;

/// The counter of chaos decisions: faults injected, or in shadow mode only reported.
#[cfg(feature = "metrics")]
const CHAOS_INJECTED: &str = "ironward.chaos.injected";

/// The `fault` labels, in the order the handles hold them.
#[cfg(feature = "metrics")]
const FAULTS: [&str; 4] = ["error", "latency", "abort", "replace"];

/// The `ironward.chaos.injected` handles of one chaos piece: a fault counted under its
/// `name`, its `fault` label ([`Fault::label`]) and `shadow`, `"true"` for a fault a policy in
/// shadow mode only reported (the call went ahead as usual), `"false"` for one injected.
///
/// One counter with a `shadow` label rather than a second counter: a dashboard compares what
/// a shadow run would have injected with what a live one does by one label, on one series set.
/// Each of the eight series is registered when it first counts: a policy injects only the
/// faults it lists, and a dashboard has no use for zeros of the others. Without the `metrics`
/// feature every method is empty.
///
/// # Examples
///
/// ```
/// use ironward::chaos::Fault;
/// use ironward_tokio::meter::Injections;
///
/// let injections = Injections::new("payments");
/// injections.injected(&Fault::Error, false); // ironward.chaos.injected{fault="error", shadow="false"}
/// injections.injected(&Fault::Abort, true); // reported, not injected
/// assert_eq!(injections.name(), "payments");
/// ```
pub struct Injections {
    name: &'static str,
    /// One handle per fault and shadow flag: the fault's place in [`FAULTS`] times two, plus
    /// one for shadow.
    #[cfg(feature = "metrics")]
    series: [OnceLock<metrics::Counter>; 8],
}

impl Injections {
    /// The handles of the chaos piece `name`. Nothing is registered yet.
    #[must_use]
    pub fn new(name: &'static str) -> Self {
        Self {
            name,
            #[cfg(feature = "metrics")]
            series: Default::default(),
        }
    }

    /// The `name` label.
    #[must_use]
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Counts one `fault`, injected (`shadow` false) or only reported (`shadow` true).
    pub fn injected(&self, fault: &Fault, shadow: bool) {
        #[cfg(feature = "metrics")]
        {
            let kind = match fault {
                Fault::Error => 0,
                Fault::Latency(_) => 1,
                Fault::Abort => 2,
                Fault::Replace => 3,
            };
            let index = kind * 2 + usize::from(shadow);
            self.series[index]
                .get_or_init(|| self.register(kind, shadow))
                .increment(1);
        }
        #[cfg(not(feature = "metrics"))]
        let _ = (fault, shadow);
    }

    /// Registers the series of the fault at `kind` in [`FAULTS`]: the cold half of
    /// [`injected`](Self::injected).
    #[cfg(feature = "metrics")]
    #[cold]
    fn register(&self, kind: usize, shadow: bool) -> metrics::Counter {
        metrics::describe_counter!(
            CHAOS_INJECTED,
            metrics::Unit::Count,
            "Faults a chaos piece injected, or in shadow mode only reported ({request})"
        );
        let shadow = if shadow { "true" } else { "false" };
        metrics::counter!(
            CHAOS_INJECTED,
            "name" => self.name,
            "fault" => FAULTS[kind],
            "shadow" => shadow,
        )
    }
}

impl fmt::Debug for Injections {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Injections")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}
