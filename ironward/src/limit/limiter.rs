//! The limiter: calls in flight against an adaptive limit, admitted by criticality.

use core::fmt;
use core::time::Duration;

use super::{Algorithm, Estimator, SAMPLING, Sampler, Sampling, VEGAS};
use crate::clock::{Latest, nanos};
use crate::criticality::{Criticality, Floor, SHARES, Shares};

/// The policy of a [`Limiter`]: the algorithm that moves the limit, how finished calls are
/// sampled for it, and how the limit is shared between criticalities.
///
/// A policy is changed the Rust way: `Adaptive { cool: Duration::ZERO, ..ADAPTIVE }`.
///
/// # Default
///
/// [`ADAPTIVE`]:
///
/// | field | value | meaning |
/// | --- | --- | --- |
/// | `algorithm` | [`Vegas`](super::Vegas) at [`VEGAS`] | Netflix concurrency-limits' default limit for its `SimpleLimiter` |
/// | `sampling` | [`SAMPLING`] | Netflix's `WindowedLimit` defaults |
/// | `shares` | [`SHARES`] | half the limit for the sheddable, three quarters for the sheddable-concurrent, all of it for the critical |
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
    /// The share of the limit each criticality may fill.
    pub shares: Shares,
    /// How long after a call of one class is refused (for want of room, or by the floor
    /// itself) the classes below it are refused outright; zero turns the floor off.
    #[cfg_attr(feature = "serde", serde(with = "crate::humane"))]
    pub cool: Duration,
    /// How often the limiter drains to measure the backend's latency with no queue; zero
    /// never, which decides as Netflix's limiters do.
    ///
    /// Vegas keeps the least latency it has seen as the latency with no queue, so a backend
    /// that slows for good reads as a queue and the limit collapses; Gradient2's long average
    /// follows a standing queue up, so the limit runs away. Neither can tell the two apart
    /// from latencies alone. With a probe, every `probe` the limiter admits calls only while
    /// fewer than half the limit are in flight, which empties the backend's queue, for one
    /// sampling window ([`Sampling::min_window`]) of calls let in since, or as many as it
    /// takes to hold [`Sampling::size`] calls; that window's latency is then the estimator's
    /// baseline ([`Estimator::rebase`]) in place of its sample (unless a call of it was
    /// dropped: then it is a sample like any other). A call refused only because
    /// the probe halved the room raises the floor to the class below its own, not to its own:
    /// the sheddable still go first, and a critical-plus call the probe turns away does not
    /// hold out the critical.
    ///
    /// The price is up to half the throughput for one window every `probe`: with the
    /// defaults, a second in eleven at half the limit, about 5 % of a saturated backend's
    /// throughput. A longer `probe` costs less and follows a shifted backend later. This is BBR's `ProbeRTT` state
    /// (draft-ietf-ccwg-bbr) for a concurrency limit: a short dip in admissions buys a
    /// baseline that follows the backend both ways.
    #[cfg_attr(feature = "serde", serde(with = "crate::humane"))]
    pub probe: Duration,
}

/// The default [`Adaptive`]: Netflix concurrency-limits' defaults, the SRE book's classes.
pub const ADAPTIVE: Adaptive = Adaptive {
    algorithm: Algorithm::Vegas(VEGAS),
    sampling: SAMPLING,
    shares: SHARES,
    cool: Duration::from_secs(1),
    probe: Duration::from_secs(10),
};

impl Default for Adaptive {
    fn default() -> Self {
        ADAPTIVE
    }
}

/// An adaptive concurrency limit: admits a call while fewer than the limit are in flight,
/// and moves the limit with the latencies and drops of the calls that finish.
///
/// A call asks with [`acquire`](Limiter::acquire) (or [`acquire_as`](Limiter::acquire_as)
/// with its [`Criticality`]) and, once it has finished, is settled with
/// [`settle`](Limiter::settle): its latency is what the clock reads then less what it read
/// when the call was let in. Every latency goes to the [`Sampler`]; each window it closes
/// goes to the [`Estimator`], whose answer is the limit from then on.
///
/// Time is passed in, as everywhere in the core: a limiter never reads a clock, so a test
/// drives an hour of traffic as a loop over `now`.
///
/// # When to use it
///
/// The [`Breaker`](crate::Breaker) decides on failures: it protects a backend that errors. The
/// [`Shedder`](crate::Shedder) decides on this server's own CPU and throughput: it protects
/// the server it runs in. The limiter decides on latency: it protects a backend that slows
/// down without failing, by keeping no more calls in flight than the backend completes at
/// its best latency (Little's law), and finds that number without being told it. In front of
/// a backend that can both fail and slow down, put a breaker and a limiter together.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::limit::{AIMD, Aimd, Algorithm};
/// use ironward::{Criticality, ADAPTIVE, Adaptive, Limiter, Settle};
///
/// let ms = Duration::from_millis;
/// let aimd = Aimd { initial: 2, min: 1, ..AIMD };
/// let policy = Adaptive { algorithm: Algorithm::Aimd(aimd), ..ADAPTIVE };
/// let mut limiter = Limiter::new(policy, ms(0));
/// let first = limiter.acquire(ms(0)).expect("room");
/// let second = limiter.acquire(ms(1)).expect("room");
/// let refused = limiter.acquire(ms(2)).expect_err("full");
/// assert_eq!((refused.flying, refused.limit), (2, 2));
/// limiter.settle(first, Settle::Success, ms(40));
/// // One call has left: there is room again, but not for a sheddable one (half of 2 is 1).
/// assert!(limiter.acquire_as(ms(41), Criticality::Sheddable).is_err());
/// let third = limiter.acquire(ms(41)).expect("room");
/// limiter.settle(second, Settle::Success, ms(45));
/// limiter.settle(third, Settle::Ignored, ms(50));
/// assert_eq!(limiter.flying(), 0);
/// ```
#[derive(Debug, Clone)]
pub struct Limiter {
    policy: Adaptive,
    estimator: Estimator,
    sampler: Sampler,
    /// Calls let in and not yet settled.
    flying: u32,
    floor: Floor,
    /// `policy.shares` as read ([`Shares::of`]) and `policy.cool` in nanoseconds, worked out
    /// once per policy rather than on every call.
    shares: [f64; 4],
    cool: u64,
    /// When the next probe starts, in nanoseconds; `None` for never.
    probe_at: Option<u64>,
    /// The probe under way, if one is.
    drain: Option<Drain>,
    clock: Latest,
}

/// A probe under way: when it began.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Drain {
    since: u64,
}

/// A call the [`Limiter`] let in: when, how many were in flight with it, and its class.
///
/// [`Limiter::settle`] consumes it. Not `Clone`, so a call cannot leave flight twice;
/// dropping a grant unsettled leaves the call counted in flight.
#[must_use = "settle the grant with Limiter::settle once the call has finished, or it stays counted in flight"]
#[derive(Debug, PartialEq, Eq)]
pub struct Grant {
    start: u64,
    flying: u32,
    class: Criticality,
}

impl Grant {
    /// When the call was let in, on the limiter's clock.
    #[must_use]
    pub fn start(&self) -> Duration {
        Duration::from_nanos(self.start)
    }

    /// The calls in flight once this one was let in, itself included: what the algorithm
    /// weighs the call's latency against.
    #[must_use]
    pub fn flying(&self) -> u32 {
        self.flying
    }

    /// The class the call asked as.
    #[must_use]
    pub fn criticality(&self) -> Criticality {
        self.class
    }
}

/// How a call the [`Limiter`] let in ended, as [`Limiter::settle`] is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Settle {
    /// The call finished: its latency is a sample of the backend's.
    Success,
    /// The backend shed the call or it timed out: a sign of overload, which every algorithm
    /// answers by lowering the limit (Netflix's `onDropped`).
    Dropped,
    /// The call failed in a way that says nothing of load (a bad request, a cancellation):
    /// it leaves flight and is not sampled (Netflix's `onIgnore`).
    Ignored,
}

/// Why a [`Limiter`] refused a call: what was in flight, the limit, and the class's room.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::{Criticality, ADAPTIVE, Limiter};
///
/// let mut limiter = Limiter::new(ADAPTIVE, Duration::ZERO);
/// let grants: Vec<_> = (0..10).map(|_| limiter.acquire(Duration::ZERO).unwrap()).collect();
/// let reason = limiter.acquire_as(Duration::ZERO, Criticality::Sheddable).unwrap_err();
/// assert_eq!((reason.flying, reason.limit, reason.room), (10, 20, 10));
/// assert_eq!(
///     reason.to_string(),
///     "limiter refused a sheddable call: 10 in flight fill its room of 10 (limit 20)",
/// );
/// # drop(grants);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LimiterReason {
    /// Calls in flight, not counting this one.
    pub flying: u32,
    /// The limit admissions were held to: the estimator's, halved while a probe drains.
    pub limit: u32,
    /// How many calls in flight the class may join: the limit times the class's share.
    pub room: u32,
    /// The class the call asked as.
    pub criticality: Criticality,
    /// The least critical class admitted at the time. A `criticality` below it was refused
    /// because a more critical call was refused within the cooling time, whatever the room.
    pub floor: Criticality,
    /// A probe was draining ([`Adaptive::probe`]), so `limit` is half the estimator's.
    pub probing: bool,
}

impl fmt::Display for LimiterReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "limiter refused a {} call: ", self.criticality)?;
        if self.criticality < self.floor {
            write!(
                f,
                "classes below {} are refused after a refusal ({} in flight, limit {})",
                self.floor, self.flying, self.limit
            )
        } else {
            write!(
                f,
                "{} in flight fill its room of {} (limit {}{})",
                self.flying,
                self.room,
                self.limit,
                if self.probing {
                    ", halved by a probe"
                } else {
                    ""
                }
            )
        }
    }
}

impl core::error::Error for LimiterReason {}

impl Limiter {
    /// A limiter at the algorithm's initial limit, nothing in flight, the first sampling
    /// window opening at `now`.
    pub fn new(policy: Adaptive, now: Duration) -> Self {
        Self {
            estimator: Estimator::new(policy.algorithm),
            sampler: Sampler::new(policy.sampling, now),
            shares: policy.shares.read(),
            cool: nanos(policy.cool),
            probe_at: next_probe(nanos(now), policy.probe),
            drain: None,
            policy,
            flying: 0,
            floor: Floor::default(),
            clock: Latest::new(now),
        }
    }

    /// Asks to start a [`Criticality::Critical`] call at `now`: a grant to settle once the
    /// call has finished, or the reason it was refused.
    ///
    /// This is [`acquire_as`](Limiter::acquire_as) with the default class, which may fill the
    /// whole limit.
    #[inline]
    #[must_use = "dropping the answer loses the Grant: the call stays counted in flight forever, and a refusal is ignored"]
    pub fn acquire(&mut self, now: Duration) -> Result<Grant, LimiterReason> {
        self.acquire_as(now, Criticality::Critical)
    }

    /// Asks to start a call of class `criticality` at `now`.
    ///
    /// The call is let in when its class is at or above the floor (no more critical call
    /// has been refused within [`Adaptive::cool`]) and fewer calls are in flight than its room,
    /// the limit times its share ([`Shares::of`]). A refused call, for want of room or by
    /// the floor, holds the floor at least at its class for the cooling time.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::{Criticality, ADAPTIVE, Limiter};
    ///
    /// let ms = Duration::from_millis;
    /// let mut limiter = Limiter::new(ADAPTIVE, ms(0));
    /// let grants: Vec<_> = (0..20).map(|_| limiter.acquire(ms(0)).unwrap()).collect();
    /// // Full: a critical call is refused, and for a second after it the sheddable are
    /// // refused even with room.
    /// assert!(limiter.acquire(ms(1)).is_err());
    /// for grant in grants {
    ///     limiter.settle(grant, ironward::Settle::Ignored, ms(2));
    /// }
    /// let reason = limiter.acquire_as(ms(3), Criticality::Sheddable).unwrap_err();
    /// assert_eq!(reason.floor, Criticality::Critical);
    /// assert!(limiter.acquire_as(ms(1_001), Criticality::Sheddable).is_ok());
    /// ```
    #[inline]
    #[must_use = "dropping the answer loses the Grant: the call stays counted in flight forever, and a refusal is ignored"]
    pub fn acquire_as(
        &mut self,
        now: Duration,
        criticality: Criticality,
    ) -> Result<Grant, LimiterReason> {
        let now = self.clock.advance(now);
        if self.drain.is_none() && self.probe_at.is_some_and(|at| now >= at) {
            self.drain = Some(Drain { since: now });
            // A whole window: a shorter one is closed by its fast calls before its slow ones
            // finish, and reads the latency low.
            let length = self.policy.sampling.min_window;
            self.sampler.restart(Duration::from_nanos(now), length);
        }
        let limit = self.in_force(self.drain.is_some());
        let room = room(limit, self.shares[criticality.rank()]);
        if self.flying >= room || self.floor.holds_out(criticality, now, self.cool) {
            let floor = self.floor.at(now, self.cool);
            // A refusal only a probe's halved room makes is the probe's, not overload's: it
            // holds out the classes below the one under the refused call's, not the refused
            // call's own, so that a critical-plus call the probe turns away leaves the
            // critical their room, and the sheddable still go first.
            let overload = criticality < floor
                || self.flying
                    >= self::room(self.estimator.limit(), self.shares[criticality.rank()]);
            match (overload, criticality.rank()) {
                (true, _) => self.floor.refuse(criticality, now),
                (false, 0) => {}
                (false, rank) => self.floor.refuse(Criticality::ALL[rank - 1], now),
            }
            return Err(LimiterReason {
                flying: self.flying,
                limit,
                room,
                criticality,
                floor,
                probing: self.drain.is_some(),
            });
        }
        self.flying += 1;
        Ok(Grant {
            start: now,
            flying: self.flying,
            class: criticality,
        })
    }

    /// The call behind `grant` ended at `now` as `settle` says: it leaves flight and, unless
    /// ignored, its latency (`now` less its start) is sampled, which may close a window and
    /// move the limit.
    pub fn settle(&mut self, grant: Grant, settle: Settle, now: Duration) {
        let now = self.clock.advance(now);
        self.flying = self.flying.saturating_sub(1);
        let dropped = match settle {
            Settle::Success => false,
            Settle::Dropped => true,
            Settle::Ignored => return,
        };
        if self.drain.is_some_and(|drain| grant.start < drain.since) {
            // Let in before the probe began, it may have queued: the probe's window is only
            // of calls let in while it drains.
            return;
        }
        let rtt = Duration::from_nanos(now.saturating_sub(grant.start));
        let Some(sample) = self
            .sampler
            .add(Duration::from_nanos(now), rtt, grant.flying, dropped)
        else {
            return;
        };
        if self.drain.take().is_some() {
            self.probe_at = next_probe(now, self.policy.probe);
            if !sample.dropped {
                self.estimator.rebase(sample.rtt);
                return;
            }
            // Dropped even at half the limit: overload, which the algorithm must hear of,
            // and no measure of the latency with no queue.
        }
        self.estimator.update(sample);
    }

    /// Whether [`acquire_as`](Limiter::acquire_as) at `now` would let a call of
    /// `criticality` in, recording nothing: for a caller that holds calls back (a queue) and
    /// asks only when one would be admitted, since a refusal raises the floor.
    ///
    /// A probe that is due at `now` counts as begun, halving the room, as `acquire_as` would
    /// begin it.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::{ADAPTIVE, Criticality, Limiter};
    ///
    /// let mut limiter = Limiter::new(ADAPTIVE, Duration::ZERO);
    /// let grants: Vec<_> = (0..10).map(|_| limiter.acquire(Duration::ZERO).unwrap()).collect();
    /// assert!(limiter.admits(Duration::ZERO, Criticality::Critical));
    /// assert!(!limiter.admits(Duration::ZERO, Criticality::Sheddable), "half of 20 is taken");
    /// // At 10 s a probe is due: half the limit, and the 10 in flight fill it.
    /// assert!(!limiter.admits(Duration::from_secs(10), Criticality::Critical));
    /// # drop(grants);
    /// ```
    #[must_use]
    pub fn admits(&self, now: Duration, criticality: Criticality) -> bool {
        let now = self.clock.read(now);
        let probing = self.drain.is_some() || self.probe_at.is_some_and(|at| now >= at);
        let room = room(self.in_force(probing), self.shares[criticality.rank()]);
        self.flying < room && !self.floor.holds_out(criticality, now, self.cool)
    }

    /// The limit admissions are held to: the estimator's, or half of it while a probe drains.
    fn in_force(&self, probing: bool) -> u32 {
        let limit = self.estimator.limit();
        if probing { (limit / 2).max(1) } else { limit }
    }

    /// The limit now: the estimator's, whether or not a probe is draining.
    #[must_use]
    pub fn limit(&self) -> u32 {
        self.estimator.limit()
    }

    /// Whether a probe ([`Adaptive::probe`]) is draining: admissions are held to half the
    /// limit until it has measured the latency with no queue.
    #[must_use]
    pub fn probing(&self) -> bool {
        self.drain.is_some()
    }

    /// Calls let in and not yet settled.
    #[must_use]
    pub fn flying(&self) -> u32 {
        self.flying
    }

    /// How many calls in flight a call of `criticality` may join now: the limit times its
    /// share. The floor may still refuse it; see [`floor`](Limiter::floor).
    #[must_use]
    pub fn room(&self, criticality: Criticality) -> u32 {
        room(
            self.in_force(self.drain.is_some()),
            self.shares[criticality.rank()],
        )
    }

    /// The least critical class admitted at `now`.
    #[must_use]
    pub fn floor(&self, now: Duration) -> Criticality {
        self.floor.at(self.clock.read(now), nanos(self.policy.cool))
    }

    /// The algorithm's state.
    #[must_use]
    pub fn estimator(&self) -> &Estimator {
        &self.estimator
    }

    /// The policy in force.
    #[must_use]
    pub fn policy(&self) -> &Adaptive {
        &self.policy
    }

    /// Changes the policy in place at `now`, keeping the calls in flight, the limit reached
    /// (within the new algorithm's bounds, see [`Estimator::retune`]), the open sampling
    /// window (see [`Sampler::retune`]) and the floor.
    pub fn retune(&mut self, policy: Adaptive, now: Duration) {
        let now = Duration::from_nanos(self.clock.advance(now));
        self.estimator.retune(policy.algorithm);
        self.sampler.retune(policy.sampling, now);
        self.shares = policy.shares.read();
        self.cool = nanos(policy.cool);
        if policy.probe != self.policy.probe {
            self.probe_at = next_probe(nanos(now), policy.probe);
            if policy.probe.is_zero() {
                self.drain = None;
            }
        }
        self.policy = policy;
    }
}

/// When the probe after one ending at `now` starts: `probe` later, or never for a zero one.
fn next_probe(now: u64, probe: Duration) -> Option<u64> {
    (!probe.is_zero()).then(|| now.saturating_add(nanos(probe)))
}

/// The calls in flight a class with `share` of `limit` may join: the product, truncated.
fn room(limit: u32, share: f64) -> u32 {
    // `share` is in [0, 1], so the product is in [0, limit] and the cast exact on truncation.
    (f64::from(limit) * share) as u32
}

#[cfg(test)]
mod tests {
    use alloc::string::ToString;
    use alloc::vec::Vec;

    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// A limiter at the default policy with `n` critical calls in flight.
    fn holding(n: usize) -> (Limiter, Vec<Grant>) {
        let mut limiter = Limiter::new(ADAPTIVE, ms(0));
        let grants = (0..n)
            .map(|_| limiter.acquire(ms(0)).expect("room"))
            .collect();
        (limiter, grants)
    }

    #[test]
    fn each_class_may_fill_its_share_of_the_limit() {
        let limit = Limiter::new(ADAPTIVE, ms(0)).limit();
        for class in Criticality::ALL {
            let (mut limiter, grants) = holding(0);
            let room = limiter.room(class);
            assert_eq!(room, (f64::from(limit) * SHARES.of(class)) as u32);
            let mine: Vec<_> = (0..room)
                .map(|i| {
                    let grant = limiter.acquire_as(ms(1), class).expect("within room");
                    assert_eq!((grant.flying(), grant.criticality()), (i + 1, class));
                    grant
                })
                .collect();
            let reason = limiter.acquire_as(ms(1), class).unwrap_err();
            assert_eq!(
                reason,
                LimiterReason {
                    flying: room,
                    limit,
                    room,
                    criticality: class,
                    floor: Criticality::Sheddable,
                    probing: false,
                }
            );
            drop((grants, mine));
        }
    }

    #[test]
    fn a_refusal_for_room_keeps_the_less_critical_out_for_the_cooling_time() {
        let (mut limiter, grants) = holding(20);
        assert_eq!(limiter.limit(), 20);
        let refused = limiter.acquire(ms(5)).unwrap_err();
        assert_eq!(refused.floor, Criticality::Sheddable, "the floor it met");
        for grant in grants {
            limiter.settle(grant, Settle::Ignored, ms(6));
        }
        assert_eq!(limiter.floor(ms(6)), Criticality::Critical);
        for class in [Criticality::Sheddable, Criticality::SheddableConcurrent] {
            let reason = limiter.acquire_as(ms(7), class).unwrap_err();
            assert_eq!((reason.flying, reason.floor), (0, Criticality::Critical));
            assert_eq!(
                reason.to_string(),
                alloc::format!(
                    "limiter refused a {class} call: classes below critical are refused after a refusal (0 in flight, limit 20)"
                )
            );
        }
        // The floor steps down a class at a time: the sheddable-concurrent refused at 7 ms
        // hold it a cooling time after the critical refusal has cooled.
        assert_eq!(limiter.floor(ms(1_004)), Criticality::Critical);
        assert_eq!(limiter.floor(ms(1_005)), Criticality::SheddableConcurrent);
        let concurrent = limiter
            .acquire_as(ms(1_005), Criticality::SheddableConcurrent)
            .expect("at the floor");
        assert_eq!(limiter.floor(ms(1_007)), Criticality::Sheddable);
        let back = limiter
            .acquire_as(ms(1_007), Criticality::Sheddable)
            .expect("cooled");
        limiter.settle(back, Settle::Ignored, ms(1_008));
        limiter.settle(concurrent, Settle::Ignored, ms(1_008));
        // The floor's own class and those above it are admitted while it stands.
        let (mut limiter, grants) = holding(20);
        let _ = limiter
            .acquire_as(ms(1), Criticality::CriticalPlus)
            .unwrap_err();
        for grant in grants {
            limiter.settle(grant, Settle::Ignored, ms(1));
        }
        assert!(
            limiter.acquire(ms(2)).is_err(),
            "critical is below critical_plus"
        );
        let plus = limiter
            .acquire_as(ms(2), Criticality::CriticalPlus)
            .expect("room");
        limiter.settle(plus, Settle::Ignored, ms(3));
    }

    #[test]
    fn a_zero_cooling_time_turns_the_floor_off() {
        let policy = Adaptive {
            cool: Duration::ZERO,
            ..ADAPTIVE
        };
        let mut limiter = Limiter::new(policy, ms(0));
        let grants: Vec<_> = (0..20).map(|_| limiter.acquire(ms(0)).unwrap()).collect();
        assert!(
            limiter
                .acquire_as(ms(0), Criticality::CriticalPlus)
                .is_err()
        );
        for grant in grants {
            limiter.settle(grant, Settle::Ignored, ms(0));
        }
        let grant = limiter
            .acquire_as(ms(0), Criticality::Sheddable)
            .expect("no floor");
        limiter.settle(grant, Settle::Ignored, ms(0));
    }

    #[test]
    fn settling_never_underflows_and_a_clock_that_steps_back_measures_no_negative_latency() {
        let mut other = Limiter::new(ADAPTIVE, ms(0));
        let stranger = other.acquire(ms(50)).unwrap();
        let mut limiter = Limiter::new(ADAPTIVE, ms(100));
        limiter.settle(stranger, Settle::Success, ms(10));
        assert_eq!(limiter.flying(), 0);
        let grant = limiter.acquire(ms(40)).unwrap();
        assert_eq!(grant.start(), ms(100), "read as the latest seen");
        limiter.settle(grant, Settle::Dropped, Duration::ZERO);
        assert_eq!(limiter.flying(), 0);
        let late = limiter.acquire(Duration::MAX).unwrap();
        limiter.settle(late, Settle::Success, Duration::MAX);
        assert_eq!(limiter.flying(), 0);
    }

    /// A call every 10 ms over `span` (in ms), each taking `rtt` ms, settled in time order.
    fn traffic(limiter: &mut Limiter, span: core::ops::Range<u64>, rtt: u64) {
        let mut open = alloc::collections::VecDeque::new();
        for t in span.step_by(10) {
            while open.front().is_some_and(|&(done, _)| done <= t) {
                let (done, grant) = open.pop_front().unwrap();
                limiter.settle(grant, Settle::Success, ms(done));
            }
            open.push_back((t + rtt, limiter.acquire(ms(t)).expect("room")));
        }
        for (done, grant) in open {
            limiter.settle(grant, Settle::Success, ms(done));
        }
    }

    #[test]
    fn a_probe_drains_to_half_the_limit_and_rebases_on_a_window_of_its_own_calls() {
        use crate::limit::{AIMD, Aimd, Algorithm, GRADIENT2, Gradient2, SAMPLING, Sampling};
        let sampling = Sampling {
            size: 4,
            min_window: ms(100),
            max_window: ms(100),
            ..SAMPLING
        };
        let policy = Adaptive {
            algorithm: Algorithm::Gradient2(Gradient2 {
                initial: 40,
                ..GRADIENT2
            }),
            sampling,
            probe: ms(1_000),
            ..ADAPTIVE
        };
        let mut limiter = Limiter::new(policy, ms(0));
        // Before the probe: 20 ms calls, windows of which feed the long average.
        traffic(&mut limiter, 0..900, 20);
        assert!(limiter.estimator().baseline() < Some(ms(21)));
        assert!(!limiter.probing());
        let old: Vec<_> = (0..25).map(|_| limiter.acquire(ms(990)).unwrap()).collect();
        // The probe starts at 1 s: half the limit of 40, so 25 in flight refuse the next.
        let reason = limiter.acquire(ms(1_000)).unwrap_err();
        assert!(limiter.probing() && reason.probing);
        assert_eq!(
            (
                reason.limit,
                reason.room,
                limiter.room(Criticality::Critical)
            ),
            (20, 20, 20)
        );
        assert!(
            reason
                .to_string()
                .ends_with("(limit 20, halved by a probe)"),
            "{reason}"
        );
        // The calls from before finish slowly, and are not the probe's.
        for grant in old {
            limiter.settle(grant, Settle::Success, ms(1_010));
        }
        // The backend has slowed: 60 ms with no queue. The probe's window rebases on it.
        traffic(&mut limiter, 1_010..1_300, 60);
        assert!(!limiter.probing(), "the probe's window closed");
        assert_eq!(limiter.estimator().baseline(), Some(ms(60)));
        assert_eq!(limiter.room(Criticality::Critical), limiter.limit());
        // Off: no probe ever starts, and the default probes every 10 s.
        let mut off = Limiter::new(
            Adaptive {
                probe: Duration::ZERO,
                ..policy
            },
            ms(0),
        );
        let grant = off.acquire(Duration::MAX).unwrap();
        assert!(!off.probing());
        off.settle(grant, Settle::Success, Duration::MAX);
        assert_eq!(ADAPTIVE.probe, Duration::from_secs(10));
        // Aimd keeps no baseline: a probe drains and changes nothing else.
        let aimd = Adaptive {
            algorithm: Algorithm::Aimd(Aimd { min: 1, ..AIMD }),
            ..policy
        };
        let mut limiter = Limiter::new(aimd, ms(0));
        let grant = limiter.acquire(ms(1_000)).unwrap();
        assert!(limiter.probing());
        limiter.settle(grant, Settle::Success, ms(1_001));
        assert_eq!(limiter.estimator().baseline(), None);
    }

    #[test]
    fn a_probe_whose_window_drops_a_call_is_a_sample_not_a_baseline() {
        use crate::limit::{Algorithm, SAMPLING, Sampling, VEGAS, Vegas};
        let policy = Adaptive {
            algorithm: Algorithm::Vegas(Vegas {
                initial: 40,
                ..VEGAS
            }),
            sampling: Sampling {
                size: 2,
                min_window: ms(100),
                max_window: ms(100),
                ..SAMPLING
            },
            probe: ms(1_000),
            ..ADAPTIVE
        };
        let mut limiter = Limiter::new(policy, ms(0));
        traffic(&mut limiter, 0..990, 20);
        let (baseline, limit) = (limiter.estimator().baseline(), limiter.limit());
        assert_eq!(baseline, Some(ms(20)));
        // The probe's window: one call dropped, one slow.
        let a = limiter.acquire(ms(1_000)).unwrap();
        assert!(limiter.probing());
        let b = limiter.acquire(ms(1_001)).unwrap();
        limiter.settle(a, Settle::Dropped, ms(1_050));
        limiter.settle(b, Settle::Success, ms(1_150));
        assert!(!limiter.probing(), "the probe ended with its window");
        assert_eq!(
            limiter.estimator().baseline(),
            baseline,
            "no rebase on a drop"
        );
        assert!(limiter.limit() < limit, "Vegas cut the limit on the drop");
    }

    #[test]
    fn admits_is_acquire_as_without_its_effects() {
        let policy = Adaptive {
            probe: ms(300),
            ..ADAPTIVE
        };
        let mut limiter = Limiter::new(policy, ms(0));
        let mut held = alloc::collections::VecDeque::new();
        for step in 0..3_000u64 {
            let now = ms(step / 3);
            let class = Criticality::ALL[(step * 7 % 4) as usize];
            let before = limiter.clone();
            let said = limiter.admits(now, class);
            assert_eq!(
                limiter.floor(now),
                before.floor(now),
                "admits records nothing"
            );
            match limiter.acquire_as(now, class) {
                Ok(grant) => {
                    assert!(said, "admitted at step {step}");
                    held.push_back(grant);
                }
                Err(_) => assert!(!said, "refused at step {step}"),
            }
            // Calls finish 25 ms-ish later, a third of them as drops.
            while held.len() > 12 || (step % 5 == 0 && !held.is_empty()) {
                let grant = held.pop_front().unwrap();
                let settle = [Settle::Success, Settle::Success, Settle::Dropped][step as usize % 3];
                limiter.settle(grant, settle, now);
            }
        }
    }

    #[test]
    fn retune_keeps_the_calls_in_flight_and_the_floor() {
        let (mut limiter, grants) = holding(20);
        let _ = limiter.acquire(ms(1)).unwrap_err();
        let shares = Shares {
            sheddable: 0.0,
            ..SHARES
        };
        limiter.retune(Adaptive { shares, ..ADAPTIVE }, ms(2));
        assert_eq!(limiter.flying(), 20);
        assert_eq!(limiter.floor(ms(2)), Criticality::Critical);
        assert_eq!(limiter.room(Criticality::Sheddable), 0);
        assert_eq!(limiter.policy().shares, shares);
        for grant in grants {
            limiter.settle(grant, Settle::Ignored, ms(3));
        }
        assert_eq!(limiter.flying(), 0);
    }
}
