//! The policy of an adaptive limiter: its algorithm, its sampling, its classes' shares or
//! partitions, the cooling time of its floor and how often it probes.

use core::time::Duration;

#[cfg(doc)]
use super::Estimator;
use super::{Algorithm, LITTLE, Partitions, SAMPLING, Sampling};
use crate::criticality::{SHARES, Shares};

/// The policy of a [`Limiter`](super::Limiter): the algorithm that moves the limit, how
/// finished calls are sampled for it, and how the limit is shared between criticalities.
///
/// A policy is changed the Rust way: `Adaptive { cool: Duration::ZERO, ..ADAPTIVE }`.
///
/// The default is not Netflix's. Netflix's Vegas holds a limit ten times the optimum in front
/// of a processor-sharing backend and takes minutes to leave a limit of 1000; Little comes
/// within 2× of the optimum in 10 s from any start in the convergence scenarios
/// [`Little`](super::Little) cites. Its price is its first window: it measures the backend
/// with one call in flight, for one sampling window, before it admits up to its initial
/// limit. Netflix's algorithms are one field away, decided as Netflix's are with the
/// reference's sampling and no probe:
///
/// ```
/// use core::time::Duration;
/// use ironward::limit::{Algorithm, SAMPLING, VEGAS};
/// use ironward::{ADAPTIVE, Adaptive};
///
/// let netflix = Adaptive {
///     algorithm: Algorithm::Vegas(VEGAS),
///     sampling: SAMPLING,
///     probe: Duration::ZERO,
///     ..ADAPTIVE
/// };
/// # assert_ne!(netflix, ADAPTIVE);
/// ```
///
/// # Default
///
/// [`ADAPTIVE`]:
///
/// | field | value | meaning |
/// | --- | --- | --- |
/// | `algorithm` | [`Little`](super::Little) at [`LITTLE`] | the limit moved to Little's-law estimate of the backend's concurrency |
/// | `sampling` | [`SAMPLING`] with [`fill`](Sampling::fill) | Netflix's `WindowedLimit` defaults, a window short of `size` calls kept open until it holds them |
/// | `shares` | [`SHARES`] | half the limit for the sheddable, three quarters for the sheddable-concurrent, all of it for the critical |
/// | `partitions` | `None` | the classes are held to their `shares` (ceilings), not to reservations |
/// | `cool` | 1 s | how long the classes below a refused one stay refused |
/// | `probe` | 10 s | how often the limiter drains to measure the latency with no queue: BBR's `ProbeRTT` interval (not Netflix's, whose limiters never drain; 0 turns it off) |
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::limit::{AIMD, Algorithm};
/// use ironward::{ADAPTIVE, Adaptive};
///
/// let aimd = Adaptive { algorithm: Algorithm::Aimd(AIMD), ..ADAPTIVE };
/// assert_eq!(aimd.cool, Duration::from_secs(1));
/// assert_eq!(Adaptive::default(), ADAPTIVE);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default, deny_unknown_fields)
)]
pub struct Adaptive {
    /// The algorithm that moves the limit, with its constants.
    pub algorithm: Algorithm,
    /// How the latencies of finished calls become the algorithm's samples.
    pub sampling: Sampling,
    /// The share of the limit each criticality may fill: a ceiling per class over all calls
    /// in flight. Not read while `partitions` is set.
    pub shares: Shares,
    /// A part of the limit reserved to each criticality, in place of `shares`' ceilings:
    /// Netflix's partitions, where a class borrows what the others leave unused while the
    /// limit has room and gets its reservation back when it returns. `None`, the default,
    /// admits by `shares`. [`Partitions`] says when to choose which.
    ///
    /// ```
    /// use ironward::{ADAPTIVE, Adaptive, Partitions};
    ///
    /// let batch_and_live = Partitions { sheddable: 0.3, critical: 0.7, ..Partitions::NONE };
    /// let policy = Adaptive { partitions: Some(batch_and_live), ..ADAPTIVE };
    /// # assert_ne!(policy, ADAPTIVE);
    /// ```
    pub partitions: Option<Partitions>,
    /// How long after a call of one class is refused (for want of room, or by the floor
    /// itself) the classes below it are refused outright; zero turns the floor off.
    #[cfg_attr(feature = "serde", serde(with = "crate::internal::humane"))]
    pub cool: Duration,
    /// How often the limiter drains to measure the backend's latency with no queue; zero
    /// never, which decides as Netflix's limiters do.
    ///
    /// Vegas keeps the least latency it has seen as the latency with no queue, so a backend
    /// that slows for good reads as a queue and the limit collapses; Gradient2's long average
    /// follows a standing queue up, so the limit runs away. Neither can tell the two apart
    /// from latencies alone. With a probe, every `probe` the limiter admits calls only while
    /// fewer than half the limit are in flight ([`Estimator::probe_room`]: Little asks for
    /// one call at first, and for a quarter one window later while probes find a queue),
    /// which empties the backend's queue, for one sampling window
    /// ([`Sampling::min_window`]) of calls let in since, or as many as it
    /// takes to hold [`Sampling::size`] calls; that window's latency is then the estimator's
    /// baseline ([`Estimator::rebase`]) in place of its sample (unless a call of it was
    /// dropped: then it is a sample like any other). A probe no call ends within four windows
    /// ([`Sampling::max_window`]) is given up until the next. A call refused only because
    /// the probe halved the room raises the floor to the class below its own, not to its own:
    /// the sheddable still go first, and a critical-plus call the probe turns away does not
    /// hold out the critical.
    ///
    /// The price is up to half the throughput for one window every `probe`: with the
    /// defaults, a second in eleven at half the limit, about 5 % of a saturated backend's
    /// throughput. A longer `probe` costs less and follows a shifted backend later. This is BBR's `ProbeRTT` state
    /// (draft-ietf-ccwg-bbr) for a concurrency limit: a short dip in admissions buys a
    /// baseline that follows the backend both ways.
    #[cfg_attr(feature = "serde", serde(with = "crate::internal::humane"))]
    pub probe: Duration,
}

/// The default [`Adaptive`]: Little with windows that fill, a probe every 10 s, the SRE
/// book's classes.
pub const ADAPTIVE: Adaptive = Adaptive {
    algorithm: Algorithm::Little(LITTLE),
    sampling: Sampling {
        fill: true,
        ..SAMPLING
    },
    shares: SHARES,
    partitions: None,
    cool: Duration::from_secs(1),
    probe: Duration::from_secs(10),
};

impl Default for Adaptive {
    fn default() -> Self {
        ADAPTIVE
    }
}
