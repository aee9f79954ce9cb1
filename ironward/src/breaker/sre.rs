//! The SRE throttle's constants and its weighing: equation 21-1 of the SRE book with
//! go-zero's refinements, as [`SreBreaker::check`](super::SreBreaker::check) takes it.

use core::time::Duration;

use crate::breaker::SreReason;
use crate::internal::constant::constant;
use crate::internal::float::unit;
use crate::window::grid;
#[cfg(doc)]
use crate::{SreBreaker, Window};

/// The constants of Google SRE client-side throttling, with go-zero's refinements.
///
/// `k` and `protection` are the K and the floor of equation 21-1 in the SRE book's chapter
/// "Handling Overload"; the decay of `k` towards `floor` while failures persist, the probe and
/// the recovery scaling are go-zero's additions (`core/breaker/googlebreaker.go`).
///
/// A policy is changed the Rust way: `Sre { k: 2.0, ..Sre::default() }`.
///
/// `k`, `floor` and `protection` mean something from 0 up to infinity. A negative value
/// (`-inf` included) is read as 0, and NaN as infinity, the value that refuses least; an
/// infinite `k`, `floor` or `protection` turns the throttle off, so every call goes through
/// and [`SreBreaker::ratio`] is 0. (The guide's
/// [edge cases](crate::_guide::edge_cases) state this rule for every policy constant.)
///
/// # Default
///
/// [`SRE`], go-zero's constants:
///
/// | field | value | meaning |
/// | --- | --- | --- |
/// | `k` | 1.5 | accepts are weighted by `k` while nothing is failing |
/// | `floor` | 1.1 | the weight `k` decays to as the failing run fills the window |
/// | `protection` | 5.0 | calls the breaker never refuses, however bad the record |
/// | `probe` | 1 s | after this long without letting a call through, one goes through |
/// | `size` | 40 | buckets in the window |
/// | `window` | 10 s | the history the breaker remembers |
///
/// # Examples
///
/// ```
/// use ironward::{Sre, SRE};
///
/// let eager = Sre { k: 2.0, ..Sre::default() };
/// assert_eq!(eager.floor, SRE.floor);
/// assert_eq!(Sre::default(), SRE);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default, deny_unknown_fields)
)]
pub struct Sre {
    /// How many times the accepted calls the breaker lets through before refusing any: 0 to
    /// infinity (infinity, and NaN, turn the throttle off).
    pub k: f64,
    /// The least `k` decays to while the newest buckets hold nothing but failures: 0 to
    /// infinity (infinity, and NaN, turn the throttle off).
    pub floor: f64,
    /// Calls allowed before any refusal, whatever the record shows: 0 to infinity (infinity,
    /// and NaN, turn the throttle off).
    pub protection: f64,
    /// The longest the breaker goes without letting a call through once it is refusing
    /// (strictly longer than this lets one through).
    #[cfg_attr(feature = "serde", serde(with = "crate::internal::humane"))]
    pub probe: Duration,
    /// Buckets in the window: 1 to 65 536, a size outside that read as the nearest end (see
    /// [`Window`]).
    pub size: usize,
    /// The span of history the window covers.
    #[cfg_attr(feature = "serde", serde(with = "crate::internal::humane"))]
    pub window: Duration,
}

/// The go-zero preset: k 1.5 decaying to 1.1, protection 5, a probe after 1 s, 40 buckets
/// over 10 s.
pub const SRE: Sre = Sre {
    k: 1.5,
    floor: 1.1,
    protection: 5.0,
    probe: Duration::from_secs(1),
    size: 40,
    window: Duration::from_secs(10),
};

impl Default for Sre {
    fn default() -> Self {
        SRE
    }
}

impl Sre {
    /// The reason [`SreBreaker::check`] refuses a call with when its window holds `total` calls
    /// (drops included), `accepts` successes and runs of `failing` and `working` buckets at
    /// its newest end, and the probe is not due; `None` when the throttle lets the call
    /// through at that draw.
    ///
    /// The same weighing, in the same float operations, as `check` makes: for a breaker
    /// shared between threads, which refuses from a copy of the window
    /// ([`SreBreaker::refusing`]) without its lock. `roll` is read as `check` reads it.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::SRE;
    ///
    /// // No accepts in 100 calls, one bucket of failures: (100 − 5 − 1.49·0) / 101.
    /// let reason = SRE.refusal(100, 0, 1, 0, 0.5).expect("under the drop fraction");
    /// assert_eq!((reason.total, reason.drop), (100, 95.0 / 101.0));
    /// assert_eq!(SRE.refusal(100, 0, 1, 0, 0.99), None);
    /// ```
    #[must_use]
    pub fn refusal(
        &self,
        total: u64,
        accepts: u64,
        failing: usize,
        working: usize,
        roll: f64,
    ) -> Option<SreReason> {
        self.throttle(accepts, failing, working)
            .refusal(total, roll)
    }

    /// The weighing [`refusal`](Sre::refusal) makes for a window of `accepts` successes and
    /// runs of `failing` and `working` buckets, worked out once for any count of calls.
    ///
    /// While a breaker refuses, only the count of calls changes from one refusal to the next
    /// (each adds a drop): the weight `k` has decayed to, its product with the accepts and the
    /// recovery scaling stay as they are. A breaker shared between threads works them out
    /// when it publishes its window and weighs each refusal with the one division left.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::SRE;
    ///
    /// let throttle = SRE.throttle(0, 1, 0);
    /// assert_eq!(throttle.refusal(100, 0.5), SRE.refusal(100, 0, 1, 0, 0.5));
    /// assert_eq!(throttle.refusal(100, 0.99), None);
    /// ```
    #[must_use]
    pub fn throttle(&self, accepts: u64, failing: usize, working: usize) -> SreThrottle {
        let (size, _) = grid(self.size, self.window);
        SreThrottle::new(&Constants::read(self), size, accepts, failing, working)
    }
}

/// A window's weighing by the SRE throttle, but for its count of calls: what
/// [`Sre::throttle`] works out once, and [`refusal`](SreThrottle::refusal) weighs a count of
/// calls against, in the same float operations as [`SreBreaker::check`].
///
/// Its fields are what the weighing reads, public so that a breaker shared between threads
/// can publish them in atomic words and read them back; a throttle put together by hand
/// weighs as its fields say.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SreThrottle {
    /// The weight `k` has decayed to over the failing run: the reason's `k`.
    pub w: f64,
    /// The calls never refused, as read: `f64::MAX` when the throttle is off.
    pub protection: f64,
    /// `w` times the accepts, the product the drop subtracts.
    pub weighted: f64,
    /// go-zero's recovery scaling, `(size − working) / size`, which the drop is multiplied
    /// by: exactly 1 with no working run.
    pub scale: f64,
    /// The accepts in the window.
    pub accepts: u64,
    /// Buckets in the failing run at the window's newest end.
    pub failing: usize,
    /// Buckets in the working run at the window's newest end.
    pub working: usize,
}

impl SreThrottle {
    /// SRE equation 21-1 with go-zero's decaying `k` over a window of `size` buckets, but for
    /// the count of calls.
    pub(super) fn new(
        constants: &Constants,
        size: usize,
        accepts: u64,
        failing: usize,
        working: usize,
    ) -> Self {
        let Constants {
            k,
            floor,
            protection,
        } = *constants;
        let runs = failing as f64;
        let buckets = size as f64;
        let decay = (k - floor) * runs;
        // The decay is a fraction of `k − floor`; multiplied first, as go-zero does, it can
        // pass `f64::MAX` for a `k` or `floor` near it, and is then divided first instead.
        let decay = if decay.is_finite() {
            decay / buckets
        } else {
            (k - floor) * (runs / buckets)
        };
        let w = (k - decay).max(floor);
        // A run longer than the window (only from counts given to `Sre::refusal`) eases it all.
        let scale = if working == 0 {
            1.0
        } else {
            (size - working.min(size)) as f64 / buckets
        };
        Self {
            w,
            protection,
            weighted: w * accepts as f64,
            scale,
            accepts,
            failing,
            working,
        }
    }

    /// The drop fraction before recovery over `total` calls: `(total − protection −
    /// w·accepts) / (total + 1)`.
    #[inline]
    pub(super) fn drop(&self, total: u64) -> f64 {
        let total = total as f64;
        (total - self.protection - self.weighted) / (total + 1.0)
    }

    /// The reason a draw of `roll` over a window of `total` calls is refused with, before the
    /// probe is considered; `None` when the throttle lets it through. `roll` is read as
    /// [`SreBreaker::check`] reads it.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::SRE;
    ///
    /// // No accepts in 100 calls, one bucket of failures: (100 − 5 − 1.49·0) / 101.
    /// let reason = SRE.throttle(0, 1, 0).refusal(100, 0.5).expect("under the drop fraction");
    /// assert_eq!((reason.k, reason.drop), (1.49, 95.0 / 101.0));
    /// ```
    #[inline]
    #[must_use]
    pub fn refusal(&self, total: u64, roll: f64) -> Option<SreReason> {
        let drop = self.drop(total);
        if drop <= 0.0 {
            return None;
        }
        let (roll, drop) = (unit(roll), self.recover(drop));
        (roll < drop).then(|| self.reason(total, drop, roll))
    }

    /// The reason a refusal of `roll` under `drop` over `total` calls carries.
    #[inline]
    pub(super) fn reason(&self, total: u64, drop: f64, roll: f64) -> SreReason {
        SreReason {
            total,
            accepts: self.accepts,
            failing: self.failing,
            working: self.working,
            k: self.w,
            drop,
            roll,
        }
    }

    /// go-zero's recovery scaling: a run of all-success buckets eases the throttle. Without
    /// one the scale is exactly 1, and the product is the drop itself.
    #[inline]
    pub(super) fn recover(&self, drop: f64) -> f64 {
        drop * self.scale
    }
}

/// The refusal of a draw of `roll` against `history`, before the probe is considered: the
/// throttle's steps 1 to 3 as [`SreBreaker::check`] takes them.
pub(super) fn refusal(
    constants: &Constants,
    size: usize,
    history: &History,
    roll: f64,
) -> Option<SreReason> {
    history
        .throttle(constants, size)
        .refusal(history.total, roll)
}

impl History {
    /// The weighing of this history's accepts and runs.
    pub(super) fn throttle(&self, constants: &Constants, size: usize) -> SreThrottle {
        SreThrottle::new(constants, size, self.accepts, self.failing, self.working)
    }
}

/// The float constants of an [`Sre`] as the breaker reads them: finite and not negative.
///
/// Each is held to `[0, inf]`, NaN read as infinity (the value that refuses least). When one
/// is infinite the throttle is off, which is kept as a protection no count can use up, with
/// weights of 0: every drop is then about `−f64::MAX`, so the decision needs no case of its
/// own and no product of infinities can make a NaN.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Constants {
    pub(super) k: f64,
    pub(super) floor: f64,
    pub(super) protection: f64,
}

impl Constants {
    pub(super) fn read(sre: &Sre) -> Self {
        let read = |x| constant(x, 0.0, f64::INFINITY, f64::INFINITY);
        let (k, floor, protection) = (read(sre.k), read(sre.floor), read(sre.protection));
        if k == f64::INFINITY || floor == f64::INFINITY || protection == f64::INFINITY {
            Self {
                k: 0.0,
                floor: 0.0,
                protection: f64::MAX,
            }
        } else {
            Self {
                k,
                floor,
                protection,
            }
        }
    }
}

/// What the window says at one instant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct History {
    pub(super) accepts: u64,
    pub(super) total: u64,
    pub(super) working: usize,
    pub(super) failing: usize,
}
