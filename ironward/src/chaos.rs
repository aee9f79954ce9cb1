//! Chaos: faults injected on purpose, each decided from a draw the caller passes in.
//!
//! Polly's Simmy and tower-resilience's chaos layer inject faults in staging to show that the
//! resilience around a call works before production shows it. Here the draw is an argument,
//! as everywhere in the core, so a chaos run replays exactly: [`draw`] turns a seed and a
//! request's index into that request's draw, and the same seed injects the same faults on
//! the same requests in a unit test, the simulator and a real server.
//!
//! A [`Chaos`] policy lists [`Injection`]s, each a [`Fault`] and the share of calls it is
//! injected into. An [`Injector`] is a policy that has been checked: [`Injector::new`]
//! refuses a rate outside `[0, 1]`, NaN, rates that add up to more than 1 and a delay whose
//! bounds are reversed, with a [`ChaosError`] that says which. The faults' shares of the unit
//! interval are laid end to end, so one draw picks at most one fault, each with its own
//! rate, and what is left of the draw inside the fault's share draws its delay.
//!
//! A policy is off unless `enabled`; `shadow` decides as if on but marks each decision
//! [`Injected::shadow`], for an edge to report what it would have injected and call as
//! usual.
//!
//! # Examples
//!
//! ```
//! use core::time::Duration;
//! use ironward::chaos::{self, Chaos, Delay, Fault, Injection, Injector};
//!
//! let policy = Chaos {
//!     enabled: true,
//!     shadow: false,
//!     faults: vec![
//!         Injection { fault: Fault::Error, rate: 0.05 },
//!         Injection {
//!             fault: Fault::Latency(Delay::Uniform {
//!                 low: Duration::from_millis(100),
//!                 high: Duration::from_millis(300),
//!             }),
//!             rate: 0.10,
//!         },
//!     ],
//! };
//! let injector = Injector::new(policy).expect("rates in [0, 1], adding up to at most 1");
//! // Draws under 0.05 fail the call; from 0.05 to 0.15 delay it; the rest pass.
//! assert_eq!(injector.decide(0.01).map(|i| i.fault), Some(Fault::Error));
//! let slow = injector.decide(0.10).expect("a latency");
//! assert_eq!(slow.delay, Some(Duration::from_millis(200)));
//! assert_eq!(injector.decide(0.5), None);
//! // Request 7 of the run seeded 42 draws the same everywhere.
//! assert_eq!(chaos::draw(42, 7), chaos::draw(42, 7));
//! ```

use alloc::vec::Vec;
use core::fmt;
use core::time::Duration;

use crate::SplitMix64;
use crate::internal::float::{duration, nanos_f64, round_nanos, unit};

/// How long an injected latency lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Delay {
    /// Always this long.
    Fixed(#[cfg_attr(feature = "serde", serde(with = "crate::internal::humane"))] Duration),
    /// Drawn evenly from `low` to `high`.
    Uniform {
        /// The shortest delay.
        #[cfg_attr(feature = "serde", serde(with = "crate::internal::humane"))]
        low: Duration,
        /// The longest delay: at least `low`.
        #[cfg_attr(feature = "serde", serde(with = "crate::internal::humane"))]
        high: Duration,
    },
}

impl Delay {
    /// The delay for a draw from `[0, 1)` (held there, NaN as 0).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::chaos::Delay;
    ///
    /// let ms = Duration::from_millis;
    /// assert_eq!(Delay::Fixed(ms(50)).at(0.9), ms(50));
    /// assert_eq!(Delay::Uniform { low: ms(100), high: ms(300) }.at(0.25), ms(150));
    /// ```
    #[must_use]
    pub fn at(&self, draw: f64) -> Duration {
        match *self {
            Self::Fixed(delay) => delay,
            Self::Uniform { low, high } => {
                let span = nanos_f64(high.saturating_sub(low));
                low.saturating_add(duration(round_nanos(span * unit(draw))))
            }
        }
    }
}

/// What an injected fault does to a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Fault {
    /// Answer with an error instead of calling: the outcome the edge is given for it (an
    /// HTTP status, a gRPC code, an error of the caller's).
    Error,
    /// Wait, then call.
    Latency(Delay),
    /// Never answer: the call hangs until the caller's deadline or cancellation ends it.
    Abort,
    /// Call, then answer with the replacement the edge is given instead of the result.
    Replace,
}

impl Fault {
    /// The fault's name in metrics and logs: `error`, `latency`, `abort` or `replace`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::chaos::Fault;
    ///
    /// assert_eq!(Fault::Abort.label(), "abort");
    /// ```
    #[must_use]
    pub const fn label(&self) -> &'static str {
        match self {
            Self::Error => "error",
            Self::Latency(_) => "latency",
            Self::Abort => "abort",
            Self::Replace => "replace",
        }
    }
}

/// One fault and the share of calls it is injected into.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct Injection {
    /// What is injected.
    pub fault: Fault,
    /// The share of calls it is injected into: in `[0, 1]`.
    pub rate: f64,
}

/// A chaos policy: the faults to inject and whether to inject them.
///
/// The default is off, with no faults.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default, deny_unknown_fields))]
pub struct Chaos {
    /// Whether faults are decided at all: off, nothing is ever injected.
    pub enabled: bool,
    /// Decide as if on, but only report: each decision is marked
    /// [`shadow`](Injected::shadow) and the edge calls as usual.
    pub shadow: bool,
    /// The faults, each with its rate; the rates add up to at most 1.
    pub faults: Vec<Injection>,
}

/// Why a [`Chaos`] policy was refused.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ChaosError {
    /// The fault at `index` has a rate outside `[0, 1]`, or NaN.
    Rate {
        /// Where the fault is in [`Chaos::faults`].
        index: usize,
        /// The rate given.
        rate: f64,
    },
    /// The rates add up to more than 1: one draw could not pick one fault.
    Total {
        /// The sum of the rates.
        sum: f64,
    },
    /// The fault at `index` draws its delay from a `low` above its `high`.
    Delay {
        /// Where the fault is in [`Chaos::faults`].
        index: usize,
    },
}

impl fmt::Display for ChaosError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Rate { index, rate } => {
                write!(f, "chaos fault {index} has rate {rate}, not in [0, 1]")
            }
            Self::Total { sum } => write!(f, "chaos rates add up to {sum}, more than 1"),
            Self::Delay { index } => {
                write!(f, "chaos fault {index} has a delay's low above its high")
            }
        }
    }
}

impl core::error::Error for ChaosError {}

/// What an [`Injector`] decided for one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Injected {
    /// The fault.
    pub fault: Fault,
    /// Where the fault is in [`Chaos::faults`].
    pub index: usize,
    /// For [`Fault::Latency`], how long to wait: drawn from what was left of the draw.
    pub delay: Option<Duration>,
    /// The policy is in shadow mode: report the fault, and call as usual.
    pub shadow: bool,
}

/// A checked [`Chaos`] policy, deciding for each call from its draw.
///
/// `Clone` copies the policy; an injector keeps no other state, so copies decide alike.
#[derive(Debug, Clone, PartialEq)]
pub struct Injector {
    policy: Chaos,
}

impl Injector {
    /// The policy, checked: each rate in `[0, 1]`, their sum at most 1, each drawn delay's
    /// `low` at most its `high`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::chaos::{Chaos, ChaosError, Fault, Injection, Injector};
    ///
    /// let bad = Chaos {
    ///     enabled: true,
    ///     faults: vec![Injection { fault: Fault::Abort, rate: f64::NAN }],
    ///     ..Chaos::default()
    /// };
    /// assert!(matches!(Injector::new(bad), Err(ChaosError::Rate { index: 0, .. })));
    /// // Off by default: nothing is injected.
    /// assert_eq!(Injector::new(Chaos::default()).unwrap().decide(0.0), None);
    /// ```
    pub fn new(policy: Chaos) -> Result<Self, ChaosError> {
        let mut sum = 0.0;
        for (index, injection) in policy.faults.iter().enumerate() {
            let rate = injection.rate;
            if !(0.0..=1.0).contains(&rate) {
                return Err(ChaosError::Rate { index, rate });
            }
            if let Fault::Latency(Delay::Uniform { low, high }) = injection.fault
                && low > high
            {
                return Err(ChaosError::Delay { index });
            }
            sum += rate;
        }
        // A little over 1 from rounding (0.1 + 0.2 + 0.7) is 1.
        if sum > 1.0 + 1e-9 {
            return Err(ChaosError::Total { sum });
        }
        Ok(Self { policy })
    }

    /// The fault for a call whose draw is `draw`, from `[0, 1)` (held there; NaN as 0), or
    /// `None`: the policy is off, or the draw falls past every fault's share.
    ///
    /// The faults' shares lie end to end from 0 in the policy's order: a fault with rate `r`
    /// whose share starts at `a` takes the draws in `[a, a + r)`, and `(draw − a) / r`
    /// draws its delay.
    #[must_use]
    pub fn decide(&self, draw: f64) -> Option<Injected> {
        if !self.policy.enabled {
            return None;
        }
        let draw = unit(draw);
        let mut start = 0.0;
        for (index, injection) in self.policy.faults.iter().enumerate() {
            let end = start + injection.rate;
            if draw < end {
                let within = (draw - start) / injection.rate;
                let delay = match injection.fault {
                    Fault::Latency(delay) => Some(delay.at(within)),
                    _ => None,
                };
                return Some(Injected {
                    fault: injection.fault,
                    index,
                    delay,
                    shadow: self.policy.shadow,
                });
            }
            start = end;
        }
        None
    }

    /// The policy in force.
    #[must_use]
    pub fn policy(&self) -> &Chaos {
        &self.policy
    }

    /// Changes the policy in place, checked as [`new`](Injector::new) checks it; a refused
    /// policy leaves the one in force.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::chaos::{Chaos, Fault, Injection, Injector};
    ///
    /// let mut injector = Injector::new(Chaos::default()).unwrap();
    /// let on = Chaos { enabled: true, faults: vec![Injection { fault: Fault::Error, rate: 1.0 }], ..Chaos::default() };
    /// injector.retune(on).unwrap();
    /// assert!(injector.decide(0.99).is_some());
    /// ```
    pub fn retune(&mut self, policy: Chaos) -> Result<(), ChaosError> {
        *self = Self::new(policy)?;
        Ok(())
    }
}

/// The draw of the request numbered `index` in the run seeded `seed`: the same pair gives the
/// same draw in every process, so the core, the simulator and a real server inject the same
/// faults on the same requests.
///
/// It is SplitMix64's output for the state `seed + (index + 1) × GAMMA`: the `index`-th draw of
/// [`SplitMix64::new(seed)`](SplitMix64::new), reached without stepping through the others.
///
/// # Examples
///
/// ```
/// use ironward::{SplitMix64, chaos};
///
/// let mut dice = SplitMix64::new(7);
/// assert_eq!(chaos::draw(7, 0), dice.roll());
/// assert_eq!(chaos::draw(7, 1), dice.roll());
/// ```
#[must_use]
pub fn draw(seed: u64, index: u64) -> f64 {
    let state = seed.wrapping_add(index.wrapping_add(1).wrapping_mul(SplitMix64::GAMMA));
    SplitMix64::unit(SplitMix64::mix(state))
}

#[cfg(test)]
mod tests;
