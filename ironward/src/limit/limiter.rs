//! The limiter: calls in flight against an adaptive limit, admitted by criticality.

mod grant;
mod partitions;
mod reason;

use core::time::Duration;

pub use grant::{Grant, Settle};
pub use partitions::Partitions;
pub use reason::LimiterReason;

use super::{Adaptive, Estimator, Sampler};
use crate::clock::{Latest, nanos};
use crate::criticality::{Criticality, Floor};
use crate::internal::owner::Owner;

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
/// A grant settles only on the limiter that made it: another limiter's `settle` changes
/// nothing, hands it back and counts it ([`foreign`](Limiter::foreign)). `Clone` copies the
/// whole state into another limiter, which settles the grants it makes itself, not the
/// original's.
///
/// # Classes: ceilings or partitions
///
/// By default each class may fill its share of the limit ([`Shares`](crate::Shares)): a
/// ceiling over all the calls in flight, lowest for the least critical, so that they meet a
/// full limit first. With [`Adaptive::partitions`] set, each class instead has a part of the
/// limit reserved ([`Partitions`], after Netflix's `AbstractPartitionedLimiter`), borrows
/// what the others leave unused while the limit has room, and gets its reservation back
/// when it returns. [`Partitions`] says when to choose which.
///
/// # Calls it must never refuse
///
/// A health check or an operator's call must pass however full the limiter is, and must not
/// count against the limit or move it: [`acquire_bypass`](Limiter::acquire_bypass) lets it
/// in uncounted (Netflix's bypass resolver). The core sees no request, so the choice is the
/// caller's: an edge that holds requests runs its predicate on each and asks for a bypass
/// when it holds.
///
/// # When to use it
///
/// The [`SreBreaker`](crate::SreBreaker) decides on failures: it protects a backend that errors. The
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
    /// The same calls by class, least critical first: what partitions decide by, kept under
    /// ceilings too so that a retune between the two finds them counted.
    class_flying: [u32; 4],
    floor: Floor,
    /// `policy.shares` as read ([`Shares::of`](crate::Shares::of)) and `policy.cool` in
    /// nanoseconds, worked out once per policy rather than on every call.
    shares: [f64; 4],
    /// `policy.partitions` as read ([`Partitions::of`]), `None` under ceilings.
    partitions: Option<[f64; 4]>,
    cool: u64,
    /// When the next probe starts, in nanoseconds; `None` for never.
    probe_at: Option<u64>,
    /// The probe under way, if one is.
    drain: Option<Drain>,
    clock: Latest,
    owner: Owner,
    /// Grants of other limiters `settle` handed back.
    foreign: u64,
    /// Calls let in by `acquire_bypass`.
    bypassed: u64,
}

/// A probe under way: when it began.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Drain {
    since: u64,
}

impl Limiter {
    /// A limiter at the algorithm's initial limit, nothing in flight, the first sampling
    /// window opening at `now`.
    pub fn new(policy: Adaptive, now: Duration) -> Self {
        let estimator = Estimator::new(policy.algorithm);
        let probe_at = first_probe(&estimator, nanos(now), policy.probe);
        Self {
            estimator,
            sampler: Sampler::new(policy.sampling, now),
            shares: policy.shares.read(),
            partitions: policy.partitions.map(|partitions| partitions.read()),
            cool: nanos(policy.cool),
            probe_at,
            drain: None,
            policy,
            flying: 0,
            class_flying: [0; 4],
            floor: Floor::default(),
            clock: Latest::new(now),
            owner: Owner::default(),
            foreign: 0,
            bypassed: 0,
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
    /// has been refused within [`Adaptive::cool`]) and its class has room: under ceilings,
    /// fewer calls are in flight than the limit times its share
    /// ([`Shares::of`](crate::Shares::of)); under partitions, fewer calls are in flight than
    /// the limit, or fewer of its class than its reservation ([`Partitions`]). A refused
    /// call, for want of room or by the floor, holds the floor at least at its class for the
    /// cooling time.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::{Adaptive, Criticality, ADAPTIVE, Limiter};
    ///
    /// let ms = Duration::from_millis;
    /// // No probe: the default's first window would admit one call at a time.
    /// let steady = Adaptive { probe: Duration::ZERO, ..ADAPTIVE };
    /// let mut limiter = Limiter::new(steady, ms(0));
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
    // Always in line: left to the compiler's estimate, the classes' counts and the partitions'
    // branch tipped it out of line, and a decision under ceilings took twice its time, its
    // answer passed through memory rather than registers.
    #[inline(always)]
    #[must_use = "dropping the answer loses the Grant: the call stays counted in flight forever, and a refusal is ignored"]
    pub fn acquire_as(
        &mut self,
        now: Duration,
        criticality: Criticality,
    ) -> Result<Grant, LimiterReason> {
        let now = self.clock.advance(now);
        if self.drain.is_some_and(|drain| !self.holds(drain, now)) {
            // No call ended the probe's window: its room let none of the callers in (a
            // sheddable call's share of a room of 1 is none), or none came back. Given up
            // until the next, rather than refusing them for good.
            self.drain = None;
            self.probe_at = next_probe(now, self.policy.probe);
        }
        if self.drain.is_none() && self.probe_at.is_some_and(|at| now >= at) {
            self.drain = Some(Drain { since: now });
            // A whole window: a shorter one is closed by its fast calls before its slow ones
            // finish, and reads the latency low.
            let length = self.policy.sampling.min_window;
            if self.estimator.probe_room() == 1 {
                // One call at a time queues nothing: the window is its calls.
                self.sampler
                    .restart_early(Duration::from_nanos(now), length);
            } else {
                self.sampler.restart(Duration::from_nanos(now), length);
            }
        }
        let limit = self.in_force(self.drain.is_some());
        let (room, fits) = self.fits(limit, criticality);
        if !fits || self.floor.holds_out(criticality, now, self.cool) {
            return Err(self.refuse(now, limit, room, criticality));
        }
        // `fits` left room under u32::MAX.
        self.flying += 1;
        let class = &mut self.class_flying[criticality.rank()];
        *class = class.saturating_add(1);
        Ok(Grant {
            start: now,
            flying: self.flying,
            class: Some(criticality),
            limiter: self.owner.mark(),
        })
    }

    /// Records the refusal at `now` of a call of `criticality` that met `room` under `limit`
    /// (raising the floor) and says why: the part of [`acquire_as`](Limiter::acquire_as)
    /// that refuses, in line with it.
    #[inline(always)]
    fn refuse(
        &mut self,
        now: u64,
        limit: u32,
        room: u32,
        criticality: Criticality,
    ) -> LimiterReason {
        let floor = self.floor.at(now, self.cool);
        // A refusal only a probe's halved room makes is the probe's, not overload's: it
        // holds out the classes below the one under the refused call's, not the refused
        // call's own, so that a critical-plus call the probe turns away leaves the
        // critical their room, and the sheddable still go first.
        let overload = criticality < floor || !self.fits(self.estimator.limit(), criticality).1;
        match (overload, criticality.rank()) {
            (true, _) => self.floor.refuse(criticality, now),
            (false, 0) => {}
            (false, rank) => self.floor.refuse(Criticality::ALL[rank - 1], now),
        }
        LimiterReason {
            flying: self.flying,
            limit,
            room,
            criticality,
            floor,
            probing: self.drain.is_some(),
            class_flying: self
                .partitions
                .is_some()
                .then(|| self.class_flying[criticality.rank()]),
        }
    }

    /// Lets a call in at `now` that must never be refused, counted nowhere: not in flight, in
    /// no class, its latency not sampled (Netflix's bypass resolver, whose calls neither
    /// raise the in-flight count nor reach the algorithm). For health checks and operators'
    /// calls, which must pass however full the limiter is and whose latency says nothing of
    /// the backend's load.
    ///
    /// The grant is settled like any other, on this limiter (another's hands it back and
    /// counts it as [`foreign`](Limiter::foreign)); its settle changes nothing else.
    /// Dropping it unsettled leaves nothing counted. [`bypassed`](Limiter::bypassed) counts
    /// these calls.
    ///
    /// The core sees a class, not a request, so which calls bypass is the caller's choice:
    /// an edge that holds requests (ironward-tokio's `SharedLimiter`, ironward-tower's
    /// `LimiterLayer`) runs its predicate on each request before it queues, and asks here
    /// when the predicate holds, so that a health check neither waits in the queue nor
    /// takes a place in it.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::limit::{AIMD, Aimd, Algorithm};
    /// use ironward::{ADAPTIVE, Adaptive, Limiter, Settle};
    ///
    /// let now = Duration::ZERO;
    /// let one = Aimd { initial: 1, min: 1, max: 1, ..AIMD };
    /// let mut limiter = Limiter::new(Adaptive { algorithm: Algorithm::Aimd(one), ..ADAPTIVE }, now);
    /// let call = limiter.acquire(now).expect("room");
    /// assert!(limiter.acquire(now).is_err(), "full");
    /// let health = limiter.acquire_bypass(now);
    /// assert!(health.bypassed());
    /// assert_eq!((limiter.flying(), limiter.bypassed()), (1, 1));
    /// assert_eq!(limiter.settle(health, Settle::Success, now), None);
    /// assert_eq!(limiter.flying(), 1, "the bypass took nothing away");
    /// limiter.settle(call, Settle::Success, now);
    /// ```
    pub fn acquire_bypass(&mut self, now: Duration) -> Grant {
        self.bypassed = self.bypassed.saturating_add(1);
        Grant {
            start: self.clock.advance(now),
            flying: self.flying,
            class: None,
            limiter: self.owner.mark(),
        }
    }

    /// The call behind `grant` ended at `now` as `settle` says: it leaves flight and, unless
    /// ignored, its latency (`now` less its start) is sampled, which may close a window and
    /// move the limit. The answer is `None`.
    ///
    /// A grant another limiter made changes nothing here (not even the clock): it comes back
    /// as `Some(grant)`, to be settled on the limiter that made it (dropped, it stays counted
    /// in flight there), and is counted by [`foreign`](Limiter::foreign).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::{ADAPTIVE, Limiter, Settle};
    ///
    /// let now = Duration::ZERO;
    /// let (mut a, mut b) = (Limiter::new(ADAPTIVE, now), Limiter::new(ADAPTIVE, now));
    /// let grant = a.acquire(now).unwrap();
    /// let grant = b.settle(grant, Settle::Success, now).expect("not b's: handed back");
    /// assert_eq!((a.flying(), b.flying(), b.foreign()), (1, 0, 1));
    /// assert_eq!(a.settle(grant, Settle::Success, now), None);
    /// assert_eq!(a.flying(), 0);
    /// ```
    pub fn settle(&mut self, grant: Grant, settle: Settle, now: Duration) -> Option<Grant> {
        if !self.owner.owns(grant.limiter) {
            self.foreign = self.foreign.saturating_add(1);
            return Some(grant);
        }
        if let Some(class) = grant.class {
            self.settle_own(&grant, class, settle, now);
        }
        None
    }

    /// [`settle`](Limiter::settle) of a grant this limiter made.
    fn settle_own(&mut self, grant: &Grant, class: Criticality, settle: Settle, now: Duration) {
        let now = self.clock.advance(now);
        self.flying = self.flying.saturating_sub(1);
        let class = &mut self.class_flying[class.rank()];
        *class = class.saturating_sub(1);
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
                if self.estimator.probe_soon() {
                    let soon = nanos(self.policy.sampling.min_window).max(1);
                    self.probe_at = self.probe_at.map(|_| now.saturating_add(soon));
                }
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
    /// A probe that is due at `now` counts as begun, holding the room to the probe's
    /// ([`Estimator::probe_room`]), as `acquire_as` would begin it; one past its time counts
    /// as given up, as `acquire_as` would give it up.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::limit::{Algorithm, VEGAS};
    /// use ironward::{ADAPTIVE, Adaptive, Criticality, Limiter};
    ///
    /// // Vegas probes every 10 s at half the limit (the default, Little, probes first).
    /// let vegas = Adaptive { algorithm: Algorithm::Vegas(VEGAS), ..ADAPTIVE };
    /// let mut limiter = Limiter::new(vegas, Duration::ZERO);
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
        let probing = match self.drain {
            // A probe past its time is given up by the next `acquire_as`, which then sets
            // the next probe `probe` later.
            Some(drain) => self.holds(drain, now),
            None => self.probe_at.is_some_and(|at| now >= at),
        };
        self.fits(self.in_force(probing), criticality).1
            && !self.floor.holds_out(criticality, now, self.cool)
    }

    /// The room of a call of `class` under `limit` and whether the calls in flight leave it
    /// some: the one rule [`acquire_as`](Limiter::acquire_as), [`admits`](Limiter::admits)
    /// and [`room`](Limiter::room) read.
    ///
    /// Under ceilings the room is the limit times the class's share, over all calls in
    /// flight; a class with a share lets one call in while none is in flight, even where its
    /// share of a small limit rounds to none (a sheddable call's half of a limit of 1), so
    /// that an idle limiter refuses no class it admits at all. Under partitions it is the
    /// class's reservation, which holds only once the calls in flight fill the limit
    /// (Netflix's `AbstractPartitionedLimiter.acquire`); there the calls may pass the limit
    /// by the reservations, so a count at `u32::MAX` refuses.
    #[inline]
    fn fits(&self, limit: u32, class: Criticality) -> (u32, bool) {
        match &self.partitions {
            None => {
                let share = self.shares[class.rank()];
                let room = room(limit, share);
                (
                    room,
                    self.flying < room || (self.flying == 0 && share > 0.0),
                )
            }
            Some(fractions) => self.fits_reserved(limit, class, fractions),
        }
    }

    /// [`fits`](Limiter::fits) under partitions: under the limit, or under the class's
    /// reservation.
    #[inline]
    fn fits_reserved(&self, limit: u32, class: Criticality, fractions: &[f64; 4]) -> (u32, bool) {
        let rank = class.rank();
        let reserved = partitions::reserved(limit, fractions[rank]);
        let fits =
            self.flying < limit || (self.class_flying[rank] < reserved && self.flying < u32::MAX);
        (reserved, fits)
    }

    /// Whether `drain` still holds at `now`: a probe lasts at most four of its windows' most
    /// ([`Sampling::max_window`](super::Sampling::max_window), or `min_window` if longer).
    fn holds(&self, drain: Drain, now: u64) -> bool {
        let sampling = &self.policy.sampling;
        let window = nanos(sampling.max_window).max(nanos(sampling.min_window));
        now.saturating_sub(drain.since) <= window.saturating_mul(4)
    }

    /// The limit admissions are held to: the estimator's, or its probe room while a probe
    /// drains ([`Estimator::probe_room`]).
    fn in_force(&self, probing: bool) -> u32 {
        if probing {
            self.estimator.probe_room()
        } else {
            self.estimator.limit()
        }
    }

    /// The limit now: the estimator's, whether or not a probe is draining.
    #[must_use]
    pub fn limit(&self) -> u32 {
        self.estimator.limit()
    }

    /// Whether a probe ([`Adaptive::probe`]) is draining: admissions are held to the
    /// probe's room ([`Estimator::probe_room`]) until it has measured the latency with no
    /// queue.
    #[must_use]
    pub fn probing(&self) -> bool {
        self.drain.is_some()
    }

    /// Calls let in and not yet settled.
    #[must_use]
    pub fn flying(&self) -> u32 {
        self.flying
    }

    /// Grants [`settle`](Limiter::settle) handed back because another limiter made them,
    /// saturating: a count above 0 is a caller's bug, a grant taken to the wrong limiter.
    #[must_use]
    pub fn foreign(&self) -> u64 {
        self.foreign
    }

    /// The calls of `criticality` in flight: counted by class under ceilings and partitions
    /// alike, and what a partition's reservation is held against.
    #[must_use]
    pub fn flying_as(&self, criticality: Criticality) -> u32 {
        self.class_flying[criticality.rank()]
    }

    /// Calls let in by [`acquire_bypass`](Limiter::acquire_bypass), saturating.
    #[must_use]
    pub fn bypassed(&self) -> u64 {
        self.bypassed
    }

    /// The room of a call of `criticality` now: under ceilings, how many calls in flight it
    /// may join, the limit times its share; under partitions, its class's reservation, which
    /// holds once the limit is full. The floor may still refuse it; see
    /// [`floor`](Limiter::floor).
    #[must_use]
    pub fn room(&self, criticality: Criticality) -> u32 {
        self.fits(self.in_force(self.drain.is_some()), criticality)
            .0
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
    /// window (see [`Sampler::retune`]), the floor, and the calls in flight of each class, so
    /// that a change between ceilings and partitions finds the classes counted.
    pub fn retune(&mut self, policy: Adaptive, now: Duration) {
        let now = Duration::from_nanos(self.clock.advance(now));
        self.estimator.retune(policy.algorithm);
        self.sampler.retune(policy.sampling, now);
        self.shares = policy.shares.read();
        self.partitions = policy.partitions.map(|partitions| partitions.read());
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

/// When the first probe starts: at once if the algorithm asks for one, else as the next.
fn first_probe(estimator: &Estimator, now: u64, probe: Duration) -> Option<u64> {
    let next = next_probe(now, probe);
    if estimator.probe_soon() {
        next.map(|_| now)
    } else {
        next
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
mod tests;
