//! [`Knobs`] and [`Mode`]: what every edge is built with besides its policy.

use crate::meter::DEFAULT_NAME;
use crate::{Clock, Dice};

/// Whether a refusing edge enforces its decisions or only reports them: shadow mode, for
/// trying a tighter policy on real traffic before it refuses anyone.
///
/// In [`Mode::Shadow`] an edge decides exactly as in [`Mode::Enforce`], state changes and
/// all, and where it would refuse a call it lets it through and reports the refusal it would
/// have made, as `shadowed`. ironward-tower's guide (`_guide::shadow`) says what each layer
/// does with a shadowed call.
///
/// # Examples
///
/// ```
/// use ironward_tokio::Mode;
///
/// assert_eq!(Mode::default(), Mode::Enforce);
/// assert!(Mode::Shadow.is_shadow());
/// assert_eq!((Mode::Enforce.refusal(), Mode::Shadow.refusal()), ("refused", "shadowed"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Mode {
    /// Refuse: a refused call fails with the edge's refusal and never reaches what is
    /// behind it. The default.
    #[default]
    Enforce,
    /// Report only: a would-be refusal is counted and logged as `shadowed`, and the call goes
    /// through.
    Shadow,
}

impl Mode {
    /// Whether this is [`Mode::Shadow`].
    pub const fn is_shadow(self) -> bool {
        matches!(self, Self::Shadow)
    }

    /// The `outcome` label and `tracing` field of a refusal in this mode: `"refused"` or
    /// `"shadowed"`.
    pub const fn refusal(self) -> &'static str {
        match self {
            Self::Enforce => "refused",
            Self::Shadow => "shadowed",
        }
    }
}

/// The knobs every edge shares: the name it reports under, the clock it reads `now` from,
/// the dice it draws from, and whether it enforces its refusals.
///
/// The edges' plumbing, not something an application builds: each layer, middleware and
/// ward holds one, so that the defaults are written once (`"default"`,
/// [`Clock::monotonic`], [`Dice::random`], [`Mode::Enforce`]) and each of its `with_name`,
/// `with_clock`, `with_dice` and `with_mode` changes one field. An edge offers the builders
/// of the knobs it reads: a gate reads no clock, a retry has no shadow mode.
///
/// # Examples
///
/// ```
/// use ironward_tokio::{Clock, Knobs, Mode};
///
/// let knobs = Knobs { name: "payments", clock: Clock::unix(), ..Knobs::default() };
/// assert_eq!((knobs.name, knobs.mode), ("payments", Mode::Enforce));
/// ```
#[derive(Debug, Clone)]
pub struct Knobs {
    /// The `name` label of the edge's metrics and the `name` field of its events.
    pub name: &'static str,
    /// Where the edge reads `now`.
    pub clock: Clock,
    /// Where the edge draws its rolls.
    pub dice: Dice,
    /// Whether a refusal is enforced or only reported.
    pub mode: Mode,
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
