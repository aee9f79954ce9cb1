//! What a layer reports of its decisions through the `metrics` facade, on the handles the
//! edges share ([`ironward_tokio::meter`]): this module adds only what is the tower edge's, a
//! layer's [`Mode`], which names the `outcome` of its refusals.
//!
//! A layer registers its handles when it makes a service ([`Layer::layer`]), once its name can
//! no longer change, so that a layer renamed by `with_name` leaves no series under the name it
//! was made with; the deadline, which holds no shared state, makes its meter there too. A
//! decision then costs an increment on a handle and no lookup by name. Without the `metrics`
//! feature a meter holds the layer's name and mode and nothing else, and every method is empty.
//!
//! The names, units and labels are documented in the guide's [metrics](crate::_guide::metrics).
//!
//! [`Layer::layer`]: tower_layer::Layer::layer

use ironward::Criticality;
use ironward_tokio::Knobs;
use ironward_tokio::meter::Decisions;
pub(crate) use ironward_tokio::meter::{DEFAULT_NAME, Level, Retries as RetryMeter, States};

use crate::Mode;

/// One layer's counters: one handle for its admissions and one per reason it refuses for,
/// under `outcome="refused"` or, for a layer in [`Mode::Shadow`], `outcome="shadowed"`.
#[derive(Debug)]
pub(crate) struct Meter {
    name: &'static str,
    mode: Mode,
    decisions: Decisions,
}

impl Meter {
    /// The counters of the layer `name` of `piece` in `mode`, which refuses for `reasons`
    /// (indexed as [`refused`](Self::refused) reads them); registered by
    /// [`register`](Self::register) or the first count.
    pub(crate) fn new(
        piece: &'static str,
        name: &'static str,
        reasons: &'static [&'static str],
        mode: Mode,
    ) -> Self {
        Self {
            name,
            mode,
            decisions: Decisions::new(piece, name, mode.refusal(), reasons),
        }
    }

    /// The counters of a layer of `piece` under `knobs`' name and mode, refusing for
    /// `reasons`.
    pub(crate) fn of(knobs: &Knobs, piece: &'static str, reasons: &'static [&'static str]) -> Self {
        Self::new(piece, knobs.name, reasons, knobs.mode)
    }

    /// The same counters split by the class of each call (a `criticality` label), for a layer
    /// that admits by class.
    pub(crate) fn by_criticality(self) -> Self {
        Self {
            decisions: self.decisions.by_criticality(),
            ..self
        }
    }

    /// Registers the counters, if they are not yet: when the layer makes a service.
    pub(crate) fn register(&self) {
        self.decisions.register();
    }

    /// The name the layer reports under.
    pub(crate) fn name(&self) -> &'static str {
        self.name
    }

    /// Whether the layer enforces its refusals or only reports them.
    pub(crate) fn mode(&self) -> Mode {
        self.mode
    }

    /// The `outcome` of the layer's refusals: `"refused"`, or `"shadowed"` in shadow mode.
    pub(crate) fn refusal(&self) -> &'static str {
        self.decisions.refusal()
    }

    /// Counts one admitted call.
    pub(crate) fn admitted(&self) {
        self.decisions.admitted();
    }

    /// Counts one call refused (or, in shadow mode, shadowed) for the reason at `reason` in
    /// the list the meter was made with.
    pub(crate) fn refused(&self, reason: usize) {
        self.decisions.refused(reason);
    }

    /// Counts one admitted call of class `criticality`.
    pub(crate) fn admitted_as(&self, criticality: Criticality) {
        self.decisions.admitted_as(criticality);
    }

    /// Counts one call of class `criticality` refused for the reason at `reason`.
    pub(crate) fn refused_as(&self, reason: usize, criticality: Criticality) {
        self.decisions.refused_as(reason, criticality);
    }
}
