//! [`SharedSreBreaker`]: the SRE circuit breaker shared by `&`, a healthy backend's calls let
//! through and recorded without a lock, and a refusing one's calls refused without it.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering, fence};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use ironward::{Outcome, Sre, SreBreaker, SreReason, SreThrottle};

use crate::clock::nanos;
use crate::lock;
use crate::owner::Owner;
use crate::stripe::{self, Padded, Stripes};

mod classic;
mod family;
mod permit;

pub use classic::{SharedClassicBreaker, SharedClassicPermit};
pub use family::{BreakerPolicy, SharedCircuitBreaker};
pub use permit::SharedSrePermit;

/// An [`ironward::SreBreaker`] that every task of every core shares by `&`, taking no lock for
/// the calls of a healthy backend, nor for the refusals of a failing one.
///
/// A client's every call asks its breaker twice, to be let through and to be recorded, and a
/// `Mutex<SreBreaker>` makes the cores take turns for both, though while the backend is healthy
/// the answer is always yes and the record only adds a success. This type keeps one exact
/// `SreBreaker` behind a lock for everything else, and the healthy case in atomics:
///
/// - the breaker says how long its healthy answer lasts whatever successes come
///   ([`SreBreaker::healthy_until`]: the drop certainly below zero with `k` at its floor, the
///   floor at least 1, until the window's newest bucket ends), and that instant is published
///   in one word, the *horizon*; [`check`](Self::check) before it is one load and a note of
///   the time on the thread's stripe;
/// - [`pass`](Self::pass) before it adds the success to its thread's stripe (see
///   [`stripe`](crate::stripe): one counter a thread, on a cache line of its own), and the
///   stripes are handed to the exact breaker ([`SreBreaker::record`]) before anything reads it.
///
/// Everything else takes the lock and asks the exact breaker: a call at or past the horizon
/// (the first of each bucket, then every call while the breaker is throttling), every
/// [`fail`](Self::fail), [`ratio`](Self::ratio), [`retune`](Self::retune). Each of those first
/// *closes* the fast path (the horizon to 0, every stripe swapped for a closed mark, their
/// successes and times recorded), then does its work on the exact breaker, then opens the
/// fast path again if the breaker is healthy, with the stripes at 0 and the horizon at the
/// new bucket's end.
///
/// A refusing breaker has a fast path of its own, since a server keeps asking it at full
/// rate. Between two turns under the lock a refusal changes only the window's call total
/// (one drop in the newest bucket) and the clock: the accepts, the runs, the constants and
/// the probe's time stay as they are. So a turn that leaves the breaker refusing publishes
/// what [`SreBreaker::refusing`] returns (the window it weighs, and until when: the newest
/// bucket's end, or the probe's, if sooner) with its weighing worked out once
/// ([`Sre::throttle`]) in a *view*, and opens a word on every stripe,
/// `(generation, open, drops)`. A call before that `until` is weighed by
/// [`SreThrottle::refusal`], the core's own formula, against the view's total plus its
/// stripe's drops; a refusal is a
/// compare-and-swap of the stripe's word from `drops` to `drops + 1`, and returns the
/// reason. A call the formula lets through, at or past `until`, or on a closed word, takes
/// the lock. Each turn first closes every word, recording their drops in the exact breaker
/// ([`SreBreaker::record`]) at the latest time the stripes noted, then decides, then
/// republishes with the next generation.
///
/// The view is many words, read without a lock: the open writes them only while every word
/// is closed, after a `Release` fence, and a reader loads them between its `Acquire` load of
/// its word and an `Acquire` fence before its swap. A reader that saw any write of a later
/// open therefore sees that the close before it happened, and its swap fails (the
/// generation, 32 bits, keeps an old word from reappearing short of 2^32 openings during one
/// refusal); one whose swap succeeds read the view of its word's generation, whole.
///
/// # Deciding as `SreBreaker` does
///
/// Calls that do not overlap are decided and recorded exactly as one [`SreBreaker`] decides and
/// records them: the same answers and reasons for the same `(now, roll)`, the same window
/// bucket by bucket, the same ratio, clocks going backwards and retunes included (the
/// property tests hold it to that against the `&mut` breaker). The refusing path refuses a
/// call only before `until`, where `SreBreaker::check` reads the same window but for the drops
/// since the turn, which on one thread are all on the one stripe: the same weighing of the
/// same total, so the same refusal and reason; its drop is recorded, with its time, in the
/// bucket `check` records it in (the view's, the newest until `until`), before anything
/// reads the window. The fast path lets a call
/// through only before the horizon, where `SreBreaker::check` lets it through at its first test
/// having changed nothing but its clock, which the stripe's note of the time changes in the
/// same way (every note is recorded at the next close). A success counted on a stripe is a
/// success at a time before the horizon, so in the bucket the horizon ends, which is the
/// exact breaker's newest: the close records it there, with the latest time noted, before
/// the bucket can change or anything reads it. Successes only make a floor of 1 or more
/// healthier, so the fast path never needs to see them.
///
/// # What may differ under overlap, and by how much
///
/// Each call takes effect at one instant: a fast `check` at its load of the horizon, a fast
/// `pass` at its add to a stripe, anything else inside the lock. The calls of all threads are
/// then the calls of one `SreBreaker` in the order of those instants, with two differences,
/// both confined to calls that overlap:
///
/// - **A call let through while another thread's failure is being recorded.** The horizon is
///   closed at the end of the failure's turn under the lock, so a `check` whose load falls
///   between the failure and the close is let through on the old answer. It is decided as if
///   it came just before the failure, which it overlaps, so some order of the calls of one
///   `SreBreaker` lets it through: no call is let through that every order refuses. At most the
///   calls whose load falls in that one critical section are, one per other thread.
/// - **The breaker's clock.** A fast call notes its time on its stripe after its load; a
///   close that runs between the two records the stripe without it, and two threads that
///   share a stripe (more threads than stripes) may each leave the other's later time
///   unnoted. The exact breaker's latest time may then lag that call's until the next
///   close. The lag is less than the bucket the call fell in (its time was before the
///   horizon), so no outcome lands in another bucket, and it is visible only to the probe:
///   a refusing breaker's probe may fire up to that lag early.
///
/// - **A refusal decided without the other threads' latest drops.** A fast refusal weighs the
///   view's total plus the drops on its own stripe, not those other threads counted on
///   theirs since the last turn under the lock, so its reason's `total` may be short of the
///   exact breaker's by them, and its drop fraction is the one for that smaller total.
///   Drops only add to the calls, so in real arithmetic that fraction is at most the exact
///   one: a draw it refuses, the exact breaker refuses too. The fast path never lets a call
///   through: every call it does not refuse is decided by the exact breaker under the lock,
///   after every drop counted so far has been recorded, so no call is let through that the
///   exact breaker, alone on one thread, would refuse at that moment.
///
/// No drop is lost: a swap either lands before the close that swaps the word shut (which
/// records its count) or fails and the call decides again, on the lock if the word is
/// closed. No success or failure is lost: an add to a stripe either lands before the close that
/// swaps it (and is recorded by it) or finds the closed mark and goes to the lock instead;
/// a failure always takes the lock. And nothing lands in a bucket other than its time's: a
/// stripe's successes are for the bucket that was newest when it opened, and the horizon
/// never moves back, so an add that read an older horizon and lands in a later opening is a
/// success recorded after that opening's bucket began, which is where `SreBreaker` records a
/// settle whose time is earlier than one it has seen.
///
/// The words are `Acquire`/`Release`: an open's stripes at 0 happen before its horizon is
/// seen, so an add after a load of it never finds the previous close's mark.
///
/// # One clock read or two
///
/// A call reads the clock when it asks and when it is settled, as [`SreBreaker`] does. The
/// outcome belongs to the bucket the call ends in: a failure seen after a 30 s timeout is
/// news about the backend then, and recording it at the call's start would put it in a
/// bucket that may have left the window, so the settle's reading is not the ask's.
///
/// This type is not `Clone`; share it by `&` or an `Arc`. It takes `now` and the draw from
/// the caller, as the core does: the edges read them from a [`Clock`](crate::Clock) and
/// [`Dice`](crate::Dice). A permit settles only on the breaker that made it: another's `pass`
/// or `fail` changes nothing, hands it back and counts it ([`foreign`](Self::foreign)).
///
/// # Examples
///
/// ```
/// use std::thread;
/// use std::time::Duration;
/// use ironward::SRE;
/// use ironward_tokio::SharedSreBreaker;
///
/// let ms = Duration::from_millis;
/// let breaker = SharedSreBreaker::new(SRE, ms(0));
/// thread::scope(|s| {
///     for _ in 0..4 {
///         s.spawn(|| {
///             for i in 0..100 {
///                 let permit = breaker.allow(ms(i), 0.5).expect("a healthy backend");
///                 breaker.pass(permit, ms(i));
///             }
///         });
///     }
/// });
/// assert_eq!(breaker.ratio(ms(100)), 0.0);
/// // Every success was recorded in the exact breaker's window.
/// let mut successes = 0;
/// breaker.snapshot().window().each(ms(100), |t| successes += t.success);
/// assert_eq!(successes, 400);
/// ```
pub struct SharedSreBreaker {
    /// Until when, in nanoseconds and exclusive, a call is let through on one load; 0 while
    /// the fast path is closed. Alone on its line: every call reads it, a close writes it.
    horizon: Padded<AtomicU64>,
    stripes: Stripes<Stripe>,
    /// The window the fast refusals weigh, written only while their word is closed.
    view: Padded<View>,
    exact: Mutex<Exact>,
    owner: Owner,
}

/// The word's flag for an open refusing path.
const OPEN: u64 = 1 << 31;

/// The word's count of refusals; at its largest the next refusal takes the lock instead.
const DROPS: u64 = OPEN - 1;

/// A copy of what [`SreBreaker::refusing`] returned and the constants to weigh it by, each in a
/// word of its own: consistent for any reader whose swap of the refusing word succeeds.
#[derive(Debug, Default)]
struct View {
    /// Until when, in nanoseconds and exclusive, the window decides every refusal.
    until: AtomicU64,
    total: AtomicU64,
    accepts: AtomicU64,
    failing: AtomicU64,
    working: AtomicU64,
    /// The window's [`SreThrottle`] (its weight, protection, weighted accepts and recovery
    /// scaling as bits), worked out once for every refusal the view decides.
    w: AtomicU64,
    protection: AtomicU64,
    weighted: AtomicU64,
    scale: AtomicU64,
}

/// What one thread (or a few) adds to between two closes.
#[derive(Debug, Default)]
struct Stripe {
    /// Successes counted since the fast path opened, or [`CLOSED`] while it is closed.
    successes: AtomicU64,
    /// The latest time a fast call on this stripe saw, in nanoseconds.
    latest: AtomicU64,
    /// `generation << 32 | OPEN | drops`: the opening of the refusing path this is, whether
    /// it is open, and the refusals this stripe counted since it opened.
    refused: AtomicU64,
}

/// A stripe's successes while the fast path is closed: an add that finds it recorded
/// nothing, and goes to the lock. Far above any count an open stripe reaches.
const CLOSED: u64 = 1 << 63;

/// The most successes a stripe counts before its adder hands them over under the lock:
/// 2^40, so that 256 stripes stay far below the 2^52 [`SreBreaker::healthy_until`] allows.
const FULL: u64 = 1 << 40;

/// The exact breaker and the state of the fast path, under the lock.
#[derive(Debug)]
struct Exact {
    breaker: SreBreaker,
    /// Whether the fast path is open: the horizon published, the stripes counting.
    open: bool,
    /// The latest horizon or refusing `until` ever published, in nanoseconds. None is
    /// published below it, so an add that read an older horizon always lands in a bucket
    /// ending at or after it, and a time a stripe noted is before the newest bucket's end.
    published: u64,
    /// Whether the refusing path is open: the view written, the word open.
    refusing: bool,
    /// The refusing path's openings so far, wrapping.
    generation: u32,
}

impl SharedSreBreaker {
    /// A breaker with an empty window opening at `now`, as [`SreBreaker::new`] makes it.
    pub fn new(sre: Sre, now: Duration) -> Self {
        Self::from(SreBreaker::new(sre, now))
    }

    /// Asks to make one call at `now`; `Some` means go ahead, `None` that the call is refused.
    ///
    /// This is [`check`](Self::check) without the reason for a refusal.
    #[inline]
    #[must_use = "dropping the answer loses the permit: the call goes unrecorded, and a refusal is ignored"]
    pub fn allow(&self, now: Duration, roll: f64) -> Option<SharedSrePermit> {
        self.check(now, roll).ok()
    }

    /// [`SreBreaker::check`] shared: the same answer, with the numbers behind a refusal.
    ///
    /// Before the horizon (a healthy breaker, until its newest bucket ends) this is one load
    /// and a note of the time. A refusing breaker refuses from its copy of the window, with
    /// one swap; anything else, and every call it would let through, the exact breaker
    /// decides under the lock.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward::SRE;
    /// use ironward_tokio::SharedSreBreaker;
    ///
    /// let ms = Duration::from_millis;
    /// let breaker = SharedSreBreaker::new(SRE, ms(0));
    /// for _ in 0..100 {
    ///     let permit = breaker.check(ms(0), 0.99).expect("over the drop fraction");
    ///     breaker.fail(permit, ms(0));
    /// }
    /// let reason = breaker.check(ms(100), 0.5).expect_err("under the drop fraction");
    /// assert_eq!((reason.total, reason.accepts, reason.failing), (100, 0, 1));
    /// ```
    #[inline]
    #[must_use = "dropping the answer loses the permit: the call goes unrecorded, and a refusal is ignored"]
    pub fn check(&self, now: Duration, roll: f64) -> Result<SharedSrePermit, SreReason> {
        let at = nanos(now);
        if at < self.horizon.load(Ordering::Acquire) {
            self.stripes.mine().saw(at);
            return Ok(SharedSrePermit::new(&self.owner));
        }
        if let Some(reason) = self.refuse(at, roll) {
            return Err(reason);
        }
        // The exact breaker's permit is not settled: outcomes reach it by `SreBreaker::record`.
        self.locked(|breaker| {
            breaker
                .check(now, roll)
                .map(|_| SharedSrePermit::new(&self.owner))
        })
    }

    /// Records the call behind `permit` as a success, at `now` (its completion time): `None`,
    /// or another breaker's permit back as `Some`, which changes nothing.
    ///
    /// Before the horizon this is an add to the thread's stripe; otherwise (and when the
    /// stripe was closed under it) the exact breaker records it under the lock.
    #[inline]
    pub fn pass(&self, permit: SharedSrePermit, now: Duration) -> Option<SharedSrePermit> {
        if !self.owner.owns(permit.breaker()) {
            return Some(permit);
        }
        let at = nanos(now);
        if at < self.horizon.load(Ordering::Acquire) {
            let stripe = self.stripes.mine();
            stripe.saw(at);
            let held = stripe.successes.fetch_add(1, Ordering::Relaxed);
            if held < FULL {
                return None;
            }
            if held & CLOSED == 0 {
                // Counted, on a stripe that is full: hand it over now.
                self.locked(|_| ());
                return None;
            }
            // Closed under this add, which counted nothing: the next open resets the word.
        }
        self.locked(|breaker| breaker.record(Outcome::Success, 1, now));
        None
    }

    /// Records the call behind `permit` as a failure, at `now` (its completion time), under
    /// the lock: `None`, or another breaker's permit back as `Some`, which changes nothing.
    pub fn fail(&self, permit: SharedSrePermit, now: Duration) -> Option<SharedSrePermit> {
        if !self.owner.owns(permit.breaker()) {
            return Some(permit);
        }
        self.locked(|breaker| breaker.record(Outcome::Failure, 1, now));
        None
    }

    /// Permits [`pass`](Self::pass) and [`fail`](Self::fail) handed back because another
    /// breaker made them: above 0 is a caller's bug.
    #[must_use]
    pub fn foreign(&self) -> u64 {
        self.owner.foreign()
    }

    /// The fraction of calls the breaker would refuse at `now` ([`SreBreaker::ratio`]), every
    /// success counted so far included.
    #[must_use]
    pub fn ratio(&self, now: Duration) -> f64 {
        self.locked(|breaker| breaker.ratio(now))
    }

    /// Changes the policy in place, keeping the outcomes in the window, as
    /// [`SreBreaker::retune`] does, and returns the policy it replaced (read in the same turn
    /// under the lock, so that a caller reporting the change reports the one that happened
    /// even while others retune). A call deciding at the same time decides wholly under the
    /// old policy or wholly under the new one.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward::{SRE, Sre};
    /// use ironward_tokio::SharedSreBreaker;
    ///
    /// let breaker = SharedSreBreaker::new(SRE, Duration::ZERO);
    /// let was = breaker.retune(Sre { k: 2.0, ..SRE }, Duration::ZERO);
    /// assert_eq!((was.k, breaker.sre().k), (1.5, 2.0));
    /// ```
    pub fn retune(&self, sre: Sre, now: Duration) -> Sre {
        self.locked(|breaker| {
            let was = *breaker.sre();
            breaker.retune(sre, now);
            was
        })
    }

    /// The policy this breaker runs, as it was last given.
    #[must_use]
    pub fn sre(&self) -> Sre {
        *self.exact().breaker.sre()
    }

    /// A copy of the exact breaker with every success counted so far recorded: for a test,
    /// or a dashboard that reads the window bucket by bucket.
    #[must_use]
    pub fn snapshot(&self) -> SreBreaker {
        self.locked(|breaker| breaker.clone())
    }

    /// Runs `work` on the exact breaker with the fast path closed around it: every counted
    /// success recorded first, the fast path opened again after if the breaker is healthy.
    fn locked<R>(&self, work: impl FnOnce(&mut SreBreaker) -> R) -> R {
        let mut exact = self.exact();
        self.close(&mut exact);
        let answer = work(&mut exact.breaker);
        self.open(&mut exact);
        answer
    }

    /// The exact breaker, locked by the edges' one poison-tolerant lock.
    fn exact(&self) -> MutexGuard<'_, Exact> {
        lock(&self.exact)
    }

    /// Refuses the call at `at` from the view, if the refusing path is open and the window it
    /// holds refuses `roll` with the refusals since counted: `None` sends the call to the
    /// lock.
    #[inline]
    fn refuse(&self, at: u64, roll: f64) -> Option<SreReason> {
        let stripe = self.stripes.mine();
        let word = &stripe.refused;
        let view = &*self.view;
        let mut seen = word.load(Ordering::Acquire);
        loop {
            let drops = seen & DROPS;
            if seen & OPEN == 0 || drops == DROPS || at >= view.until.load(Ordering::Relaxed) {
                return None;
            }
            let float = |n: &AtomicU64| f64::from_bits(n.load(Ordering::Relaxed));
            let count = |n: &AtomicU64| usize::try_from(n.load(Ordering::Relaxed)).unwrap_or(0);
            let throttle = SreThrottle {
                w: float(&view.w),
                protection: float(&view.protection),
                weighted: float(&view.weighted),
                scale: float(&view.scale),
                accepts: view.accepts.load(Ordering::Relaxed),
                failing: count(&view.failing),
                working: count(&view.working),
            };
            let total = view.total.load(Ordering::Relaxed).saturating_add(drops);
            let reason = throttle.refusal(total, roll);
            // The view's loads come before the swap: one that read a later open's writes makes
            // the close before them visible to the swap, which then fails.
            fence(Ordering::Acquire);
            // Let through (or read torn, which the swap would reject): the lock decides.
            let reason = reason?;
            stripe.saw(at);
            match word.compare_exchange_weak(seen, seen + 1, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return Some(reason),
                Err(now) => seen = now,
            }
        }
    }

    /// Closes both fast paths: the refusals counted recorded as drops, the successes the
    /// stripes counted as successes, each at the latest time its path saw.
    fn close(&self, exact: &mut Exact) {
        if exact.refusing {
            exact.refusing = false;
            let (mut drops, mut latest) = (0u64, 0u64);
            for stripe in self.stripes.iter() {
                let was = stripe.refused.fetch_and(!(OPEN | DROPS), Ordering::AcqRel);
                drops = drops.saturating_add(was & DROPS);
                latest = latest.max(stripe.latest.load(Ordering::Relaxed));
            }
            // Every refusal counted was decided in the view's bucket, the exact breaker's
            // newest, before `until`, and so is every time noted (see `published`): the drops land
            // where `SreBreaker::check` would have put them one at a time.
            exact
                .breaker
                .record(Outcome::Drop, drops, Duration::from_nanos(latest));
        }
        if !exact.open {
            return;
        }
        exact.open = false;
        self.horizon.store(0, Ordering::Relaxed);
        let (mut successes, mut latest) = (0u64, 0u64);
        for stripe in self.stripes.iter() {
            // Taken while open, so never the closed mark: at most a full stripe's count and
            // the adds racing with it.
            let held = stripe.successes.swap(CLOSED, Ordering::AcqRel);
            successes = successes.saturating_add(held & !CLOSED);
            latest = latest.max(stripe.latest.load(Ordering::Relaxed));
        }
        // Every time noted is before the horizon, so in the breaker's newest bucket; with no
        // successes this only moves the clock.
        exact
            .breaker
            .record(Outcome::Success, successes, Duration::from_nanos(latest));
    }

    /// Opens the healthy path if the breaker is healthy until a horizon no earlier than any
    /// published before, or else the refusing path if the breaker is refusing.
    fn open(&self, exact: &mut Exact) {
        let Some(end) = exact.breaker.healthy_until() else {
            self.open_refusals(exact);
            return;
        };
        let end = nanos(end);
        if end < exact.published {
            // A retune to narrower buckets: wait for a bucket that ends past every horizon
            // an add may still hold.
            return;
        }
        for stripe in self.stripes.iter() {
            stripe.successes.store(0, Ordering::Relaxed);
        }
        exact.open = true;
        exact.published = end;
        self.horizon.store(end, Ordering::Release);
    }

    /// Opens the refusing path if the exact breaker is refusing until an `until` no earlier
    /// than any given before: the view written, then the word opened with a new generation.
    fn open_refusals(&self, exact: &mut Exact) {
        let Some((until, window)) = exact.breaker.refusing() else {
            return;
        };
        let until = nanos(until);
        if until < exact.published {
            // A retune to narrower buckets or a shorter probe: wait until a time noted against
            // an older view is certainly in the newest bucket.
            return;
        }
        exact.published = until;
        // Pairs with the fence in `refuse`: a reader that sees any of these writes fails its
        // swap, the word having been closed before them.
        fence(Ordering::Release);
        let view = &*self.view;
        let throttle = exact
            .breaker
            .sre()
            .throttle(window.accepts, window.failing, window.working);
        let count = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
        for (word, value) in [
            (&view.until, until),
            (&view.total, window.total),
            (&view.accepts, window.accepts),
            (&view.failing, count(window.failing)),
            (&view.working, count(window.working)),
            (&view.w, throttle.w.to_bits()),
            (&view.protection, throttle.protection.to_bits()),
            (&view.weighted, throttle.weighted.to_bits()),
            (&view.scale, throttle.scale.to_bits()),
        ] {
            word.store(value, Ordering::Relaxed);
        }
        // A new generation, so that no swap against an earlier opening's word succeeds (short
        // of 2^32 openings while one refusal decides).
        exact.generation = exact.generation.wrapping_add(1);
        let word = u64::from(exact.generation) << 32 | OPEN;
        for stripe in self.stripes.iter() {
            stripe.refused.store(word, Ordering::Release);
        }
        exact.refusing = true;
    }
}

impl Stripe {
    /// Notes that a call on this stripe saw `at`: two threads racing here can only leave the
    /// earlier of two times that both fall before the horizon (see the type's docs, the
    /// breaker's clock).
    #[inline]
    fn saw(&self, at: u64) {
        stripe::note(&self.latest, at);
    }
}

impl From<SreBreaker> for SharedSreBreaker {
    /// Shares `breaker`, with its window and its clock as they are.
    fn from(breaker: SreBreaker) -> Self {
        let shared = Self {
            horizon: Padded::new(AtomicU64::new(0)),
            stripes: Stripes::new(Stripe::default),
            view: Padded::new(View::default()),
            exact: Mutex::new(Exact {
                breaker,
                open: false,
                published: 0,
                refusing: false,
                generation: 0,
            }),
            owner: Owner::new(),
        };
        shared.open(&mut shared.exact());
        shared
    }
}

/// The policy and the fast path's state; never waits on the lock held by another thread.
impl fmt::Debug for SharedSreBreaker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = f.debug_struct("SharedSreBreaker");
        out.field("horizon", &self.horizon.load(Ordering::Relaxed))
            .field("stripes", &self.stripes.len());
        match self.exact.try_lock() {
            Ok(exact) => out.field("sre", exact.breaker.sre()),
            Err(_) => out.field("sre", &"<locked>"),
        };
        out.finish()
    }
}

#[cfg(test)]
mod tests;
