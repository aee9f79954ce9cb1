//! Who is refused first under overload: the caller's criticality, as the SRE book's chapter
//! "Handling Overload" defines it, and the one rule by which the [`Shedder`](crate::Shedder)
//! and the [`Limiter`](crate::Limiter) apply it.
//!
//! Two things protect the more critical classes:
//!
//! - **A share of the capacity per class.** A call of class `c` is admitted only while what
//!   is in flight is under its class's share of the capacity ([`Shares`]), so the less
//!   critical classes meet a full server first and leave headroom to the rest.
//! - **A floor that follows refusals.** Once a call of class `c` has been refused, every class
//!   below `c` is refused outright for the cooling time after it, whatever is in flight: the
//!   room that calls leaving flight free goes to `c` and above. A refusal by the floor counts
//!   as a refusal of its class too, so the floor comes down one class per cooling time, the
//!   most critical first, rather than letting every class back in at once; and a less
//!   critical class is admitted only after a whole cooling time in which no more critical
//!   one was refused.

use crate::internal::constant::constant;
use core::fmt;
use core::str::FromStr;

/// How critical a call is to whoever made it; under overload the least critical classes are
/// refused first.
///
/// The classes are the SRE book's ("Handling Overload", *Criticality*), ordered: a class
/// compares greater than every class less critical than it, so `Sheddable` is the least and
/// `CriticalPlus` the greatest. The default is `Critical`, the class the book gives a
/// request that does not state one, and the class under which [`Shedder::check`] and
/// [`Limiter::acquire`] decide.
///
/// [`Shedder::check`]: crate::Shedder::check
/// [`Limiter::acquire`]: crate::Limiter::acquire
///
/// # Examples
///
/// ```
/// use ironward::Criticality;
///
/// assert!(Criticality::CriticalPlus > Criticality::Critical);
/// assert!(Criticality::Sheddable < Criticality::SheddableConcurrent);
/// assert_eq!(Criticality::default(), Criticality::Critical);
/// // Header values read as written in the book, in code or in kebab case.
/// assert_eq!("CRITICAL_PLUS".parse(), Ok(Criticality::CriticalPlus));
/// assert_eq!("sheddable-concurrent".parse(), Ok(Criticality::SheddableConcurrent));
/// assert_eq!(Criticality::Sheddable.to_string(), "sheddable");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
pub enum Criticality {
    /// Work whose loss is expected and tolerated: batch jobs, prefetches, retries that can
    /// come later.
    Sheddable,
    /// Work that may be refused, but not before the plainly sheddable: background work a
    /// user waits on in the end.
    SheddableConcurrent,
    /// The default for a request a user is waiting on: refusing it is user-visible.
    #[default]
    Critical,
    /// The most critical work, whose loss is serious: refused only when the critical work
    /// already in flight leaves no room at all.
    CriticalPlus,
}

impl Criticality {
    /// Every class, least critical first.
    pub const ALL: [Self; 4] = [
        Self::Sheddable,
        Self::SheddableConcurrent,
        Self::Critical,
        Self::CriticalPlus,
    ];

    /// The class's name in snake case, as it is printed and labelled in metrics:
    /// `sheddable`, `sheddable_concurrent`, `critical`, `critical_plus`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Sheddable => "sheddable",
            Self::SheddableConcurrent => "sheddable_concurrent",
            Self::Critical => "critical",
            Self::CriticalPlus => "critical_plus",
        }
    }

    /// The class's place in [`ALL`](Criticality::ALL): 0 for `Sheddable` to 3 for
    /// `CriticalPlus`.
    #[must_use]
    pub const fn rank(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Criticality {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not one of the four classes, from [`Criticality`]'s `FromStr`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnknownCriticality;

impl fmt::Display for UnknownCriticality {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "not a criticality: expected critical_plus, critical, sheddable_concurrent or sheddable",
        )
    }
}

impl core::error::Error for UnknownCriticality {}

impl FromStr for Criticality {
    type Err = UnknownCriticality;

    /// Reads a class's name in any case, with its words joined by `_`, `-` or nothing
    /// (`CRITICAL_PLUS`, `critical-plus`, `CriticalPlus`), surrounding whitespace ignored.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim().as_bytes();
        Self::ALL
            .into_iter()
            .find(|class| spells(s, class.name().as_bytes()))
            .ok_or(UnknownCriticality)
    }
}

/// Whether `s` spells the snake-case `name`, in any case, with each `_` written as `_`, `-`
/// or left out.
fn spells(s: &[u8], name: &[u8]) -> bool {
    let (mut i, mut j) = (0, 0);
    while j < name.len() {
        if name[j] == b'_' {
            if i < s.len() && (s[i] == b'_' || s[i] == b'-') {
                i += 1;
            }
            j += 1;
        } else if i < s.len() && s[i].eq_ignore_ascii_case(&name[j]) {
            i += 1;
            j += 1;
        } else {
            return false;
        }
    }
    i == s.len()
}

/// The share of a capacity each class may fill: a call of class `c` is admitted only while
/// the calls in flight are under `capacity × share(c)`.
///
/// Each share is a fraction: a value outside `[0, 1]` is read as the nearer end and NaN as
/// 1, the value that refuses least. The shares are read as non-decreasing with criticality:
/// a class's share is the least of its own and those of the classes above it, so a less
/// critical class never has more room than a more critical one.
///
/// # Default
///
/// [`SHARES`]:
///
/// | class | share |
/// | --- | --- |
/// | `sheddable` | 0.5 |
/// | `sheddable_concurrent` | 0.75 |
/// | `critical` | 1 |
/// | `critical_plus` | 1 |
///
/// `Critical` keeps the whole capacity, so a piece asked without a class decides as it does
/// without priorities; `CriticalPlus` is protected from `Critical` by the floor (see the
/// module docs), not by a larger share. A limiter lets one call of a class with a share in
/// while nothing is in flight, even where the share of a small limit rounds to none; a
/// share of 0 refuses the class always.
///
/// # Examples
///
/// ```
/// use ironward::{Criticality, SHARES, Shares};
///
/// assert_eq!(SHARES.of(Criticality::Sheddable), 0.5);
/// let odd = Shares { sheddable: 0.9, sheddable_concurrent: 0.6, ..SHARES };
/// // The sheddable never get more room than the class above them.
/// assert_eq!(odd.of(Criticality::Sheddable), 0.6);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default, deny_unknown_fields)
)]
pub struct Shares {
    /// The share of [`Criticality::Sheddable`].
    pub sheddable: f64,
    /// The share of [`Criticality::SheddableConcurrent`].
    pub sheddable_concurrent: f64,
    /// The share of [`Criticality::Critical`].
    pub critical: f64,
    /// The share of [`Criticality::CriticalPlus`].
    pub critical_plus: f64,
}

/// The default [`Shares`]: half the capacity for the sheddable, three quarters for the
/// sheddable-concurrent, all of it for the critical classes.
pub const SHARES: Shares = Shares {
    sheddable: 0.5,
    sheddable_concurrent: 0.75,
    critical: 1.0,
    critical_plus: 1.0,
};

impl Default for Shares {
    fn default() -> Self {
        SHARES
    }
}

impl Shares {
    /// The share of `class`, as the pieces read it: in `[0, 1]`, and no more than any more
    /// critical class's.
    #[must_use]
    pub fn of(&self, class: Criticality) -> f64 {
        let raw = [
            self.sheddable,
            self.sheddable_concurrent,
            self.critical,
            self.critical_plus,
        ];
        raw[class.rank()..]
            .iter()
            .map(|&share| constant(share, 0.0, 1.0, 1.0))
            .fold(1.0, f64::min)
    }

    /// Every class's share as [`of`](Shares::of) reads it, least critical first: what a piece
    /// keeps so that a decision indexes it instead of reading four constants.
    pub(crate) fn read(&self) -> [f64; 4] {
        Criticality::ALL.map(|class| self.of(class))
    }
}

/// The floor that follows refusals: when each class was last refused, on a piece's clock.
///
/// One rule for the [`Shedder`](crate::Shedder) and the [`Limiter`](crate::Limiter):
/// classes below the most critical one refused within the cooling time are refused outright.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Floor {
    /// Per class, least critical first: the last refusal, in nanoseconds.
    refused: [Option<u64>; 4],
}

impl Floor {
    /// The least critical class admitted at `now` (nanoseconds, never before a refusal
    /// recorded): the most critical class refused within `cool` before `now`, or
    /// `Sheddable` when none was.
    pub(crate) fn at(&self, now: u64, cool: u64) -> Criticality {
        Criticality::ALL
            .into_iter()
            .rev()
            .find(|class| {
                self.refused[class.rank()].is_some_and(|at| now.saturating_sub(at) < cool)
            })
            .unwrap_or(Criticality::Sheddable)
    }

    /// Whether the floor at `now` refuses `class`: whether a more critical class was refused
    /// within `cool`. The same answer as `class < self.at(now, cool)`, reading only the
    /// classes above `class`: one for a critical call, none for a critical-plus one.
    #[inline]
    pub(crate) fn holds_out(&self, class: Criticality, now: u64, cool: u64) -> bool {
        self.refused[class.rank() + 1..]
            .iter()
            .any(|at| at.is_some_and(|at| now.saturating_sub(at) < cool))
    }

    /// Remembers that a call of `class` was refused at `now`.
    pub(crate) fn refuse(&mut self, class: Criticality, now: u64) {
        self.refused[class.rank()] = Some(now);
    }
}

#[cfg(test)]
mod tests {
    use alloc::string::ToString;

    use super::*;

    #[test]
    fn classes_order_from_sheddable_to_critical_plus() {
        let mut sorted = Criticality::ALL;
        sorted.sort();
        assert_eq!(sorted, Criticality::ALL);
        for (rank, class) in Criticality::ALL.into_iter().enumerate() {
            assert_eq!(class.rank(), rank);
            assert_eq!(class.name().parse(), Ok(class));
            assert_eq!(class.to_string(), class.name());
        }
    }

    #[test]
    fn names_read_in_any_case_and_joining() {
        for s in [
            "CRITICAL_PLUS",
            "critical-plus",
            "CriticalPlus",
            " criticalplus\t",
        ] {
            assert_eq!(s.parse(), Ok(Criticality::CriticalPlus), "{s:?}");
        }
        for s in [
            "",
            "critical__plus",
            "critical plus",
            "criticalplusx",
            "sheddable_",
            "-",
        ] {
            assert_eq!(s.parse::<Criticality>(), Err(UnknownCriticality), "{s:?}");
        }
        assert_eq!(
            "Sheddable_Concurrent".parse(),
            Ok(Criticality::SheddableConcurrent)
        );
    }

    #[test]
    fn shares_are_fractions_that_never_rise_as_criticality_falls() {
        let odd = Shares {
            sheddable: f64::NAN,
            sheddable_concurrent: -1.0,
            critical: f64::INFINITY,
            critical_plus: 0.8,
        };
        // NaN reads as 1, then is capped by the class above (-1 → 0).
        assert_eq!(odd.of(Criticality::Sheddable), 0.0);
        assert_eq!(odd.of(Criticality::SheddableConcurrent), 0.0);
        // Infinity reads as 1, capped by critical_plus.
        assert_eq!(odd.of(Criticality::Critical), 0.8);
        assert_eq!(odd.of(Criticality::CriticalPlus), 0.8);
        let shares: [f64; 4] = Criticality::ALL.map(|class| SHARES.of(class));
        assert_eq!(shares, [0.5, 0.75, 1.0, 1.0]);
    }

    #[test]
    fn the_floor_is_the_most_critical_class_refused_within_the_cooling_time() {
        let mut floor = Floor::default();
        assert_eq!(floor.at(0, 1_000), Criticality::Sheddable);
        floor.refuse(Criticality::SheddableConcurrent, 100);
        floor.refuse(Criticality::Critical, 500);
        assert_eq!(floor.at(600, 1_000), Criticality::Critical);
        // The critical refusal has cooled; the sheddable-concurrent one too at 1100.
        assert_eq!(floor.at(1_500, 1_000), Criticality::Sheddable);
        assert_eq!(floor.at(1_099, 1_000), Criticality::Critical);
        floor.refuse(Criticality::Sheddable, u64::MAX);
        assert_eq!(floor.at(u64::MAX, u64::MAX), Criticality::Critical);
        // A zero cooling time never raises the floor.
        assert_eq!(floor.at(u64::MAX, 0), Criticality::Sheddable);
        // `holds_out` is `at` read against one class.
        let mut floor = Floor::default();
        floor.refuse(Criticality::SheddableConcurrent, 100);
        for now in [100, 500, 1_099, 1_100, 5_000] {
            for class in Criticality::ALL {
                assert_eq!(
                    floor.holds_out(class, now, 1_000),
                    class < floor.at(now, 1_000),
                    "{class} at {now}"
                );
            }
        }
    }
}
