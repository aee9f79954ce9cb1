//! [`Reloads`]: the counter of configuration reloads, applied or refused.

use std::fmt;
#[cfg(feature = "metrics")]
use std::sync::OnceLock;

/// The counter of configuration reloads.
#[cfg(feature = "metrics")]
const CONFIG_RELOADS: &str = "ironward.config.reloads";

/// The `ironward.config.reloads` handles of one configured stack: a reload counted under
/// `outcome="applied"` when its configuration took force, `outcome="refused"` when it was
/// refused and the configuration in force stayed.
///
/// Both series are registered by [`register`](Self::register), when the stack is made, so
/// that a dashboard sees a refusal's series at zero before the first one; a count registers
/// them too. Without the `metrics` feature every method is empty.
///
/// # Examples
///
/// ```
/// use ironward_tokio::meter::Reloads;
///
/// let reloads = Reloads::new();
/// reloads.register();
/// reloads.applied();
/// reloads.refused();
/// ```
#[derive(Default)]
pub struct Reloads {
    #[cfg(feature = "metrics")]
    handles: OnceLock<[metrics::Counter; 2]>,
}

impl Reloads {
    /// Handles not yet registered.
    #[must_use]
    pub const fn new() -> Self {
        Self {
            #[cfg(feature = "metrics")]
            handles: OnceLock::new(),
        }
    }

    /// Registers both series, if they are not yet.
    pub fn register(&self) {
        #[cfg(feature = "metrics")]
        self.handles();
    }

    /// Counts a reload whose configuration took force.
    pub fn applied(&self) {
        #[cfg(feature = "metrics")]
        self.handles()[0].increment(1);
    }

    /// Counts a reload that was refused, leaving the configuration in force.
    pub fn refused(&self) {
        #[cfg(feature = "metrics")]
        self.handles()[1].increment(1);
    }

    /// The handles, registered on first use.
    #[cfg(feature = "metrics")]
    fn handles(&self) -> &[metrics::Counter; 2] {
        self.handles.get_or_init(|| {
            metrics::describe_counter!(
                CONFIG_RELOADS,
                metrics::Unit::Count,
                "Configuration reloads, applied or refused ({reload})"
            );
            ["applied", "refused"]
                .map(|outcome| metrics::counter!(CONFIG_RELOADS, "outcome" => outcome))
        })
    }
}

impl fmt::Debug for Reloads {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reloads").finish_non_exhaustive()
    }
}
