//! Adaptive load shedding: refuse work only while the server is both hot and full.

use core::time::Duration;

use crate::clock::{Latest, nanos};
use crate::criticality::{Criticality, Floor, SHARES, Shares};
use crate::internal::constant::constant;
use crate::internal::extremes::Extremes;
use crate::internal::owner::{Mark, Owner};
use crate::window::{Total, Window, grid};

pub use reason::ShedReason;

/// The constants of adaptive load shedding, after go-zero's `core/load/adaptiveshedder.go`.
///
/// A policy is changed the Rust way: `Shed { cpu: 800, ..Shed::default() }`.
///
/// `beta` and `floor` are fractions: a value outside `[0, 1]` (an infinity included) is read
/// as the nearer end, and NaN as 1, the value that sheds least. A `beta` of 1 keeps the
/// moving average of calls in flight at 0, so a NaN `beta` never sheds; a `floor` of 1 keeps
/// the whole capacity however hot the CPU runs. (The guide's
/// [edge cases](crate::_guide::edge_cases) state this rule for every policy constant.)
///
/// # Default
///
/// [`SHED`], go-zero's constants:
///
/// | field | value | meaning |
/// | --- | --- | --- |
/// | `size` | 50 | buckets in each window |
/// | `window` | 5 s | the history of passes and response times |
/// | `cpu` | 900 ‰ | the CPU reading at or over which the server is overloaded |
/// | `latency` | 1 s | the response time assumed before any call has finished |
/// | `beta` | 0.9 | the weight of the past in the moving average of calls in flight |
/// | `cool` | 1 s | how long the server stays hot after an overload, once it has refused |
/// | `floor` | 0.1 | the least fraction of capacity kept however hot the CPU runs |
/// | `shares` | [`SHARES`] | the share of the capacity each criticality may fill (not go-zero's: its shedder has no classes) |
///
/// # Examples
///
/// ```
/// use ironward::{Shed, SHED};
///
/// let eager = Shed { cpu: 800, ..Shed::default() };
/// assert_eq!(eager.size, SHED.size);
/// assert_eq!(Shed::default(), SHED);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default, deny_unknown_fields)
)]
pub struct Shed {
    /// Buckets in the window: 1 to 65 536, a size outside that read as the nearest end (see
    /// [`Window`]).
    pub size: usize,
    /// The span of history the window covers.
    #[cfg_attr(feature = "serde", serde(with = "crate::internal::humane"))]
    pub window: Duration,
    /// CPU use, in thousandths, at or over which the server is overloaded.
    pub cpu: u32,
    /// The response time assumed while no bucket has one, and the most one can count as.
    #[cfg_attr(feature = "serde", serde(with = "crate::internal::humane"))]
    pub latency: Duration,
    /// The weight of the previous average in the moving average of calls in flight: 0 to 1
    /// (NaN is 1, which keeps the average at 0 and never sheds).
    pub beta: f64,
    /// How long after the last overload a server that has refused stays hot.
    #[cfg_attr(feature = "serde", serde(with = "crate::internal::humane"))]
    pub cool: Duration,
    /// The least fraction of capacity kept, however close to 100% the CPU runs: 0 to 1 (NaN
    /// is 1, which keeps the whole capacity).
    pub floor: f64,
    /// The share of the capacity each [`Criticality`] may fill while the server is hot; see
    /// [`Shedder::check_as`].
    pub shares: Shares,
}

/// The go-zero preset: 50 buckets over 5 s, overloaded at 900 ‰ CPU, 1 s assumed response
/// time, moving-average weight 0.9, 1 s to cool, never under 0.1 of capacity.
pub const SHED: Shed = Shed {
    size: 50,
    window: Duration::from_secs(5),
    cpu: 900,
    latency: Duration::from_secs(1),
    beta: 0.9,
    cool: Duration::from_secs(1),
    floor: 0.1,
    shares: SHARES,
};

impl Default for Shed {
    fn default() -> Self {
        SHED
    }
}

/// Load shedding that refuses work only when the server is both hot and full.
///
/// - Hot: the CPU reading is at or over the threshold, or was within the cooling time and
///   the shedder has refused since.
/// - Full: both the moving average and the current count of calls in flight exceed what the
///   server has shown it can carry: the busiest bucket's passes times the fastest bucket's
///   mean response time, over the bucket width, scaled down as the CPU nears 100% but never
///   under `floor`.
///
/// A CPU spike with nothing queued refuses nothing, and neither does a queue on an idle CPU.
/// The windows are read without the bucket `now` falls in, which has seen only part of its
/// time. This is go-zero's `core/load/adaptiveshedder.go` with the clock and the CPU reading
/// passed in; the CPU is in thousandths (a reading over 1000 is read as 1000).
///
/// A decision costs O(1), amortised, whatever the window's size: the busiest and the fastest
/// bucket are kept as buckets complete (a sliding maximum and minimum), where go-zero scans
/// every bucket on each refusal-prone call. Memory is the window's buckets plus two queues
/// of at most `size` entries, allocated here and never again.
///
/// Differs from go-zero: response times are kept in nanoseconds, where go-zero rounds them up
/// to whole milliseconds and rounds each bucket's mean, so a sub-millisecond service is
/// measured as it is. One window holds both the passes and their response times (go-zero
/// keeps two with the same buckets).
///
/// Time is the caller's: a `now` earlier than one already seen is read as the latest seen.
/// `Clone` copies the whole state; the copies then evolve independently, each settling only
/// the tickets it hands out. A ticket of another shedder changes nothing here: `pass` and
/// `fail` hand it back and count it ([`foreign`](Shedder::foreign)).
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::{Shed, Shedder};
///
/// let ms = Duration::from_millis;
/// let mut shedder = Shedder::new(Shed::default(), ms(0));
/// // A hot CPU alone refuses nothing: nothing is queued yet.
/// let ticket = shedder.allow(ms(0), 990).expect("not full");
/// assert_eq!(shedder.flying(), 1);
/// shedder.pass(ticket, ms(30));
/// assert_eq!(shedder.flying(), 0);
/// ```
#[derive(Debug, Clone)]
pub struct Shedder {
    shed: Shed,
    /// `shed.beta` and `shed.floor` as the shedder reads them: in `[0, 1]`.
    beta: f64,
    floor: f64,
    /// Per bucket: the response times of the calls that passed, and how many did.
    window: Window<Total>,
    /// The busiest and the fastest complete buckets of `window`, kept as buckets complete.
    extremes: Extremes,
    flying: u64,
    average: f64,
    /// The last time the CPU was seen at or over the threshold.
    hot: Option<u64>,
    /// Whether the shedder has refused since it last cooled.
    dropped: bool,
    /// When each criticality was last refused, and `shed.shares` as read ([`Shares::of`]),
    /// worked out once per policy.
    classes: Floor,
    shares: [f64; 4],
    clock: Latest,
    owner: Owner,
    /// Tickets of other shedders `pass` and `fail` handed back.
    foreign: u64,
}

/// A call the [`Shedder`] let through, remembering when it started.
///
/// Exactly one of [`Shedder::pass`] and [`Shedder::fail`] of the shedder that made it settles
/// it, which consumes it; another shedder's hands it back. Not `Clone`, so a call cannot leave
/// flight twice. Dropping a ticket unsettled leaves the call counted as in flight.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::{SHED, Shedder};
///
/// let mut shedder = Shedder::new(SHED, Duration::ZERO);
/// let ticket = shedder.allow(Duration::from_millis(5), 300).expect("a cool server");
/// assert_eq!(ticket.start(), Duration::from_millis(5));
/// // The call took 20 ms: its response time counts towards the server's capacity.
/// shedder.pass(ticket, Duration::from_millis(25));
/// assert_eq!(shedder.flying(), 0);
/// ```
#[must_use = "settle the ticket with Shedder::pass or Shedder::fail once the call has finished"]
#[derive(Debug)]
pub struct Ticket {
    start: u64,
    shedder: Mark,
}

impl Ticket {
    /// When the call was let through, on the caller's clock.
    #[must_use]
    pub fn start(&self) -> Duration {
        Duration::from_nanos(self.start)
    }
}

impl Shedder {
    /// A shedder with an empty window opening at `now`, nothing in flight and a cool CPU.
    pub fn new(shed: Shed, now: Duration) -> Self {
        let window = Window::new(shed.size, shed.window, now);
        Self {
            shed,
            beta: constant(shed.beta, 0.0, 1.0, 1.0),
            floor: constant(shed.floor, 0.0, 1.0, 1.0),
            extremes: Extremes::new(window.size(), window.width_nanos()),
            window,
            flying: 0,
            average: 0.0,
            hot: None,
            dropped: false,
            classes: Floor::default(),
            shares: shed.shares.read(),
            clock: Latest::new(now),
            owner: Owner::default(),
            foreign: 0,
        }
    }

    /// Asks to start one call at `now`, with the CPU at `cpu` thousandths; `Some` means go
    /// ahead, `None` that the server is overloaded.
    ///
    /// The caller settles the ticket with [`pass`](Shedder::pass) or
    /// [`fail`](Shedder::fail) once the call has finished. The moving average is not updated
    /// here, only when a call leaves flight, so it lags the count in flight as go-zero's does.
    ///
    /// This is [`check`](Shedder::check) without the reason for a refusal.
    #[must_use = "dropping the answer loses the Ticket: the call stays counted in flight forever, and a refusal is ignored"]
    pub fn allow(&mut self, now: Duration, cpu: u32) -> Option<Ticket> {
        self.check(now, cpu).ok()
    }

    /// [`allow`](Shedder::allow) with the numbers behind a refusal: `allow` is this with the
    /// reason discarded, so the two always decide alike.
    ///
    /// `Err` is a refusal, an answer rather than a failure. It carries the CPU reading as
    /// read, the calls in flight and their moving average, the capacity both exceeded, and
    /// which heat made the shedder weigh them: a reading at or over [`Shed::cpu`], or a
    /// refusal within [`Shed::cool`] of the last overload. The decision computed each of them
    /// anyway (see [`ShedReason`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::{SHED, Shedder};
    ///
    /// let ms = Duration::from_millis;
    /// let mut shedder = Shedder::new(SHED, ms(0));
    /// let mut tickets: Vec<_> = (0..100).map(|_| shedder.check(ms(0), 950).unwrap()).collect();
    /// for ticket in tickets.drain(..50) {
    ///     shedder.pass(ticket, ms(50));
    /// }
    /// // No bucket has ended, so the preset's 1 s latency and one pass a bucket stand:
    /// // 10 calls at once, halved at 950 ‰.
    /// let reason = shedder.check(ms(60), 950).expect_err("hot and full");
    /// assert_eq!((reason.cpu, reason.flying, reason.capacity), (950, 50, 5.0));
    /// assert!(reason.overloaded && reason.average > reason.capacity);
    /// ```
    #[inline]
    #[must_use = "dropping the answer loses the Ticket: the call stays counted in flight forever, and a refusal is ignored"]
    pub fn check(&mut self, now: Duration, cpu: u32) -> Result<Ticket, ShedReason> {
        self.check_as(now, cpu, Criticality::Critical)
    }

    /// [`check`](Shedder::check) for a call of class `criticality`: under overload the less
    /// critical classes are refused first.
    ///
    /// Two rules, shared with the [`Limiter`](crate::Limiter) (see [`Criticality`]):
    ///
    /// - while hot, a call is refused when the average and the count in flight both exceed
    ///   its class's share of the capacity ([`Shares::of`] of [`Shed::shares`]), so that the
    ///   sheddable meet a full server first;
    /// - for [`Shed::cool`] after a call of one class is so refused, every less critical
    ///   class is refused outright, so that the room calls leaving flight free goes to the
    ///   more critical.
    ///
    /// [`Criticality::Critical`] has the whole capacity by default: `check` is this with
    /// that class, and decides as go-zero's shedder, which has no classes.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::{Criticality, SHED, Shedder};
    ///
    /// let ms = Duration::from_millis;
    /// let mut shedder = Shedder::new(SHED, ms(0));
    /// let mut tickets: Vec<_> = (0..100).map(|_| shedder.check(ms(0), 950).unwrap()).collect();
    /// for ticket in tickets.drain(..96) {
    ///     shedder.pass(ticket, ms(50));
    /// }
    /// // Hot, with 4 in flight against the assumed capacity of 5: room for the critical, but
    /// // not for the sheddable, whose share is half of it.
    /// let reason = shedder.check_as(ms(60), 950, Criticality::Sheddable).unwrap_err();
    /// assert_eq!((reason.flying, reason.capacity), (4, 2.5));
    /// let critical = shedder.check_as(ms(60), 950, Criticality::Critical).expect("room");
    /// # drop((tickets, critical));
    /// ```
    #[inline]
    #[must_use = "dropping the answer loses the Ticket: the call stays counted in flight forever, and a refusal is ignored"]
    pub fn check_as(
        &mut self,
        now: Duration,
        cpu: u32,
        criticality: Criticality,
    ) -> Result<Ticket, ShedReason> {
        let start = self.decide(now, cpu, self.flying, self.average, criticality)?;
        self.flying = self.flying.saturating_add(1);
        let shedder = self.owner.mark();
        Ok(Ticket { start, shedder })
    }

    /// The decision of [`check_as`](Shedder::check_as) with `flying` calls in flight and a
    /// moving average of `average`, leaving the count in flight to the caller: the start of
    /// an admitted call, on the shedder's clock, or the reason for a refusal.
    #[inline]
    fn decide(
        &mut self,
        now: Duration,
        cpu: u32,
        flying: u64,
        average: f64,
        criticality: Criticality,
    ) -> Result<u64, ShedReason> {
        let now = self.clock.advance(now);
        let cpu = cpu.min(1000);
        let overloaded = cpu >= self.shed.cpu;
        if overloaded {
            self.hot = Some(now);
        }
        let cool = nanos(self.shed.cool);
        let floored = self.classes.holds_out(criticality, now, cool);
        let hot = overloaded || self.still_hot(now);
        if hot || floored {
            let capacity = self.capacity(now, cpu) * self.shares[criticality.rank()];
            // Full: both the average and the count in flight exceed the class's capacity.
            let full = hot && average > capacity && flying as f64 > capacity;
            if full || floored {
                let floor = self.classes.at(now, cool);
                self.dropped |= full;
                self.classes.refuse(criticality, now);
                return Err(ShedReason {
                    cpu,
                    flying,
                    average,
                    capacity,
                    overloaded,
                    // Asked only under the threshold: that heat is the earlier refusal's.
                    cooling: hot && !overloaded,
                    criticality,
                    floor,
                });
            }
        }
        Ok(now)
    }

    /// The call behind `ticket` succeeded at `now`: it leaves flight, and its response time
    /// counts towards what the server has shown it can do; `None`. A ticket another shedder
    /// made changes nothing here (not even the clock) and comes back as `Some`.
    pub fn pass(&mut self, ticket: Ticket, now: Duration) -> Option<Ticket> {
        if !self.mine(&ticket) {
            return Some(ticket);
        }
        let now = self.clock.advance(now);
        self.settle();
        self.roll(now);
        self.window
            .slot_at(now)
            .add(now.saturating_sub(ticket.start));
        None
    }

    /// The call behind `ticket` failed: it leaves flight but says nothing about capacity;
    /// `None`. A ticket another shedder made changes nothing and comes back as `Some`.
    pub fn fail(&mut self, ticket: Ticket) -> Option<Ticket> {
        if !self.mine(&ticket) {
            return Some(ticket);
        }
        self.settle();
        None
    }

    /// Tickets [`pass`](Shedder::pass) and [`fail`](Shedder::fail) handed back because
    /// another shedder made them, saturating: above 0 is a caller's bug.
    #[must_use]
    pub fn foreign(&self) -> u64 {
        self.foreign
    }

    /// How many calls are in flight: let through and not yet settled.
    #[must_use]
    pub fn flying(&self) -> u64 {
        self.flying
    }

    /// The moving average of calls in flight, updated as each call leaves flight.
    #[must_use]
    pub fn average(&self) -> f64 {
        self.average
    }

    /// Changes the policy in place, keeping the calls in flight and what the shedder has
    /// learnt.
    ///
    /// The count in flight, its moving average, and when the CPU was last hot and whether the
    /// shedder has refused since are all kept; the new `cpu`, `latency`, `beta`, `cool` and
    /// `floor` apply from the next call (a new `cool` to the time already spent cooling).
    /// The windows of passes and response times are kept as far as their buckets allow:
    ///
    /// - the same bucket count and width (as [`Window::new`] reads `size` and `window`): kept
    ///   exactly as they are, and `now` is not read;
    /// - the same width, another count: the buckets stay on their grid and the newest of them
    ///   are kept, as many as the new count (a larger count adds empty buckets older than
    ///   them: nothing that had left the window comes back);
    /// - another width: the windows start empty at `now`. A bucket counts the passes of one
    ///   width, and the fullest bucket is the shedder's measure of its capacity; cut into
    ///   narrower buckets or merged into wider ones it would measure traffic nobody saw.
    ///   Until the first new bucket ends, the shedder assumes `latency` and one pass a
    ///   bucket, as a new shedder does.
    ///
    /// When the windows change, a `now` earlier than one already seen is read as the latest
    /// seen, which the shedder then remembers.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::{Shed, SHED, Shedder};
    ///
    /// let ms = Duration::from_millis;
    /// let mut shedder = Shedder::new(SHED, ms(0));
    /// let first = shedder.allow(ms(0), 500).expect("idle");
    /// let second = shedder.allow(ms(0), 500).expect("idle");
    /// shedder.pass(first, ms(20));
    /// let average = shedder.average();
    ///
    /// // Overloaded from 400 ‰ on, over a window twice as long: the call in flight stays.
    /// let strict = Shed { cpu: 400, window: Duration::from_secs(10), ..SHED };
    /// shedder.retune(strict, ms(30));
    /// assert_eq!((shedder.flying(), shedder.average()), (1, average));
    /// assert_eq!(shedder.shed().cpu, 400);
    /// shedder.pass(second, ms(40));
    /// assert_eq!(shedder.flying(), 0);
    /// ```
    pub fn retune(&mut self, shed: Shed, now: Duration) {
        if !self.window.fits(shed.size, shed.window) {
            let now = self.clock.advance(now);
            let (_, width) = grid(shed.size, shed.window);
            if width == self.window.width_nanos() {
                self.window.resize(shed.size, now);
                self.extremes = taken_in(&self.window);
            } else {
                self.window = Window::new(shed.size, shed.window, Duration::from_nanos(now));
                self.extremes = Extremes::new(self.window.size(), width);
            }
        }
        self.shed = shed;
        self.shares = shed.shares.read();
        self.beta = constant(shed.beta, 0.0, 1.0, 1.0);
        self.floor = constant(shed.floor, 0.0, 1.0, 1.0);
    }

    /// The policy this shedder runs, as it was given.
    #[must_use]
    pub fn shed(&self) -> &Shed {
        &self.shed
    }

    /// One call leaves flight; the moving average takes the new count.
    /// Whether this shedder made `ticket`; counts it if not.
    #[inline]
    fn mine(&mut self, ticket: &Ticket) -> bool {
        let mine = self.owner.owns(ticket.shedder);
        if !mine {
            self.foreign = self.foreign.saturating_add(1);
        }
        mine
    }

    fn settle(&mut self) {
        self.flying = self.flying.saturating_sub(1);
        self.average = Self::land(self.average, self.flying, self.beta);
    }

    /// Whether the server refused recently enough to stay hot; clears the refusal once the
    /// cooling time has passed.
    fn still_hot(&mut self, now: u64) -> bool {
        if !self.dropped {
            return false;
        }
        let Some(hot) = self.hot else {
            return false;
        };
        if now.saturating_sub(hot) < nanos(self.shed.cool) {
            return true;
        }
        self.dropped = false;
        false
    }

    /// Brings the kept extremes to `now`, taking in the newest bucket if it has ended. Called
    /// before each write, so that no bucket is cleared before it has been taken in.
    fn roll(&mut self, now: u64) {
        let (start, newest) = self.window.newest();
        self.extremes.advance(now, start, newest);
    }

    /// How many calls the server has shown it can carry at once, scaled for the CPU.
    ///
    /// The busiest and the fastest bucket are read from the kept extremes, O(1) whatever the
    /// window's size; debug builds check them against a scan of the window.
    fn capacity(&mut self, now: u64, cpu: u32) -> f64 {
        self.roll(now);
        let latency = nanos(self.shed.latency) as f64;
        let max_pass = self.extremes.busiest().unwrap_or(1).max(1);
        let min_rt = self
            .extremes
            .fastest()
            .map_or(latency, |mean| mean.min(latency));
        #[cfg(debug_assertions)]
        assert_eq!(
            (max_pass, min_rt),
            self.scan(now),
            "the kept extremes match a scan"
        );
        let width = self.window.width_nanos() as f64;
        let max_flight = (max_pass as f64 * min_rt / width).max(1.0);
        max_flight * self.factor(cpu)
    }

    /// The busiest bucket's passes (at least 1) and the fastest bucket's mean response time
    /// (at most the assumed latency) by a scan of the complete buckets, as go-zero reads them.
    #[cfg(any(test, debug_assertions))]
    fn scan(&self, now: u64) -> (u64, f64) {
        let mut max_pass = 1;
        let mut min_rt = nanos(self.shed.latency) as f64;
        self.window.visit(now, false, |bucket| {
            max_pass = max_pass.max(bucket.count);
            if let Some(mean) = bucket.mean() {
                min_rt = min_rt.min(mean);
            }
        });
        (max_pass, min_rt)
    }

    /// go-zero's overload factor: 1 at the threshold and below, falling to `floor` as the CPU
    /// reaches 1000 ‰. A threshold of 1000 ‰ or more leaves it at 1 rather than dividing by
    /// zero.
    fn factor(&self, cpu: u32) -> f64 {
        let threshold = self.shed.cpu;
        if threshold >= 1000 {
            return 1.0;
        }
        let factor = f64::from(1000 - cpu) / f64::from(1000 - threshold);
        factor.max(self.floor).min(1.0)
    }
}

/// The extremes of `window`'s complete buckets, taken in oldest first as if each had been
/// taken in when it ended. The newest bucket is left for [`Shedder::roll`] to take in once it
/// ends, as it would be without a retune.
fn taken_in(window: &Window<Total>) -> Extremes {
    let mut extremes = Extremes::new(window.size(), window.width_nanos());
    let (newest, _) = window.newest();
    let width = window.width_nanos();
    let mut back = window.size();
    // Read at the newest bucket's start, every bucket of the window is visited.
    window.visit(newest, true, |bucket| {
        back -= 1;
        // A bucket that would start before the clock's zero was never written: only the
        // buckets holding passes need taking in, and each started at a reading.
        let start = (back as u64)
            .checked_mul(width)
            .and_then(|span| newest.checked_sub(span));
        if let Some(start) = start.filter(|_| back > 0 && bucket.count > 0) {
            extremes.advance(start + width, start, bucket);
        }
    });
    extremes
}

mod flight;
mod reason;
#[cfg(test)]
mod tests;
