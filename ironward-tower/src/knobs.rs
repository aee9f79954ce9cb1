//! [`Knobs`]: what every layer is configured with besides its policy.

use crate::meter::{DEFAULT_NAME, Meter};
use crate::{Clock, Dice, Mode};

/// The knobs every layer shares: the name it reports under, the clock it reads `now` from,
/// the dice it draws from, and whether it enforces its refusals.
///
/// One record, so that the defaults are written once (`"default"`, [`Clock::monotonic`],
/// [`Dice::random`], [`Mode::Enforce`]) and every layer's `with_name`, `with_clock`,
/// `with_dice` and `with_mode` change one field of it and build from the rest. A layer offers
/// the builders of the knobs it reads: the gate reads no clock, the breaker no mode of its
/// own making, and so on.
#[derive(Debug, Clone)]
pub(crate) struct Knobs {
    /// The `name` label of the layer's metrics and the `name` field of its events.
    pub(crate) name: &'static str,
    /// Where the layer reads `now`.
    pub(crate) clock: Clock,
    /// Where the layer draws its rolls.
    pub(crate) dice: Dice,
    /// Whether a refusal is enforced or only reported.
    pub(crate) mode: Mode,
}

impl Default for Knobs {
    fn default() -> Self {
        Self {
            name: DEFAULT_NAME,
            clock: Clock::default(),
            dice: Dice::default(),
            mode: Mode::Enforce,
        }
    }
}

impl Knobs {
    /// The counters of a layer of `piece` under these knobs' name and mode, refusing for
    /// `reasons`.
    pub(crate) fn meter(&self, piece: &'static str, reasons: &'static [&'static str]) -> Meter {
        Meter::new(piece, self.name, reasons, self.mode)
    }
}
