//! [`SharedClassicBreaker`]: the classic circuit breaker shared by `&`, a healthy backend's
//! calls let through and their successes recorded without a lock, and an open breaker's calls
//! refused without it.

use std::collections::VecDeque;
use std::fmt;
use std::sync::atomic::Ordering;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use ironward::classic::{State, Transition};
use ironward::{Classic, ClassicBreaker, ClassicReason};

use crate::clock::nanos;
use crate::lock;
use crate::owner::Owner;
use crate::stripe::{Padded, Stripes};

mod family;
mod fast;
mod permit;

use fast::{Opening, Stripe};
use permit::Call;
pub use permit::SharedClassicPermit;

/// An [`ironward::ClassicBreaker`] that every task of every core shares by `&`, taking no
/// lock for the calls of a healthy backend, nor for the refusals of an open breaker.
///
/// A client's every call asks its breaker twice, to be let through and to be recorded, and a
/// `Mutex<ClassicBreaker>` makes the cores take turns for both, though while the breaker is
/// closed the answer is always yes and, while the backend is healthy, the record only adds a
/// success. This type keeps one exact `ClassicBreaker` behind a lock for everything else, and
/// the healthy case in atomics:
///
/// - the breaker says until when no success can open it
///   ([`ClassicBreaker::healthy_until`]: closed, put in no state by hand, and the shares after
///   one more success under the rates; for a time record only until its newest bucket ends),
///   and that instant is published with the breaker's stage ([`epoch`](ClassicBreaker::epoch)),
///   its clock ([`latest`](ClassicBreaker::latest)) and its slow threshold: the *opening*;
/// - [`check`](Self::check) before the horizon reads the opening and its thread's stripe (see
///   [`stripe`](crate::stripe): a word a thread, on a cache line of its own), writes nothing
///   shared, and notes the time on the stripe;
/// - [`pass`](Self::pass) of a call let through closed, not slow and before the horizon, in
///   the stage still open, adds one to its stripe with a compare-and-swap, and the stripes
///   are handed to the exact breaker ([`ClassicBreaker::record_successes`]) before anything
///   reads it.
///
/// A refusing breaker has a fast path of its own, since a server keeps asking it at full
/// rate. Open, the breaker refuses every call until its wait ends with a reason fixed when it
/// opened (the shares that opened it, and the rest of the wait); forced open, every call, with
/// `Duration::MAX` to wait ([`ClassicBreaker::refusing`]). That refusal is published in the
/// opening instead (when the wait ends, whether it was forced, the shares, the clock), with
/// every stripe's word marked refusing: [`check`](Self::check) reads them and its stripe,
/// refuses with [`Refusing::at`](ironward::classic::Refusing::at) of its time, and notes the
/// time on the stripe as a healthy check does, writing nothing shared. A check at or past the
/// wait's end takes the lock, where the exact breaker moves half-open.
///
/// Everything else takes the lock and asks the exact breaker: a failure, a slow call, a call
/// at or past the horizon or the wait's end, every call while the breaker is half-open,
/// forced to let calls through, or closed and not certainly healthy, every settle while it
/// refuses, [`ratio`](Self::ratio), [`state`](Self::state), [`retune`](Self::retune). Each
/// of those first *closes* the fast path (every stripe's word swapped for a closed mark, its
/// successes recorded and the latest time the stripes noted handed to the exact breaker's
/// clock), then does its work on the exact breaker, queues the change of state it made, if
/// any, then *opens* the fast path again if the breaker is healthy (the opening written, then
/// every stripe's word set to zero successes under a new tag) or refusing (the refusal
/// written, then every word marked refusing under a new tag).
///
/// The opening is several words, read without a lock: an open writes them only while every
/// stripe is closed, after a `Release` fence, and a reader loads them between its `Acquire`
/// load of its stripe's word and an `Acquire` fence before it looks at the word again (a
/// check) or swaps it (a pass). A reader that saw any write of a later open therefore sees the
/// close before it, and finds its word changed; one whose word is as it was read the opening
/// of its word's tag, whole (the tag, 23 bits, keeps an old word from reappearing short of
/// 2^23 openings between a call's two looks at its word). A refusing opening's horizon is 0,
/// so a check or a pass that reads it as a healthy one finds no time before it.
///
/// # Deciding as `ClassicBreaker` does
///
/// Calls that do not overlap are decided and recorded exactly as one [`ClassicBreaker`]
/// decides and records them: the same permits and refusals with the same reasons, the same
/// record, the same changes of state in the same order, the same ratio, retunes included;
/// and clocks going backwards too, on one thread (the property tests hold it to all of that
/// against the `&mut` breaker), or across threads on a clock that never goes back (see the
/// breaker's clock below). Why:
///
/// - A fast check lets a call through only in the stage the opening names, which is closed:
///   so does `ClassicBreaker::check`, changing nothing but its clock. The permit's time is
///   the later of `now`, the breaker's clock at the opening and the times noted on the
///   thread's stripe since, which is the exact breaker's clock then: `check`'s own reading
///   of an earlier `now` as the latest. The note hands that time to the exact breaker at the
///   next close, before anything reads its clock.
/// - A success counted on a stripe is one `ClassicBreaker::pass` would record as a success
///   that is not slow, in the stage the permit was let through in, at a time before the
///   horizon: the same reading of the clock, so the same slow test. Successes cannot open
///   the breaker before the horizon, so nothing needs to see them until the next turn under
///   the lock, and that turn records them first, before its own outcome: a count record's
///   order is the order of the calls, since the fast successes before a turn are alike and a
///   success after its close goes to the lock, after it. They land in the bucket the exact
///   breaker would put them in, its newest, whose end the horizon is, and a turn that
///   follows them reads the clock they moved.
/// - A fast refusal is made only on a refusal the exact breaker published, at a time before
///   the wait's end (or forced open): there `ClassicBreaker::check` refuses with
///   `Refusing::at` of its reading, which is the same reading as a fast check's (the
///   opening's clock and the times noted since), so the same reason, and changes nothing but
///   its clock, which the note hands over at the next close. Nothing but a turn under the
///   lock changes what an open breaker refuses with (no call is let through to settle, and a
///   retune takes the lock), and every such turn closes the path first.
/// - Everything else is the exact breaker's own decision, under the lock, on a breaker that
///   has seen every outcome and every reading so far. A permit let through fast and settled
///   there is made anew ([`ClassicBreaker::permit_in`]) with the stage and time it was let
///   through at, so the exact breaker weighs it as its own: slow or not, in its stage or late.
///
/// # What may differ under overlap, and by how much
///
/// Each call takes effect at one instant: a fast check (let through or refused) at its second
/// look at its stripe's word, a fast pass at its swap, anything else inside the lock. The
/// calls of all threads are then the calls of one `ClassicBreaker` in the order of those
/// instants, with two
/// differences (a call overlaps another from the reading of the clock it is given to its
/// return):
///
/// - **The breaker's clock.** A fast call reads the breaker's clock as the latest of the
///   opening's and of the times noted on its own stripe, not of the times other threads'
///   fast calls noted since: a later reading another thread took, which the exact breaker
///   would read an earlier `now` as, is not seen. On a clock that never goes back
///   ([`Clock`](crate::Clock)'s monotonic ones) a call that does not overlap that other one
///   read a later time itself, so this shows only for overlapping calls, or on a clock that
///   goes backwards across threads, and moves a call's start and end times (so its slow
///   test), or a refusal's rest of the wait, by at most the overlap or how far the clock
///   went back. Likewise a check notes its
///   time after its second look at its word, so a close that runs between the two hands the
///   exact breaker its clock without that time until the next close, and two threads that
///   share a stripe (more threads than stripes) may each leave the other's later time
///   unnoted: the exact breaker may then read that call's reading late, by less than the
///   overlap, for the time an opening or a probe's lease is counted from.
/// - **Changes of state, taken.** [`take_transition`](Self::take_transition) takes the
///   changes in the order they were made, and loses none (short of
///   [`PENDING`](Self::PENDING) untaken), but its test for one pending is one relaxed load: a
///   take that overlaps the turn that made a change may answer `None`, and the next take
///   gets it.
///
/// No outcome is lost, and none counted twice: a compare-and-swap either lands before the
/// close that swaps the word shut (which records its count) or fails, and the call settles
/// under the lock; a failure always takes the lock.
///
/// # One clock read or two
///
/// A call reads the clock when it asks and when it is settled, as [`ClassicBreaker`] does:
/// the slow test is the time between the two, and the outcome belongs where the call ended.
///
/// This type is not `Clone`; share it by `&` or an `Arc`. It takes `now` from the caller, as
/// the core does: the edges read it from a [`Clock`](crate::Clock). A permit settles only on
/// the breaker that made it: another's `pass` or `fail` changes nothing, hands it back and
/// counts it ([`foreign`](Self::foreign)).
///
/// # Examples
///
/// ```
/// use std::thread;
/// use std::time::Duration;
/// use ironward::CLASSIC;
/// use ironward::classic::State;
/// use ironward_tokio::SharedClassicBreaker;
///
/// let ms = Duration::from_millis;
/// let breaker = SharedClassicBreaker::new(CLASSIC, ms(0));
/// thread::scope(|s| {
///     for _ in 0..4 {
///         s.spawn(|| {
///             for i in 0..1_000 {
///                 let permit = breaker.check(ms(i)).expect("closed");
///                 breaker.pass(permit, ms(i));
///             }
///         });
///     }
/// });
/// // Every success was recorded: the window of the last 100 calls is full, so it opens at
/// // the 50th failure, which makes half of it failures.
/// for _ in 0..50 {
///     let permit = breaker.check(ms(1_000)).expect("closed until the 50th");
///     breaker.fail(permit, ms(1_000));
/// }
/// assert_eq!(breaker.state(ms(1_000)), State::Open);
/// assert_eq!(breaker.transitions(), 1);
/// ```
pub struct SharedClassicBreaker {
    /// What a fast call reads, and whether a change of state waits to be taken. Alone on its
    /// line: every call reads it, only a turn under the lock writes it.
    opening: Padded<Opening>,
    stripes: Stripes<Stripe>,
    exact: Mutex<Exact>,
    owner: Owner,
}

/// The exact breaker and the state of the fast paths, under the lock.
#[derive(Debug)]
struct Exact {
    breaker: ClassicBreaker,
    /// Whether the healthy path is open: the opening published, the stripes counting.
    open: bool,
    /// Whether the refusing path is open: the refusal published, the stripes refusing.
    refusing: bool,
    /// The open path's end, in nanoseconds: the healthy path's horizon, or the refusal's
    /// `until`.
    horizon: u64,
    /// The tag of the latest opening, wrapping at 2^23.
    tag: u64,
    /// The changes of state made under the lock and not yet taken, oldest first.
    changes: VecDeque<Transition>,
}

impl SharedClassicBreaker {
    /// The most changes of state kept untaken: past it the oldest is dropped, so that a
    /// caller that never takes them does not grow the queue without end. An edge takes one
    /// after each decision, far below it.
    pub const PENDING: usize = 1024;

    /// A closed breaker under `policy` with an empty record, at `now`, as
    /// [`ClassicBreaker::new`] makes it.
    pub fn new(policy: Classic, now: Duration) -> Self {
        Self::from(ClassicBreaker::new(policy, now))
    }

    /// Asks to make one call at `now`; `Some` means go ahead, `None` that the call is refused.
    ///
    /// This is [`check`](Self::check) without the reason for a refusal.
    #[inline]
    #[must_use = "dropping the answer loses the permit: the call goes unrecorded, and a refusal is ignored"]
    pub fn allow(&self, now: Duration) -> Option<SharedClassicPermit> {
        self.check(now).ok()
    }

    /// [`ClassicBreaker::check`] shared: the same answer, with the same reason for a refusal.
    ///
    /// Before the horizon (a healthy closed breaker), and before the end of the wait (an open
    /// breaker) or forced open, this reads the opening and the thread's stripe and notes the
    /// time there, taking no lock and writing nothing another thread reads; anything else the
    /// exact breaker decides under the lock.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward::classic::{OpenWait, Record, State};
    /// use ironward::{CLASSIC, Classic};
    /// use ironward_tokio::SharedClassicBreaker;
    ///
    /// let s = Duration::from_secs;
    /// let policy = Classic {
    ///     record: Record::Consecutive { failures: 2 },
    ///     open: OpenWait::Fixed(s(30)),
    ///     ..CLASSIC
    /// };
    /// let breaker = SharedClassicBreaker::new(policy, s(0));
    /// for _ in 0..2 {
    ///     let permit = breaker.check(s(1)).expect("closed");
    ///     breaker.fail(permit, s(2));
    /// }
    /// let reason = breaker.check(s(12)).expect_err("open");
    /// assert_eq!((reason.state, reason.next), (State::Open, s(20)));
    /// ```
    // Inlined always, its two fast paths with it and the lock's turn (`decide`) out of line: a
    // caller that checks in more than one place would otherwise call it, and get the permit
    // back through memory (30 more instructions a healthy call, by callgrind).
    #[inline(always)]
    #[must_use = "dropping the answer loses the permit: the call goes unrecorded, and a refusal is ignored"]
    pub fn check(&self, now: Duration) -> Result<SharedClassicPermit, ClassicReason> {
        let at = nanos(now);
        if let Some((epoch, at)) = self.admit(at) {
            return Ok(SharedClassicPermit::new(
                &self.owner,
                Call::Closed { epoch, at },
            ));
        }
        if let Some(reason) = self.refuse(at) {
            return Err(reason);
        }
        self.decide(now)
    }

    /// [`check`](Self::check) under the lock: the exact breaker decides, and the fast paths
    /// open again after, as the breaker then stands. Out of line, so that the fast paths of
    /// `check` inline small wherever a caller checks.
    #[inline(never)]
    fn decide(&self, now: Duration) -> Result<SharedClassicPermit, ClassicReason> {
        let mut exact = self.exact();
        self.close(&mut exact);
        let decided = exact.breaker.check(now);
        self.queue(&mut exact);
        // Refused, the breaker may be open within its wait: its next calls are refused on the
        // refusing path.
        self.open(&mut exact);
        let permit = decided?;
        let call = if exact.open {
            // A closed stage's permit: its stage and time say all of it, and a pass of it may
            // then be counted on a stripe.
            drop(permit);
            let (epoch, at) = (exact.breaker.epoch(), nanos(exact.breaker.latest()));
            Call::Closed { epoch, at }
        } else {
            Call::Exact(permit)
        };
        Ok(SharedClassicPermit::new(&self.owner, call))
    }

    /// Records the call behind `permit` as a success at `now` (its completion time, slow if
    /// it took longer than the policy's `slow_call`): `None`, or another breaker's permit back
    /// as `Some`, which changes nothing.
    ///
    /// A call let through closed that is not slow, settled before the horizon in the stage it
    /// was let through in, is an add to the thread's stripe; any other, the exact breaker
    /// records under the lock.
    // Inlined always, as `check` is, its lock's turn (`settle`) out of line.
    #[inline(always)]
    pub fn pass(&self, permit: SharedClassicPermit, now: Duration) -> Option<SharedClassicPermit> {
        // Another breaker's permit is never counted: it goes to `settle`, which hands it back.
        if let Some((epoch, at)) = permit.closed()
            && permit.breaker() == self.owner.mark()
            && self.count(epoch, at, nanos(now))
        {
            return None;
        }
        self.settle(permit, false, now)
    }

    /// Records the call behind `permit` as a failure at `now`, under the lock: `None`, or
    /// another breaker's permit back as `Some`, which changes nothing.
    pub fn fail(&self, permit: SharedClassicPermit, now: Duration) -> Option<SharedClassicPermit> {
        self.settle(permit, true, now)
    }

    /// Permits [`pass`](Self::pass) and [`fail`](Self::fail) handed back because another
    /// breaker made them: above 0 is a caller's bug.
    #[must_use]
    pub fn foreign(&self) -> u64 {
        self.owner.foreign()
    }

    /// Whether the next call at `now` would be refused, as a share
    /// ([`ClassicBreaker::ratio`]): 1 or 0.
    #[must_use]
    pub fn ratio(&self, now: Duration) -> f64 {
        self.locked(|breaker| breaker.ratio(now))
    }

    /// The state at `now` ([`ClassicBreaker::state`]), every call so far seen.
    #[must_use]
    pub fn state(&self, now: Duration) -> State {
        self.locked(|breaker| breaker.state(now))
    }

    /// The change of state the decisions made, oldest first, taken once: `None` if none is
    /// waiting.
    ///
    /// Unlike the core breaker's one slot, every change made is queued (up to
    /// [`PENDING`](Self::PENDING) untaken), so that threads deciding at once lose none of
    /// them to each other; while none waits this is one relaxed load.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward::classic::{OpenWait, Record, State, Transition};
    /// use ironward::{CLASSIC, Classic};
    /// use ironward_tokio::SharedClassicBreaker;
    ///
    /// let ms = Duration::from_millis;
    /// let policy = Classic {
    ///     record: Record::Consecutive { failures: 1 },
    ///     open: OpenWait::Fixed(ms(10)),
    ///     probes: 1,
    ///     ..CLASSIC
    /// };
    /// let breaker = SharedClassicBreaker::new(policy, ms(0));
    /// breaker.fail(breaker.check(ms(0)).unwrap(), ms(0));
    /// breaker.pass(breaker.check(ms(10)).unwrap(), ms(10));
    /// // Three changes, none taken yet: all three wait, in order.
    /// let taken: Vec<_> = std::iter::from_fn(|| breaker.take_transition()).collect();
    /// assert_eq!(taken, [
    ///     Transition { from: State::Closed, to: State::Open },
    ///     Transition { from: State::Open, to: State::HalfOpen },
    ///     Transition { from: State::HalfOpen, to: State::Closed },
    /// ]);
    /// ```
    #[must_use = "a transition taken and dropped is lost to every later take"]
    pub fn take_transition(&self) -> Option<Transition> {
        if self.opening.pending.load(Ordering::Relaxed) == 0 {
            return None;
        }
        let mut exact = self.exact();
        let next = exact.changes.pop_front();
        self.opening
            .pending
            .store(exact.changes.len() as u64, Ordering::Relaxed);
        next
    }

    /// How many changes of state the breaker has made ([`ClassicBreaker::transitions`]).
    #[must_use]
    pub fn transitions(&self) -> u64 {
        self.exact().breaker.transitions()
    }

    /// Runs `policy` from `now` on, as [`ClassicBreaker::retune`] does, and returns the policy
    /// it replaced, read in the same turn under the lock. A call deciding at the same time
    /// decides wholly under the old policy or wholly under the new one.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward::classic::{Force, State};
    /// use ironward::{CLASSIC, Classic};
    /// use ironward_tokio::SharedClassicBreaker;
    ///
    /// let breaker = SharedClassicBreaker::new(CLASSIC, Duration::ZERO);
    /// let was = breaker.retune(Classic { force: Force::Open, ..CLASSIC }, Duration::ZERO);
    /// assert_eq!(was, CLASSIC);
    /// assert_eq!(breaker.state(Duration::ZERO), State::ForcedOpen);
    /// ```
    pub fn retune(&self, policy: Classic, now: Duration) -> Classic {
        self.locked(|breaker| {
            let was = *breaker.policy();
            breaker.retune(policy, now);
            was
        })
    }

    /// The policy this breaker runs, as it was last given.
    #[must_use]
    pub fn policy(&self) -> Classic {
        *self.exact().breaker.policy()
    }

    /// A copy of the exact breaker with every success counted so far recorded: for a test, or
    /// a dashboard. Its changes of state are those still queued here, not its own slot.
    #[must_use]
    pub fn snapshot(&self) -> ClassicBreaker {
        self.locked(|breaker| breaker.clone())
    }

    /// Settles a permit on the exact breaker, under the lock: one it made, or one made anew
    /// for a call let through closed, with the stage and time it was let through at.
    ///
    /// Another breaker's permit changes nothing: it is counted and handed back. Out of line,
    /// so that the healthy path of [`pass`](Self::pass) inlines small wherever a caller
    /// settles.
    #[inline(never)]
    fn settle(
        &self,
        permit: SharedClassicPermit,
        failed: bool,
        now: Duration,
    ) -> Option<SharedClassicPermit> {
        if !self.owner.owns(permit.breaker()) {
            return Some(permit);
        }
        let call = permit.into_call();
        self.locked(|breaker| {
            let permit = match call {
                Call::Closed { epoch, at } => breaker.permit_in(epoch, Duration::from_nanos(at)),
                Call::Exact(permit) => permit,
            };
            // The exact breaker made it, or it is made for the exact breaker: never handed
            // back.
            let _ = if failed {
                breaker.fail(permit, now)
            } else {
                breaker.pass(permit, now)
            };
        });
        None
    }

    /// Runs `work` on the exact breaker with the fast path closed around it: every counted
    /// success recorded first, every change of state queued, the fast path opened again after
    /// if the breaker is healthy.
    fn locked<R>(&self, work: impl FnOnce(&mut ClassicBreaker) -> R) -> R {
        let mut exact = self.exact();
        self.close(&mut exact);
        let answer = work(&mut exact.breaker);
        self.queue(&mut exact);
        self.open(&mut exact);
        answer
    }

    /// The exact breaker, locked by the edges' one poison-tolerant lock.
    fn exact(&self) -> MutexGuard<'_, Exact> {
        lock(&self.exact)
    }

    /// Moves the change of state the exact breaker made, if any, to the queue.
    fn queue(&self, exact: &mut Exact) {
        if let Some(change) = exact.breaker.take_transition() {
            if exact.changes.len() == Self::PENDING {
                exact.changes.pop_front();
            }
            exact.changes.push_back(change);
            self.opening
                .pending
                .store(exact.changes.len() as u64, Ordering::Relaxed);
        }
    }
}

impl From<ClassicBreaker> for SharedClassicBreaker {
    /// Shares `breaker`, with its record, its stage and its clock as they are; a change of
    /// state it holds untaken is the first to take.
    fn from(breaker: ClassicBreaker) -> Self {
        let shared = Self {
            opening: Padded::new(Opening::default()),
            stripes: Stripes::new(Stripe::default),
            exact: Mutex::new(Exact {
                breaker,
                open: false,
                refusing: false,
                horizon: 0,
                tag: 0,
                changes: VecDeque::new(),
            }),
            owner: Owner::new(),
        };
        {
            let mut exact = shared.exact();
            shared.queue(&mut exact);
            shared.open(&mut exact);
        }
        shared
    }
}

/// The policy and the fast path's state; never waits on the lock held by another thread.
impl fmt::Debug for SharedClassicBreaker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = f.debug_struct("SharedClassicBreaker");
        out.field("stripes", &self.stripes.len());
        match self.exact.try_lock() {
            Ok(exact) => out
                .field("open", &exact.open)
                .field("refusing", &exact.refusing)
                .field("horizon", &exact.horizon)
                .field("policy", exact.breaker.policy()),
            Err(_) => out.field("policy", &"<locked>"),
        };
        out.finish()
    }
}

#[cfg(test)]
mod tests;
