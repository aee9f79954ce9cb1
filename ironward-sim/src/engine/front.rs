//! The client's breaker, asked through the core's [`CircuitBreaker`] whatever its family.

use core::time::Duration;

use ironward::{CircuitBreaker, ClassicBreaker, SreBreaker};

use super::call::Pass;

/// The client's breaker, of either family, each asked through [`CircuitBreaker`]: a family
/// more is an arm here and one in [`Pass`].
#[derive(Debug)]
#[expect(
    clippy::large_enum_variant,
    reason = "one per run, made once and never moved: the sizes cost nothing"
)]
pub(super) enum Front {
    Sre(SreBreaker),
    Classic(ClassicBreaker),
}

impl Front {
    /// Asks the breaker for an attempt at `now` with the draw `roll`.
    #[inline(always)]
    pub(super) fn check(&mut self, now: Duration, roll: f64) -> Option<Pass> {
        match self {
            Self::Sre(b) => CircuitBreaker::check(b, now, roll).ok().map(Pass::Sre),
            Self::Classic(b) => CircuitBreaker::check(b, now, roll).ok().map(Pass::Classic),
        }
    }

    /// Settles `pass` as a success (`ok`) or a failure at `now`.
    #[inline(always)]
    pub(super) fn settle(&mut self, pass: Pass, ok: bool, now: Duration) {
        fn settle<B: CircuitBreaker>(b: &mut B, permit: B::Permit, ok: bool, now: Duration) {
            // The engine's one breaker made every permit it settles.
            let _ = if ok {
                b.pass(permit, now)
            } else {
                b.fail(permit, now)
            };
        }
        match (pass, self) {
            (Pass::Sre(permit), Self::Sre(b)) => settle(b, permit, ok, now),
            (Pass::Classic(trial), Self::Classic(b)) => settle(b, trial, ok, now),
            _ => {}
        }
    }

    /// The share of attempts the breaker refuses at `now`.
    pub(super) fn ratio(&self, now: Duration) -> f64 {
        match self {
            Self::Sre(b) => CircuitBreaker::ratio(b, now),
            Self::Classic(b) => CircuitBreaker::ratio(b, now),
        }
    }
}
