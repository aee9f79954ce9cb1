//! A ward in front of a connection pool: whether to open a new connection now, and whether
//! to hand out another.

use core::time::Duration;

#[cfg(doc)]
use crate::backoff::Backoff;
use crate::breaker::{CircuitBreaker, SreBreaker, SrePermit};
use crate::bucket::Bucket;
use crate::classic::{State, Transition};
use crate::clock::{Latest, nanos};
use crate::gate::Gate;
use crate::internal::owner::{Mark, Owner};
use crate::shedder::{Shedder, Ticket};
use crate::window::Outcome;

mod policy;
mod reason;
#[cfg(test)]
mod tests;

pub use policy::{Checkouts, RECONNECT, RECONNECT_CLASSIC, Reconnect};
pub use reason::{BackoffReason, CheckoutRefusal, Refusal, WardPiece};

/// The state of a pool's ward: a breaker, a token bucket and a backoff that every new
/// connection asks, and a gate or a shedder for checkouts.
///
/// [`connect`](Ward::connect) answers whether the pool may open a connection at `now`. It
/// asks, in order:
///
/// 1. **the backoff**: after a failed connect, none until the wait has passed since the
///    failure, the wait growing by [`Backoff::delay`] with each failure in a row; and while
///    the last connect failed, one at a time (a trial), so a pool of 50 that lost its
///    database sends one connect a wait, not 50;
/// 2. **the bucket**: at most `burst` at once and `rate` a second, so the recovery after a
///    restart is paced and never a storm;
/// 3. **the breaker**: the SRE throttle over connects and the pool's health checks, which
///    refuses a share of connects to a backend whose connections keep failing even when
///    some connects succeed (a flapping backend, which the backoff forgets on each success).
///    After the breaker refuses, the ward refuses for the backoff's base without asking it
///    again, so a pool that retries a checkout in a loop does not fill the breaker's window
///    with refusals that then hold it shut after the backend is back.
///
/// A refusal says which piece refused, when a connect may next be tried and the numbers that
/// decided it ([`Refusal`]); a connect let through is a [`ConnectPermit`], settled by
/// [`connected`](Ward::connected) or [`failed`](Ward::failed). A success forgets the
/// failures; the pool's checks of the connections it holds are fed to the breaker by
/// [`record`](Ward::record). [`checkout`](Ward::checkout) admits checkouts by
/// [`Reconnect::checkouts`].
///
/// Time is the caller's: a `now` earlier than one already seen is read as the latest seen.
/// `Clone` copies the whole state; the copies then evolve independently, each settling only
/// the permits and slots it hands out. Another ward's changes nothing here: its settle hands
/// it back and counts it ([`foreign`](Ward::foreign)).
///
/// # Examples
///
/// A backend that refuses every connect: the ward lets one through, then none until the
/// backoff's wait has passed.
///
/// ```
/// use core::time::Duration;
/// use ironward::{RECONNECT, Ward, WardPiece};
///
/// let ms = Duration::from_millis;
/// let mut ward = Ward::new(RECONNECT, ms(0));
/// let permit = ward.connect(ms(0), 0.5).expect("a fresh ward refuses nothing");
/// ward.failed(permit, ms(3), 0.5); // connection refused; a draw of 0.5 waits the ceiling
/// let refusal = ward.connect(ms(10), 0.5).expect_err("inside the backoff's wait");
/// assert_eq!(refusal.piece(), WardPiece::Backoff);
/// assert_eq!(refusal.next(), ms(243)); // 3 ms + 250 ms − 10 ms
/// assert!(ward.connect(ms(253), 0.5).is_ok());
/// ```
///
/// `B` is the breaker family, by default [`SreBreaker`]; [`Ward::for_breaker`] takes any
/// other [`CircuitBreaker`].
#[derive(Debug, Clone)]
pub struct Ward<B: CircuitBreaker = SreBreaker> {
    policy: Reconnect<B::Policy>,
    breaker: B,
    bucket: Bucket,
    checkouts: Admission,
    clock: Latest,
    /// Failed connects in a row, counted once per round (see [`Ward::failed`]).
    failures: u32,
    /// The wait the last failure drew, while `failures` is above zero.
    wait: Option<Duration>,
    /// No connect before this (nanoseconds on the caller's clock): the last failure plus its
    /// wait.
    not_before: u64,
    /// After a breaker refusal, the ward refuses without asking it until this, with `held`.
    held_until: u64,
    held: Option<B::Reason>,
    /// Counts the settles that move the run of failures; a permit remembers the value it was
    /// issued under.
    round: u64,
    /// The trial in flight while failing: its number and when it was let through.
    trial: Option<(u64, u64)>,
    /// The number the next permit is given.
    issued: u64,
    /// Marks the slots; a permit carries its breaker's mark.
    owner: Owner,
    /// Permits and slots of other wards their settles handed back.
    foreign: u64,
}

/// A connect the [`Ward`] let through.
///
/// Exactly one of [`Ward::connected`] and [`Ward::failed`] of the ward that made it settles
/// it, which consumes it; another ward's hands it back. Not `Clone`, so a connect cannot be
/// counted twice. A permit dropped unsettled leaves the connect out of the record; while the
/// backend is failing it also holds the one trial a ward lets through, until the backoff's
/// cap has passed (an edge settles a dropped connect as failed instead).
#[must_use = "settle the permit with Ward::connected or Ward::failed once the connect has finished"]
#[derive(Debug)]
pub struct ConnectPermit<P = SrePermit> {
    breaker: P,
    round: u64,
    number: u64,
}

/// A checkout the [`Ward`] let through, settled by [`Ward::checkin`] or
/// [`Ward::abandon`] of the ward that made it (another ward's hands it back). Not `Clone`.
#[must_use = "settle the slot with Ward::checkin or Ward::abandon once the connection is back, or the gate stays full"]
#[derive(Debug)]
pub struct Slot {
    kind: SlotKind,
    ward: Mark,
}

#[derive(Debug)]
enum SlotKind {
    Open,
    Gate(u64),
    Shed(Ticket, u64),
}

/// The checkout piece in force, and the number of the policy it was made for (a slot of an
/// earlier one is not settled against a new one).
#[derive(Debug, Clone)]
#[allow(
    clippy::large_enum_variant,
    reason = "one ward per pool, made once: boxing the shedder would allocate on a retune"
)]
enum Admission {
    Open,
    Gate(Gate, u64),
    Shed(Shedder, u64),
}

impl Admission {
    fn new(checkouts: Checkouts, number: u64, now: Duration) -> Self {
        match checkouts {
            Checkouts::Open => Self::Open,
            Checkouts::Gate(limit) => Self::Gate(Gate::new(limit), number),
            Checkouts::Shed(shed) => Self::Shed(Shedder::new(shed, now), number),
        }
    }
}

impl Ward {
    /// A ward with `policy`, its bucket full, its breaker empty and no failures, at `now`.
    pub fn new(policy: Reconnect, now: Duration) -> Self {
        Self::for_breaker(policy, now)
    }

    /// A ward running the breaker family `B`, otherwise as [`new`](Ward::new).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::{SreBreaker, RECONNECT, Ward};
    ///
    /// let ward = Ward::for_breaker::<SreBreaker>(RECONNECT, Duration::ZERO);
    /// assert_eq!(ward.policy(), &RECONNECT);
    /// ```
    pub fn for_breaker<B: CircuitBreaker>(policy: Reconnect<B::Policy>, now: Duration) -> Ward<B> {
        Ward {
            breaker: B::new(policy.breaker.clone(), now),
            bucket: Bucket::new(policy.rate, policy.burst, now),
            checkouts: Admission::new(policy.checkouts, 0, now),
            policy,
            clock: Latest::new(now),
            failures: 0,
            wait: None,
            not_before: 0,
            held_until: 0,
            held: None,
            round: 0,
            trial: None,
            issued: 0,
            owner: Owner::default(),
            foreign: 0,
        }
    }
}

impl<B: CircuitBreaker> Ward<B> {
    /// Asks to open one connection at `now`: a permit, or which piece refused and when to try
    /// again.
    ///
    /// `roll` is the breaker's draw from `[0, 1)` (NaN and negatives read as 0). The pieces
    /// are asked in the order [`Ward`] gives; a refusal by the backoff or the bucket neither
    /// draws nor reaches the breaker, and only a connect let through takes a token.
    #[must_use = "dropping the answer loses the permit: the connect goes unrecorded, and a refusal is ignored"]
    pub fn connect(
        &mut self,
        now: Duration,
        roll: f64,
    ) -> Result<ConnectPermit<B::Permit>, Refusal<B::Reason>> {
        let at = self.clock.advance(now);
        if self.failures > 0 {
            let trying = self.trial.is_some_and(|(_, since)| {
                at.saturating_sub(since) < nanos(self.policy.backoff.cap)
            });
            if at < self.not_before || trying {
                return Err(Refusal::Backoff(self.backoff_reason(at, trying)));
            }
        }
        if at < self.held_until
            && let Some(reason) = &self.held
        {
            return Err(Refusal::Breaker {
                reason: reason.clone(),
                next: Duration::from_nanos(self.held_until - at),
            });
        }
        let when = Duration::from_nanos(at);
        // The bucket is asked before the breaker so that a connect it refuses neither draws
        // nor leaves a drop in the breaker's window; `tokens` reads the refill `check` does.
        if self.bucket.tokens(when) < 1.0
            && let Err(reason) = self.bucket.check(when, 1.0)
        {
            return Err(Refusal::Bucket(reason));
        }
        let permit = match self.breaker.check(when, roll) {
            Ok(permit) => permit,
            Err(reason) => {
                let hold = nanos(self.policy.backoff.base).max(1);
                self.held_until = at.saturating_add(hold);
                self.held = Some(reason.clone());
                return Err(Refusal::Breaker {
                    reason,
                    next: Duration::from_nanos(hold),
                });
            }
        };
        if let Err(reason) = self.bucket.check(when, 1.0) {
            return Err(Refusal::Bucket(reason));
        }
        Ok(self.admit(permit, at))
    }

    fn admit(&mut self, breaker: B::Permit, at: u64) -> ConnectPermit<B::Permit> {
        let number = self.issued;
        self.issued = self.issued.wrapping_add(1);
        if self.failures > 0 {
            self.trial = Some((number, at));
        }
        ConnectPermit {
            breaker,
            round: self.round,
            number,
        }
    }

    fn backoff_reason(&self, at: u64, trying: bool) -> BackoffReason {
        let wait = self.wait.unwrap_or_default();
        let left = Duration::from_nanos(self.not_before.saturating_sub(at));
        BackoffReason {
            failures: self.failures,
            wait,
            // With a trial in flight, the soonest a connect could follow should it fail now.
            next: if trying { left.max(wait) } else { left },
            trying,
        }
    }

    /// Records the connect behind `permit` as made, at `now`: the failures are forgotten and
    /// the backoff starts again from its base; `None`. A permit another ward made changes
    /// nothing here (not even the clock) and comes back as `Some`.
    pub fn connected(
        &mut self,
        permit: ConnectPermit<B::Permit>,
        now: Duration,
    ) -> Option<ConnectPermit<B::Permit>> {
        if !self.owned(self.breaker.owns(&permit.breaker)) {
            return Some(permit);
        }
        let at = self.clock.advance(now);
        // The ward's breaker made it, as checked above: settled, never handed back.
        let _ = self.breaker.pass(permit.breaker, Duration::from_nanos(at));
        if self.failures > 0 {
            self.round = self.round.wrapping_add(1);
        }
        self.failures = 0;
        self.wait = None;
        self.not_before = 0;
        self.trial = None;
        None
    }

    /// Records the connect behind `permit` as failed, at `now`; `roll` is the backoff's draw
    /// from `[0, 1)` for the wait it starts.
    ///
    /// A failure counts once per round: one of a connect let through after the last settle
    /// that moved the run grows the wait to the next retry's ([`Backoff::delay`] of the
    /// failures in a row, the last wait as `previous`), while one of a connect that was
    /// already in flight when another failed only starts the same wait again from `now`. So
    /// four connects that fail together wait as one did, and no connect is let through
    /// until the wait has passed since the latest failure. The count saturates at
    /// `u32::MAX`. `None`; a permit another ward made changes nothing and comes back as
    /// `Some`.
    pub fn failed(
        &mut self,
        permit: ConnectPermit<B::Permit>,
        now: Duration,
        roll: f64,
    ) -> Option<ConnectPermit<B::Permit>> {
        if !self.owned(self.breaker.owns(&permit.breaker)) {
            return Some(permit);
        }
        let at = self.clock.advance(now);
        let _ = self.breaker.fail(permit.breaker, Duration::from_nanos(at));
        if self
            .trial
            .is_some_and(|(number, _)| number == permit.number)
        {
            self.trial = None;
        }
        let wait = match self.wait {
            Some(wait) if permit.round != self.round => wait,
            previous => {
                self.failures = self.failures.saturating_add(1);
                self.round = self.round.wrapping_add(1);
                self.policy.backoff.delay(self.failures, roll, previous)
            }
        };
        self.wait = Some(wait);
        self.not_before = self.not_before.max(at.saturating_add(nanos(wait)));
        None
    }

    /// Feeds the breaker one check of a connection the pool holds (a recycle, a validity
    /// check, a command), at `now`: `Success` for one that worked, `Failure` for one that
    /// broke. Neither the backoff nor the bucket reads it.
    ///
    /// A pool checks a connection each time it hands one out, so these outnumber the
    /// connects: they tell the breaker the backend is failing before any reconnect does, and
    /// that it is back as soon as the first new connection serves.
    pub fn record(&mut self, outcome: Outcome, now: Duration) {
        let at = self.clock.advance(now);
        self.breaker.record(outcome, Duration::from_nanos(at));
    }

    /// Asks to check a connection out at `now`, with this server's CPU reading in thousandths
    /// (read only by [`Checkouts::Shed`]): a slot, or the gate's or the shedder's refusal.
    #[must_use = "dropping the answer loses the slot: the gate stays full, and a refusal is ignored"]
    pub fn checkout(&mut self, now: Duration, cpu: u32) -> Result<Slot, CheckoutRefusal> {
        let at = Duration::from_nanos(self.clock.advance(now));
        let kind = match &mut self.checkouts {
            Admission::Open => SlotKind::Open,
            Admission::Gate(gate, number) => {
                gate.check().map_err(CheckoutRefusal::Gate)?;
                SlotKind::Gate(*number)
            }
            Admission::Shed(shedder, number) => {
                let ticket = shedder.check(at, cpu).map_err(CheckoutRefusal::Shed)?;
                SlotKind::Shed(ticket, *number)
            }
        };
        let ward = self.owner.mark();
        Ok(Slot { kind, ward })
    }

    /// Settles a checkout that went well: the connection is back in the pool, at `now`;
    /// `None`. A slot another ward made changes nothing here (not even the clock) and comes
    /// back as `Some`.
    pub fn checkin(&mut self, slot: Slot, now: Duration) -> Option<Slot> {
        if !self.owned(self.owner.owns(slot.ward)) {
            return Some(slot);
        }
        let at = Duration::from_nanos(self.clock.advance(now));
        self.settle(slot, Some(at));
        None
    }

    /// Settles a checkout that failed (the connection broke, or the caller gave up); `None`.
    /// A slot another ward made changes nothing and comes back as `Some`.
    pub fn abandon(&mut self, slot: Slot) -> Option<Slot> {
        if !self.owned(self.owner.owns(slot.ward)) {
            return Some(slot);
        }
        self.settle(slot, None);
        None
    }

    /// `mine`, having counted a token another ward made.
    fn owned(&mut self, mine: bool) -> bool {
        if !mine {
            self.foreign = self.foreign.saturating_add(1);
        }
        mine
    }

    fn settle(&mut self, slot: Slot, at: Option<Duration>) {
        match (slot.kind, &mut self.checkouts) {
            (SlotKind::Gate(of), Admission::Gate(gate, number)) if of == *number => gate.leave(),
            (SlotKind::Shed(ticket, of), Admission::Shed(shedder, number)) if of == *number => {
                // The ward made the slot, so its shedder made the ticket.
                let _ = match at {
                    Some(at) => shedder.pass(ticket, at),
                    None => shedder.fail(ticket),
                };
            }
            _ => {}
        }
    }

    /// Changes the policy at `now`, keeping the history: the breaker's window, the bucket's
    /// tokens (capped at the new burst), the failures in a row and the wait in force (the
    /// next failure grows by the new backoff). A gate or shedder of the same kind keeps its
    /// holders and windows; one of another kind starts empty, and slots of the old one
    /// settle nothing.
    pub fn retune(&mut self, policy: Reconnect<B::Policy>, now: Duration) {
        let at = Duration::from_nanos(self.clock.advance(now));
        self.breaker.retune(policy.breaker.clone(), at);
        self.bucket.retune(policy.rate, policy.burst, at);
        match (&mut self.checkouts, policy.checkouts) {
            (Admission::Gate(gate, _), Checkouts::Gate(limit)) => gate.retune(limit),
            (Admission::Shed(shedder, _), Checkouts::Shed(shed)) => shedder.retune(shed, at),
            (Admission::Open, Checkouts::Open) => {}
            (_, checkouts) => {
                self.issued = self.issued.wrapping_add(1);
                self.checkouts = Admission::new(checkouts, self.issued, at);
            }
        }
        self.policy = policy;
    }

    /// How long after `now` a connect could next be let through, with nothing changing: the
    /// longest of the backoff's wait, the breaker's hold and the bucket's refill, and while a
    /// trial is in flight, until it stops holding the others back (the backoff's cap after
    /// it began; its settle would decide sooner). Zero when one would be now (the breaker's
    /// draw aside); `Duration::MAX` when the bucket never refills.
    #[must_use]
    pub fn next(&self, now: Duration) -> Duration {
        let at = self.clock.read(now);
        let mut until = self.held_until;
        if self.failures > 0 {
            until = until.max(self.not_before);
            if let Some((_, since)) = self.trial {
                until = until.max(since.saturating_add(nanos(self.policy.backoff.cap)));
            }
        }
        let wait = Duration::from_nanos(until.saturating_sub(at));
        wait.max(self.bucket.next(Duration::from_nanos(at), 1.0))
    }

    /// Failed connects in a row, counted once per round (see [`failed`](Ward::failed)).
    #[must_use]
    pub fn failures(&self) -> u32 {
        self.failures
    }

    /// Permits and slots a settle handed back because another ward made them, saturating:
    /// above 0 is a caller's bug.
    #[must_use]
    pub fn foreign(&self) -> u64 {
        self.foreign
    }

    /// Whether connects are failing: the last settled one failed.
    #[must_use]
    pub fn is_failing(&self) -> bool {
        self.failures > 0
    }

    /// The breaker's drop fraction at `now` ([`SreBreaker::ratio`]).
    #[must_use]
    pub fn ratio(&self, now: Duration) -> f64 {
        self.breaker.ratio(now)
    }

    /// The state the breaker is in at `now`, for a family with states
    /// ([`CircuitBreaker::state`]); `None` for [`SreBreaker`].
    #[must_use]
    pub fn state(&self, now: Duration) -> Option<State> {
        self.breaker.state(now)
    }

    /// The change of state the breaker's decisions since the last take made, taken once
    /// ([`CircuitBreaker::take_transition`]): for an edge that reports a stateful breaker's
    /// changes after each connect, settle and record. Always `None` for a family without
    /// states ([`SreBreaker`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::classic::{State, Transition};
    /// use ironward::{ClassicBreaker, RECONNECT_CLASSIC, Ward};
    ///
    /// let ms = Duration::from_millis;
    /// let mut ward = Ward::for_breaker::<ClassicBreaker>(RECONNECT_CLASSIC, ms(0));
    /// for outcome in [ironward::Outcome::Failure; 5] {
    ///     ward.record(outcome, ms(1));
    /// }
    /// let opened = Transition { from: State::Closed, to: State::Open };
    /// assert_eq!(ward.take_transition(), Some(opened));
    /// assert_eq!(ward.take_transition(), None);
    /// ```
    #[must_use = "a transition taken and dropped is lost to every later take"]
    pub fn take_transition(&mut self) -> Option<Transition> {
        self.breaker.take_transition()
    }

    /// The bucket's tokens at `now`: the connects it would let through at once.
    #[must_use]
    pub fn tokens(&self, now: Duration) -> f64 {
        self.bucket.tokens(now)
    }

    /// The checkouts held by a [`Checkouts::Gate`], or in flight through a
    /// [`Checkouts::Shed`]; 0 for [`Checkouts::Open`].
    #[must_use]
    pub fn checkouts(&self) -> u64 {
        match &self.checkouts {
            Admission::Open => 0,
            Admission::Gate(gate, _) => u64::from(gate.held()),
            Admission::Shed(shedder, _) => shedder.flying(),
        }
    }

    /// The policy in force.
    #[must_use]
    pub fn policy(&self) -> &Reconnect<B::Policy> {
        &self.policy
    }
}
