//! What a shedder shared between threads needs to decide and record without the shedder's
//! lock: a decision on a count in flight kept outside it, passes recorded in bulk, and the
//! state a fast path mirrors.

use core::time::Duration;

#[cfg(doc)]
use super::Shed;
use super::Shedder;
use crate::criticality::Criticality;
use crate::shedder::ShedReason;
use crate::window::Total;

impl Shedder {
    /// [`check`](Shedder::check) for a shared form that keeps the count in flight and its
    /// moving average outside the shedder (in atomics, say): decides with `flying` and
    /// `average` in place of the shedder's own, and returns the start of an admitted call on
    /// the shedder's clock, which it has not counted in flight.
    ///
    /// Everything else is as `check`: the clock, the heat and the refusal it remembers, the
    /// window read. A shared form decides a call exactly as `check` would by passing the
    /// count and the average `check` would have read (see [`land`](Shedder::land) for the
    /// rule the average follows).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::{SHED, Shedder};
    ///
    /// let ms = Duration::from_millis;
    /// let mut shedder = Shedder::new(SHED, ms(0));
    /// // Hot, and 20 calls in flight against an assumed capacity of 5: refused.
    /// let reason = shedder.check_flight(ms(10), 950, 20, 20.0).expect_err("hot and full");
    /// assert_eq!(reason.flying, 20);
    /// // A cool reading after the cooling time admits, and counts nothing itself.
    /// assert_eq!(shedder.check_flight(ms(1010), 0, 20, 20.0), Ok(ms(1010)));
    /// assert_eq!(shedder.flying(), 0);
    /// ```
    #[inline]
    pub fn check_flight(
        &mut self,
        now: Duration,
        cpu: u32,
        flying: u64,
        average: f64,
    ) -> Result<Duration, ShedReason> {
        self.check_flight_as(now, cpu, flying, average, Criticality::Critical)
    }

    /// [`check_flight`](Shedder::check_flight) for a call of class `criticality`, deciding
    /// as [`check_as`](Shedder::check_as) does.
    #[inline]
    pub fn check_flight_as(
        &mut self,
        now: Duration,
        cpu: u32,
        flying: u64,
        average: f64,
        criticality: Criticality,
    ) -> Result<Duration, ShedReason> {
        self.decide(now, cpu, flying, average, criticality)
            .map(Duration::from_nanos)
    }

    /// The window's half of [`pass`](Shedder::pass) for `passes.count` calls that passed at
    /// `now` with `passes.sum` nanoseconds of response time between them, leaving the count
    /// in flight alone; returns the end of the bucket they went to (see
    /// [`bucket_end`](Shedder::bucket_end)).
    ///
    /// A shared form gathers the passes of one bucket outside the shedder and hands them
    /// over together before anything reads that bucket: the window then holds what as many
    /// `pass` calls at times within the bucket would have left, since a bucket keeps only
    /// the sum and the count, both saturating. The clock reads `now` as `pass` does.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::{SHED, Shedder, Total};
    ///
    /// let ms = Duration::from_millis;
    /// let mut shedder = Shedder::new(SHED, ms(0));
    /// let end = shedder.record(ms(30), Total { sum: 60_000_000, count: 3 });
    /// assert_eq!(end, ms(100));
    /// assert_eq!(shedder.passes(ms(40)), Total { sum: 60_000_000, count: 3 });
    /// ```
    pub fn record(&mut self, now: Duration, passes: Total) -> Duration {
        let now = self.clock.advance(now);
        self.roll(now);
        let bucket = self.window.slot_at(now);
        bucket.sum = bucket.sum.saturating_add(passes.sum);
        bucket.count = bucket.count.saturating_add(passes.count);
        self.bucket_end()
    }

    /// When the newest bucket of the window ends: a pass at an earlier time (a `now` read as
    /// the latest seen included) goes to that bucket, and a later one moves the window on.
    /// Saturates at `Duration::from_nanos(u64::MAX)`.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::{SHED, Shedder};
    ///
    /// let shedder = Shedder::new(SHED, Duration::from_millis(250));
    /// // 50 buckets over 5 s: 100 ms each, the first opening at 250 ms.
    /// assert_eq!(shedder.bucket_end(), Duration::from_millis(350));
    /// ```
    #[must_use]
    pub fn bucket_end(&self) -> Duration {
        let (start, _) = self.window.newest();
        Duration::from_nanos(start.saturating_add(self.window.width_nanos()))
    }

    /// The passes in the window at `now` and their summed response times, the bucket `now`
    /// falls in included; changes nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::{SHED, Shedder, Total};
    ///
    /// let ms = Duration::from_millis;
    /// let mut shedder = Shedder::new(SHED, ms(0));
    /// let ticket = shedder.allow(ms(0), 0).expect("idle");
    /// shedder.pass(ticket, ms(20));
    /// assert_eq!(shedder.passes(ms(20)), Total { sum: 20_000_000, count: 1 });
    /// // Five seconds on, the pass has left the window.
    /// assert_eq!(shedder.passes(ms(5020)), Total::default());
    /// ```
    #[must_use]
    pub fn passes(&self, now: Duration) -> Total {
        let mut total = Total::default();
        self.window.visit(self.clock.read(now), true, |bucket| {
            total.sum = total.sum.saturating_add(bucket.sum);
            total.count = total.count.saturating_add(bucket.count);
        });
        total
    }

    /// The latest reading of the clock the shedder has seen: an earlier `now` is read as
    /// this.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::{SHED, Shedder};
    ///
    /// let mut shedder = Shedder::new(SHED, Duration::from_secs(3));
    /// let ticket = shedder.allow(Duration::from_secs(1), 0).expect("idle");
    /// assert_eq!((ticket.start(), shedder.latest()), (Duration::from_secs(3), Duration::from_secs(3)));
    /// shedder.fail(ticket);
    /// ```
    #[must_use]
    pub fn latest(&self) -> Duration {
        Duration::from_nanos(self.clock.get())
    }

    /// Whether the shedder has refused since it last cooled: while it has, a call under the
    /// CPU threshold is still weighed against the capacity until [`Shed::cool`] has passed
    /// since the CPU was last at or over it. A shared form that admits cool calls without
    /// asking the shedder may do so only while this is false.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::{SHED, Shedder};
    ///
    /// let ms = Duration::from_millis;
    /// let mut shedder = Shedder::new(SHED, ms(0));
    /// assert!(!shedder.is_shedding());
    /// assert!(shedder.check_flight(ms(0), 950, 20, 20.0).is_err());
    /// assert!(shedder.is_shedding());
    /// ```
    #[must_use]
    pub fn is_shedding(&self) -> bool {
        self.dropped
    }

    /// The weight of the past in the moving average, as the shedder reads [`Shed::beta`]:
    /// in `[0, 1]`, NaN read as 1.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::{SHED, Shed, Shedder};
    ///
    /// let nan = Shedder::new(Shed { beta: f64::NAN, ..SHED }, Duration::ZERO);
    /// assert_eq!(nan.beta(), 1.0);
    /// ```
    #[must_use]
    pub fn beta(&self) -> f64 {
        self.beta
    }

    /// The moving average of calls in flight once one has left with `flying` still in
    /// flight, from `average` before, with `beta` the weight of the past
    /// ([`beta`](Shedder::beta)): `average · beta + flying · (1 − beta)`. This is the rule
    /// [`pass`](Shedder::pass) and [`fail`](Shedder::fail) apply, given here so that a shared
    /// form applies the same one.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::Shedder;
    ///
    /// assert_eq!(Shedder::land(10.0, 0, 0.5), 5.0);
    /// ```
    #[inline]
    #[must_use]
    pub fn land(average: f64, flying: u64, beta: f64) -> f64 {
        average * beta + flying as f64 * (1.0 - beta)
    }
}
