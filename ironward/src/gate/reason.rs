//! Why the gate refused: how many are inside against its limit.

use core::fmt;

/// Why a [`Gate`](crate::Gate) refused to let a caller in: how many are inside against the
/// limit, from [`Gate::check`](crate::Gate::check).
///
/// A refusal always has `held ≥ limit` (past it after a lowering
/// [`retune`](crate::Gate::retune)).
///
/// # Examples
///
/// ```
/// use ironward::Gate;
///
/// let mut gate = Gate::new(2);
/// assert!(gate.enter() && gate.enter());
/// let reason = gate.check().expect_err("full");
/// assert_eq!((reason.held, reason.limit), (2, 2));
/// assert_eq!(reason.to_string(), "gate full: 2 held against a limit of 2");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GateReason {
    /// How many are inside.
    pub held: u32,
    /// The most the gate lets in at once.
    pub limit: u32,
}

impl fmt::Display for GateReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "gate full: {} held against a limit of {}",
            self.held, self.limit
        )
    }
}

impl core::error::Error for GateReason {}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::string::ToString;

    use super::*;

    #[test]
    fn a_gate_reason_is_an_error_with_no_source() {
        let gate = GateReason { held: 3, limit: 1 };
        let reason: &dyn core::error::Error = &gate;
        assert!(reason.source().is_none());
        let line = reason.to_string();
        assert!(!line.contains('\n') && !line.ends_with('.'), "{line}");
        assert_eq!(line, line.to_lowercase());
    }
}
