//! [`SharedShedder`]: the adaptive load shedder shared by `&`, a cool server's calls decided
//! and recorded without a lock.

use std::fmt;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use ironward::{Criticality, Shed, ShedReason, Shedder, Total};

use crate::clock::nanos;
use crate::lock;
use crate::owner::Owner;
use crate::stripe::{Padded, Stripes};

mod ticket;

pub use ticket::ShedTicket;

/// An [`ironward::Shedder`] that every task of every core shares by `&`, taking no lock for
/// the calls of a server that is not overloaded.
///
/// A `Mutex<Shedder>` makes every request take the lock twice, to be let in and to be
/// recorded, though on a healthy server go-zero's rule (`core/load/adaptiveshedder.go`)
/// admits without reading anything it guards: under the CPU threshold, with no refusal since
/// it last cooled, a call is let in whatever the window says. This type keeps that common case
/// in atomics and the rest in one exact `Shedder` behind a lock:
///
/// - the count in flight, its moving average and the latest clock reading are atomic words,
///   changed by a compare-and-swap (or an add) per call;
/// - the CPU threshold and whether the shedder has refused since it last cooled are mirrored
///   in one word that only the locked path writes, so [`check`](Self::check) under the
///   threshold and cool is one load, a clock update and an add;
/// - a pass goes to a stripe (one atomic word, its thread's, holding a count and a sum of
///   response times) while it falls in the window's newest bucket, and the stripes are
///   handed to the exact shedder ([`Shedder::record`]) before that bucket is read: when a
///   pass or a decision first falls past its end, at a retune, or when
///   [`passes`](Self::passes) asks.
///
/// Everything else (a CPU reading at or over the threshold, a shedder still cooling after a
/// refusal, a class that a more critical one's refusal may still hold below the floor, the
/// first pass of each bucket, a retune) takes the lock and asks the exact shedder
/// ([`Shedder::check_flight_as`]), with the count and the average from the atomic words. The
/// response time needs the clock twice, at the start and at the end of a call; nothing else
/// reads it.
///
/// # Deciding as `Shedder` does
///
/// Calls that do not overlap are decided and recorded exactly as one [`Shedder`] decides
/// and records them, refusals' numbers included, clocks going backwards included (the
/// property tests hold it to that against the `&mut` shedder, for every [`Criticality`]).
/// The fast path admits only when the mirror says the CPU reading is under the threshold, no
/// refusal is waiting to cool, and no refusal of a class above the call's has been seen
/// within the cooling time; `Shedder::check_as` then admits too, having changed nothing but
/// its clock and the count in flight, which the fast path changes in the same way. The
/// mirror's floor errs one way only: it remembers every refusal, as the core's floor does,
/// one nanosecond late, so a call it sends to the lock may still be admitted there, and a
/// call it admits the core admits. The window is read only by
/// a hot decision, and only its complete buckets; the stripes hold passes of the newest
/// bucket alone, and reach the exact shedder before a decision at or past that bucket's end
/// reads it, in one [`Shedder::record`], which leaves what as many `pass` calls would have
/// left (a bucket keeps only a sum and a count).
///
/// # What may differ under overlap, and by how much
///
/// Each call changes each word in one atomic step, so every word, taken alone, is exact: no
/// admission or settle is lost (the count in flight returns to 0 once every ticket is
/// settled), and no pass is lost (the window's totals are the passes made; the stress tests
/// count them). What overlap changes is which order the words see the calls in, and so what
/// a decision or a bucket reads:
///
/// - **The moving average.** A settle takes the call out of the count, then folds the count
///   it left into the average; two settles that overlap may fold their counts in the other
///   order. Folding `a` then `b` instead of `b` then `a` moves the average by
///   `(1 − β)² · (b − a)`, and the two counts differ by at most the settles in between, so
///   with `k` settles overlapping the average is within `(1 − β)² · k` of some order of
///   them: 0.01 · k with go-zero's β of 0.9, and the error then decays by β per later
///   settle.
/// - **A refusal's numbers.** A hot decision reads the count and the average once, under the
///   lock; fast admissions and settles may land between that read and its answer, so the
///   `flying` it reports (and decides by) is off by at most the calls that overlap it, one
///   per other thread. A fast admission that read the mirror before a refusal set it counts
///   as made before that refusal: it is never one the refusal's own rule would have refused
///   later, since the shedder starts refusing under the threshold only once the mirror says
///   it refused.
/// - **The latest reading.** A call that reads the clock later than the latest stores its
///   reading (a store, not a read-modify-write, which would cost every request two locked
///   instructions); two calls that overlap may both store, and the earlier of their two
///   readings may be left. The latest then lags the true latest by at most the spread of
///   the readings of calls that overlap, until the next call moves it on, and only a reading
///   earlier than that is read differently (as the lagging latest rather than the true
///   one). The exact shedder keeps its own clock, which never goes back, so the heat and
///   the window are measured on a clock that does not.
/// - **Which bucket a pass lands in, and its response time.** A pass that read the newest
///   bucket's end just before another thread moved the window on lands in the next bucket,
///   as if made after the one that moved it (which `Shedder` does to a pass at an earlier
///   reading); its response time is measured to its own reading, earlier than the latest
///   by at most the time it took between its clock read and its add.
///
/// None of these admits a call on the fast path that the exact shedder, asked at that
/// instant, would refuse: the fast path runs only while the mirror shows a cool shedder and
/// a floor under the call's class, and the mirror changes only under the lock, in the same
/// step as the shedder it mirrors.
///
/// # Cost
///
/// A cool call is two loads of the mirror (the gate and its class's floor, on one line), the
/// clock update (a load, and a store when the reading is later) and an add to the count in
/// flight; its pass is the clock update, two
/// compare-and-swaps (the count and the average) and one on its stripe: four locked
/// instructions a request, as many as the two lock and unlock pairs of a `Mutex<Shedder>`,
/// but none of them waits for another thread's critical section. The stripes are [`Stripes`]: twice as many as the machine has cores, each on a
/// cache line of its own, a thread always on the same one. The
/// lock is taken once per bucket (go-zero's 100 ms) by the first pass past its end, and by
/// every decision while the server is hot.
///
/// A ticket settles only on the shedder that made it: another's `pass` or `fail` changes
/// nothing, hands it back and counts it ([`foreign`](Self::foreign)).
///
/// # Examples
///
/// ```
/// use std::thread;
/// use std::time::Duration;
/// use ironward::SHED;
/// use ironward_tokio::SharedShedder;
///
/// let ms = Duration::from_millis;
/// let shedder = SharedShedder::new(SHED, ms(0));
/// thread::scope(|s| {
///     for _ in 0..2 {
///         s.spawn(|| {
///             // A cool CPU: let in and recorded without the lock.
///             let ticket = shedder.allow(ms(10), 300).expect("cool");
///             shedder.pass(ticket, ms(30));
///         });
///     }
/// });
/// assert_eq!(shedder.flying(), 0);
/// assert_eq!(shedder.passes(ms(30)).count, 2);
/// ```
pub struct SharedShedder {
    /// Written by every call.
    flight: Padded<Flight>,
    /// Read by every call, written under the lock.
    mirror: Padded<Mirror>,
    /// Passes of the window's newest bucket not yet handed to `exact`: `count << SUM_BITS |
    /// sum`.
    stripes: Stripes<AtomicU64>,
    /// Per class, least critical first: the latest refusal (in nanoseconds, plus one, so that
    /// 0 is none) of any class above it. Written and read under the lock only, to work out
    /// [`Mirror::floors`] again when the cooling time changes.
    above: [AtomicU64; 4],
    exact: Mutex<Shedder>,
}

/// The words every call writes.
#[derive(Debug)]
struct Flight {
    /// Calls let in and not yet settled.
    flying: AtomicU64,
    /// The moving average of `flying`, as `f64` bits.
    average: AtomicU64,
    /// The latest clock reading seen, in nanoseconds.
    latest: AtomicU64,
}

/// What the fast paths read of the exact shedder.
#[derive(Debug)]
struct Mirror {
    /// `cpu << 1 | shedding`: the CPU threshold, and whether the shedder has refused since it
    /// last cooled.
    gate: AtomicU64,
    /// The weight of the past in the moving average, in force, as `f64` bits.
    beta: AtomicU64,
    /// When the window's newest bucket ends, in nanoseconds: a pass before it goes to a
    /// stripe.
    until: AtomicU64,
    /// Per class, least critical first: until when (in nanoseconds, exclusive) a more
    /// critical class's refusal may hold the class below the floor; 0 when none can, and
    /// `u64::MAX` for a cooling time that never ends, which always asks the lock.
    floors: [AtomicU64; 4],
    /// The mark of this shedder's tickets, on the line every call reads.
    owner: Owner,
}

/// The low bits of a stripe hold the summed response times, in nanoseconds.
const SUM_BITS: u32 = 44;
/// The most a stripe's sum holds: about 4.9 hours of response time.
const SUM_MAX: u64 = (1 << SUM_BITS) - 1;
/// The most passes a stripe holds: 2^20 − 1, about a million a bucket a thread.
const COUNT_MAX: u64 = (1 << (64 - SUM_BITS)) - 1;

impl SharedShedder {
    /// A shedder with an empty window opening at `now`, nothing in flight and a cool CPU, as
    /// [`Shedder::new`] makes one.
    pub fn new(shed: Shed, now: Duration) -> Self {
        let exact = Shedder::new(shed, now);
        Self {
            flight: Padded::new(Flight {
                flying: AtomicU64::new(0),
                average: AtomicU64::new(0f64.to_bits()),
                latest: AtomicU64::new(nanos(exact.latest())),
            }),
            mirror: Padded::new(Mirror {
                gate: AtomicU64::new(gate(&exact)),
                beta: AtomicU64::new(exact.beta().to_bits()),
                until: AtomicU64::new(nanos(exact.bucket_end())),
                floors: Default::default(),
                owner: Owner::new(),
            }),
            stripes: Stripes::new(|| AtomicU64::new(0)),
            above: Default::default(),
            exact: Mutex::new(exact),
        }
    }

    /// Asks to start one call at `now`, with the CPU at `cpu` thousandths; `Some` means go
    /// ahead, `None` that the server is overloaded. This is [`check`](Self::check) without
    /// the reason for a refusal.
    #[inline]
    #[must_use = "dropping the answer loses the ticket: the call stays counted in flight forever, and a refusal is ignored"]
    pub fn allow(&self, now: Duration, cpu: u32) -> Option<ShedTicket> {
        self.check(now, cpu).ok()
    }

    /// [`allow`](Self::allow) with the numbers behind a refusal, as [`Shedder::check`]
    /// gives them.
    ///
    /// Under the CPU threshold, with no refusal waiting to cool, this takes no lock.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward::SHED;
    /// use ironward_tokio::SharedShedder;
    ///
    /// let ms = Duration::from_millis;
    /// let shedder = SharedShedder::new(SHED, ms(0));
    /// let mut tickets: Vec<_> = (0..100).map(|_| shedder.check(ms(0), 950).unwrap()).collect();
    /// for ticket in tickets.drain(..50) {
    ///     shedder.pass(ticket, ms(50));
    /// }
    /// let reason = shedder.check(ms(60), 950).expect_err("hot and full");
    /// assert_eq!((reason.cpu, reason.flying, reason.capacity), (950, 50, 5.0));
    /// ```
    #[inline]
    #[must_use = "dropping the answer loses the ticket: the call stays counted in flight forever, and a refusal is ignored"]
    pub fn check(&self, now: Duration, cpu: u32) -> Result<ShedTicket, ShedReason> {
        self.check_as(now, cpu, Criticality::Critical)
    }

    /// [`check`](Self::check) for a call of class `criticality`, decided exactly as
    /// [`Shedder::check_as`] decides it: while hot, the less critical classes meet a full
    /// server first, and for the cooling time after a class is refused every class below it
    /// is refused outright.
    ///
    /// Under the CPU threshold, with no refusal waiting to cool and none of a more critical
    /// class within the cooling time, this takes no lock, as `check` does.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward::{Criticality, SHED};
    /// use ironward_tokio::SharedShedder;
    ///
    /// let ms = Duration::from_millis;
    /// let shedder = SharedShedder::new(SHED, ms(0));
    /// let mut tickets: Vec<_> = (0..100).map(|_| shedder.check(ms(0), 950).unwrap()).collect();
    /// for ticket in tickets.drain(..96) {
    ///     shedder.pass(ticket, ms(50));
    /// }
    /// // Hot, 4 in flight against an assumed capacity of 5: room for the critical only.
    /// let reason = shedder.check_as(ms(60), 950, Criticality::Sheddable).unwrap_err();
    /// assert_eq!((reason.flying, reason.capacity), (4, 2.5));
    /// tickets.push(shedder.check_as(ms(60), 950, Criticality::Critical).expect("room"));
    /// # for ticket in tickets { shedder.fail(ticket); }
    /// ```
    #[inline]
    #[must_use = "dropping the answer loses the ticket: the call stays counted in flight forever, and a refusal is ignored"]
    pub fn check_as(
        &self,
        now: Duration,
        cpu: u32,
        criticality: Criticality,
    ) -> Result<ShedTicket, ShedReason> {
        let now = self.advance(nanos(now));
        let mirror = &*self.mirror;
        let gate = mirror.gate.load(Relaxed);
        // Under the threshold, not cooling, and no class above this one refused within the
        // cooling time: `Shedder::check_as` admits without reading its window, changing
        // nothing but its clock (done) and the count in flight.
        if gate & 1 == 0 && u64::from(cpu.min(1000)) < gate >> 1 {
            let floor = mirror.floors[criticality.rank()].load(Relaxed);
            if now >= floor && floor != u64::MAX {
                self.flight.flying.fetch_add(1, Relaxed);
                return Ok(ShedTicket::new(now, &mirror.owner));
            }
        }
        self.decide(now, cpu, criticality)
    }

    /// The locked half of [`check_as`](Self::check_as): the exact shedder decides, with the
    /// count in flight and the average from the atomic words.
    #[inline(never)]
    fn decide(
        &self,
        now: u64,
        cpu: u32,
        criticality: Criticality,
    ) -> Result<ShedTicket, ShedReason> {
        let mut exact = lock(&self.exact);
        // A decision at or past the newest bucket's end reads that bucket: its passes first.
        if now >= self.mirror.until.load(Relaxed) {
            self.hand_over(&mut exact);
        }
        let flight = &*self.flight;
        let flying = flight.flying.load(Relaxed);
        let average = f64::from_bits(flight.average.load(Relaxed));
        let decision =
            exact.check_flight_as(Duration::from_nanos(now), cpu, flying, average, criticality);
        self.mirror.gate.store(gate(&exact), Relaxed);
        if decision.is_err() {
            self.refused(&exact, criticality);
        }
        // Counted under the lock, so that the next locked decision sees it.
        decision.map(|start| {
            flight.flying.fetch_add(1, Relaxed);
            ShedTicket::new(nanos(start), &self.mirror.owner)
        })
    }

    /// The call behind `ticket` succeeded at `now`: it leaves flight, and its response time
    /// counts towards what the server has shown it can do, as [`Shedder::pass`].
    ///
    /// Within the window's newest bucket this takes no lock; the first pass past its end
    /// takes it once, to hand the bucket's passes to the exact shedder. `None`; another
    /// shedder's ticket comes back as `Some`, changing nothing.
    #[inline]
    pub fn pass(&self, ticket: ShedTicket, now: Duration) -> Option<ShedTicket> {
        if !self.mirror.owner.owns(ticket.shedder()) {
            return Some(ticket);
        }
        let now = self.advance(nanos(now));
        self.settle();
        let taken = now.saturating_sub(ticket.start_nanos());
        if !(now < self.mirror.until.load(Relaxed) && self.gather(taken)) {
            self.record(now, taken);
        }
        None
    }

    /// The locked half of [`pass`](Self::pass): the newest bucket's passes to the exact
    /// shedder, then this one, which moves its window on.
    #[inline(never)]
    fn record(&self, now: u64, taken: u64) {
        let mut exact = lock(&self.exact);
        self.hand_over(&mut exact);
        let pass = Total {
            sum: taken,
            count: 1,
        };
        let end = exact.record(Duration::from_nanos(now), pass);
        self.mirror.until.store(nanos(end), Relaxed);
    }

    /// The call behind `ticket` failed: it leaves flight but says nothing about capacity, as
    /// [`Shedder::fail`]. Takes no lock. `None`; another shedder's ticket comes back as
    /// `Some`, changing nothing.
    #[inline]
    pub fn fail(&self, ticket: ShedTicket) -> Option<ShedTicket> {
        if !self.mirror.owner.owns(ticket.shedder()) {
            return Some(ticket);
        }
        self.settle();
        None
    }

    /// Tickets [`pass`](Self::pass) and [`fail`](Self::fail) handed back because another
    /// shedder made them: above 0 is a caller's bug.
    #[must_use]
    pub fn foreign(&self) -> u64 {
        self.mirror.owner.foreign()
    }

    /// How many calls are in flight: let through and not yet settled.
    #[must_use]
    #[inline]
    pub fn flying(&self) -> u64 {
        self.flight.flying.load(Relaxed)
    }

    /// The moving average of calls in flight, updated as each call leaves flight.
    #[must_use]
    pub fn average(&self) -> f64 {
        f64::from_bits(self.flight.average.load(Relaxed))
    }

    /// The passes in the window at `now` and their summed response times, the bucket `now`
    /// falls in included, as [`Shedder::passes`]; takes the lock, to hand the stripes over
    /// first.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward::{SHED, Total};
    /// use ironward_tokio::SharedShedder;
    ///
    /// let ms = Duration::from_millis;
    /// let shedder = SharedShedder::new(SHED, ms(0));
    /// let ticket = shedder.allow(ms(0), 0).expect("idle");
    /// shedder.pass(ticket, ms(20));
    /// assert_eq!(shedder.passes(ms(20)), Total { sum: 20_000_000, count: 1 });
    /// ```
    #[must_use]
    pub fn passes(&self, now: Duration) -> Total {
        let mut exact = lock(&self.exact);
        self.hand_over(&mut exact);
        exact.passes(Duration::from_nanos(self.latest().max(nanos(now))))
    }

    /// Changes the policy in place, keeping the calls in flight and what the shedder has
    /// learnt, as [`Shedder::retune`], and returns the policy it replaced.
    ///
    /// Takes the lock, with the stripes handed over first; a call deciding at the same time
    /// is decided wholly under the old policy or wholly under the new one.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward::{SHED, Shed};
    /// use ironward_tokio::SharedShedder;
    ///
    /// let ms = Duration::from_millis;
    /// let shedder = SharedShedder::new(SHED, ms(0));
    /// let ticket = shedder.allow(ms(0), 500).expect("cool");
    /// let was = shedder.retune(Shed { cpu: 400, ..SHED }, ms(10));
    /// assert_eq!((was.cpu, shedder.shed().cpu), (900, 400));
    /// assert_eq!(shedder.flying(), 1);
    /// shedder.pass(ticket, ms(20));
    /// ```
    pub fn retune(&self, shed: Shed, now: Duration) -> Shed {
        let mut exact = lock(&self.exact);
        self.hand_over(&mut exact);
        let was = *exact.shed();
        // `Shedder::retune` reads `now` only when its windows change, as the latest seen if
        // earlier: the latest the atomic clock has seen, which the exact one may lag.
        let now = nanos(now).max(self.latest());
        exact.retune(shed, Duration::from_nanos(now));
        self.flight.latest.fetch_max(nanos(exact.latest()), Relaxed);
        let mirror = &*self.mirror;
        mirror.beta.store(exact.beta().to_bits(), Relaxed);
        mirror.until.store(nanos(exact.bucket_end()), Relaxed);
        mirror.gate.store(gate(&exact), Relaxed);
        // The core's floor reads the cooling time in force: so does the mirror's.
        let cool = nanos(shed.cool);
        for (floor, above) in mirror.floors.iter().zip(&self.above) {
            floor.store(floor_until(above.load(Relaxed), cool), Relaxed);
        }
        was
    }

    /// Remembers, under the lock, a refusal of class `criticality` at the exact shedder's
    /// clock: every class below it may be held below the floor for the cooling time.
    ///
    /// Every refusal is remembered, as the core's floor remembers every refusal (one by the
    /// floor as one of its own class), at one nanosecond past the core's reading: the mirror
    /// holds a class below the floor no shorter than the core does, so the fast path never admits a call the core would
    /// refuse; a call held back too long is decided by the core under the lock.
    fn refused(&self, exact: &Shedder, criticality: Criticality) {
        let at = nanos(exact.latest()).saturating_add(1);
        let cool = nanos(exact.shed().cool);
        let below = &self.above[..criticality.rank()];
        for (floor, above) in self.mirror.floors.iter().zip(below) {
            let latest = above.load(Relaxed).max(at);
            above.store(latest, Relaxed);
            floor.store(floor_until(latest, cool), Relaxed);
        }
    }

    /// The policy this shedder runs, as it was given.
    #[must_use]
    pub fn shed(&self) -> Shed {
        *lock(&self.exact).shed()
    }

    /// The latest clock reading seen, in nanoseconds.
    fn latest(&self) -> u64 {
        self.flight.latest.load(Relaxed)
    }

    /// Moves the clock to `now` unless it has seen later, and returns the time to use: one
    /// load when it has, as a clock read twice in the same nanosecond or stepped back is, and
    /// a store when it has not.
    ///
    /// A store, not a read-modify-write: a clock that moves on is what every call finds, and
    /// a `fetch_max` would lock the line twice a request for the one case (two overlapping
    /// calls both moving it) where a store can leave the earlier of two readings; the type's
    /// docs bound what that changes.
    #[inline]
    fn advance(&self, now: u64) -> u64 {
        let latest = &self.flight.latest;
        let seen = latest.load(Relaxed);
        if now <= seen {
            return seen;
        }
        latest.store(now, Relaxed);
        now
    }

    /// One call leaves flight; the moving average takes the count it left, by
    /// [`Shedder::land`].
    #[inline]
    fn settle(&self) {
        let flight = &*self.flight;
        // Never below zero, as `Shedder` saturates: nothing written then, and the average
        // takes a count of 0.
        let left = flight
            .flying
            .fetch_update(Relaxed, Relaxed, |flying| flying.checked_sub(1))
            .map_or(0, |was| was - 1);
        let beta = f64::from_bits(self.mirror.beta.load(Relaxed));
        let _ = flight.average.fetch_update(Relaxed, Relaxed, |average| {
            Some(Shedder::land(f64::from_bits(average), left, beta).to_bits())
        });
    }

    /// Adds one pass of `taken` nanoseconds to this thread's stripe; `false` when the stripe
    /// cannot hold it (a sum past [`SUM_MAX`] or a count past [`COUNT_MAX`]), for the caller
    /// to record it under the lock instead.
    #[inline]
    fn gather(&self, taken: u64) -> bool {
        let stripe = self.stripes.mine();
        stripe
            .fetch_update(Relaxed, Relaxed, |word| {
                let (count, sum) = (word >> SUM_BITS, word & SUM_MAX);
                (count < COUNT_MAX && taken <= SUM_MAX - sum)
                    .then(|| word + (1 << SUM_BITS) + taken)
            })
            .is_ok()
    }

    /// Empties the stripes into the exact shedder's newest bucket, under its lock.
    ///
    /// They are recorded at the exact shedder's own latest reading, which lies in that
    /// bucket unless a decision has since read past it; a pass gathered after that decision
    /// then goes to the bucket the exact shedder is in, as a pass at an earlier reading would.
    fn hand_over(&self, exact: &mut Shedder) {
        let mut total = Total::default();
        for stripe in self.stripes.iter() {
            // A load first, so that an empty stripe is not written to.
            if stripe.load(Relaxed) != 0 {
                let word = stripe.swap(0, Relaxed);
                total.sum = total.sum.saturating_add(word & SUM_MAX);
                total.count += word >> SUM_BITS;
            }
        }
        if total.count > 0 {
            let end = exact.record(exact.latest(), total);
            self.mirror.until.store(nanos(end), Relaxed);
        }
    }
}

/// Until when a class whose latest refusal above it was at `at` (plus one; 0 for none) may be
/// held below the floor with a cooling time of `cool`, both in nanoseconds: 0 for none, and
/// `u64::MAX` when the sum does not fit, which the fast path never passes.
fn floor_until(at: u64, cool: u64) -> u64 {
    if at == 0 { 0 } else { at.saturating_add(cool) }
}

/// The mirror word of `exact`: its CPU threshold, and whether it has refused since it last
/// cooled.
fn gate(exact: &Shedder) -> u64 {
    u64::from(exact.shed().cpu) << 1 | u64::from(exact.is_shedding())
}

/// The count and the average as the atomic words hold them, and the policy if the lock is
/// free (as `Mutex`'s own `Debug` shows its value), so that formatting never waits.
impl fmt::Debug for SharedShedder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedShedder")
            .field("flying", &self.flying())
            .field("average", &self.average())
            .field("exact", &self.exact)
            .finish()
    }
}

#[cfg(test)]
mod tests;
