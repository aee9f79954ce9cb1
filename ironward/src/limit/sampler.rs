//! One sample per window from the latencies of finished calls: Netflix's `WindowedLimit`,
//! which paces the algorithms (they count windows, not calls) and filters the noise of
//! single calls out of what they read.

use core::fmt;
use core::time::Duration;

use super::Sample;
use crate::clock::{Latest, nanos};
use crate::internal::rank::percentile;

/// Which latency of a window's calls its sample carries.
///
/// | variant | latency | Netflix |
/// | --- | --- | --- |
/// | `Average` | the mean, truncated to the nanosecond | `AverageSampleWindowFactory`, the default |
/// | `Percentile(p)` | the `⌊p × n⌉`-th fastest of the `n` kept, at least the first and at most the last | `PercentileSampleWindowFactory.of(p, ..)` |
///
/// A percentile reads the tail, which queueing reaches first; the mean reads every call. `p`
/// is held to `[0, 1]`, NaN as 0 (the fastest call, the reading that lowers a limit least).
///
/// # Examples
///
/// ```
/// use ironward::limit::{Latency, SAMPLING, Sampling};
///
/// let tail = Sampling { latency: Latency::Percentile(0.9), ..SAMPLING };
/// assert_eq!(SAMPLING.latency, Latency::Average);
/// assert_ne!(tail, SAMPLING);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Latency {
    /// The mean latency of the window's calls.
    Average,
    /// A percentile, as a fraction: `0.99` is the 99th.
    Percentile(f64),
}

/// How the latencies of finished calls become one sample per window.
///
/// Netflix concurrency-limits' `WindowedLimit`. A call's latency under `min_rtt` is ignored
/// altogether (a cache hit or an immediate refusal says nothing about the backend's queue).
/// Every other call joins the open window, and the call that finishes after the window's
/// end closes it, itself included. A closed window with at least `size` calls becomes a
/// [`Sample`]: its [`latency`](Sampling::latency), the most calls in flight when any of its
/// calls started, and whether any was dropped; one with fewer is discarded, unless
/// [`fill`](Sampling::fill) is set, when it stays open until it holds `size`. The next window
/// opens as the last closes and lasts twice the fastest latency of the closed one, held to
/// `min_window ..= max_window` (with the defaults, always 1 s).
///
/// A policy is changed the Rust way: `Sampling { size: 50, ..SAMPLING }`.
///
/// # Default
///
/// [`SAMPLING`], the defaults of Netflix concurrency-limits' `WindowedLimit.Builder`:
///
/// | field | value | meaning |
/// | --- | --- | --- |
/// | `size` | 10 | the fewest calls a window needs to count (`windowSize`) |
/// | `min_window` | 1 s | the shortest window (`minWindowTime`) |
/// | `max_window` | 1 s | the longest window (`maxWindowTime`) |
/// | `min_rtt` | 100 µs | latencies under this are ignored (`minRttThreshold`) |
/// | `latency` | `Average` | the window's latency is its mean (`AverageSampleWindowFactory`) |
/// | `fill` | `false` | a window short of `size` calls at its end is discarded (not in the reference) |
///
/// # Bad constants
///
/// Nothing panics. A `size` of 0 is read as 1. A zero `min_window` and `max_window` close a
/// window with every call that finishes later than the last closed one; a `min_window` over
/// `max_window` is read as `max_window`, as the reference's clamp does. A zero `min_rtt`
/// ignores nothing.
///
/// # Differences from the reference
///
/// - The first window opens at the `now` given to [`Sampler::new`] and lasts `min_window`
///   (held to `max_window`), where the reference's first window ends at its clock's zero
///   and so closes, too small to count, at the first call.
/// - A percentile keeps the first [`Sampler::CAPACITY`] latencies of a window, as the
///   reference keeps as many as its factory is told; the calls past it still count towards
///   `size`, the calls in flight, the drops and the next window's length, where the
///   reference ignores them altogether (a drop among them would go unseen).
/// - A percentile that rounds to none of the calls reads the fastest (the reference reads
///   before its array and throws), and `p` may be 0 or 1 (the reference's factory throws).
/// - The reference's builder refuses windows under 100 ms and sizes under 10; here any is
///   taken, for tests and simulations that compress time.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::limit::{Latency, SAMPLING, Sampling};
///
/// let tail = Sampling { latency: Latency::Percentile(0.99), size: 100, ..SAMPLING };
/// assert_eq!(tail.min_window, Duration::from_secs(1));
/// assert_eq!(Sampling::default(), SAMPLING);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default, deny_unknown_fields)
)]
pub struct Sampling {
    /// The fewest calls a window needs before its sample counts; 0 is read as 1.
    pub size: u32,
    /// The shortest a window lasts.
    #[cfg_attr(feature = "serde", serde(with = "crate::internal::humane"))]
    pub min_window: Duration,
    /// The longest a window lasts, which wins over `min_window`.
    #[cfg_attr(feature = "serde", serde(with = "crate::internal::humane"))]
    pub max_window: Duration,
    /// Latencies under this are ignored.
    #[cfg_attr(feature = "serde", serde(with = "crate::internal::humane"))]
    pub min_rtt: Duration,
    /// Which latency of the window the sample carries.
    pub latency: Latency,
    /// Whether a window that ends with fewer than `size` calls stays open until it holds
    /// `size`, rather than being discarded.
    ///
    /// At a low limit on a slow backend, a window may never hold `size` calls (a limit of 1
    /// on a 120 ms backend finishes 8 a second against the default 10): every window is
    /// discarded, no sample comes, and the limit never moves. Filled windows last longer
    /// instead, so the algorithm still hears from the backend, later. Off by default, which
    /// decides as the reference does.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "unset"))]
    pub fill: bool,
}

/// Whether a switch is off: left out of a written policy, so that one written before
/// [`Sampling::fill`] existed reads back the same.
#[cfg(feature = "serde")]
fn unset(on: &bool) -> bool {
    !*on
}

/// Netflix concurrency-limits' `WindowedLimit` defaults: windows of 1 s with at least 10
/// calls each, ignoring calls faster than 100 µs, averaged.
pub const SAMPLING: Sampling = Sampling {
    size: 10,
    min_window: Duration::from_secs(1),
    max_window: Duration::from_secs(1),
    min_rtt: Duration::from_micros(100),
    latency: Latency::Average,
    fill: false,
};

impl Default for Sampling {
    fn default() -> Self {
        SAMPLING
    }
}

impl Sampling {
    /// The length of the window after one whose fastest latency was `fastest` nanoseconds:
    /// `min(max(2 × fastest, min_window), max_window)`, `WindowedLimit`'s order.
    fn length(&self, fastest: u64) -> u64 {
        fastest
            .saturating_mul(2)
            .max(nanos(self.min_window))
            .min(nanos(self.max_window))
    }
}

/// The open sampling window: the calls that have finished in it, folded as they come.
///
/// [`add`](Sampler::add) costs O(1) and allocates nothing: the latencies a percentile needs
/// are kept in an array of [`Sampler::CAPACITY`] inside the sampler, and the window's
/// percentile is selected from them in linear time (`select_nth_unstable`) once, as the
/// window closes. The mean needs only a running sum, in 128 bits so that it cannot wrap.
///
/// Time is the caller's: a `now` earlier than one already seen is read as the latest seen,
/// so a clock that steps back never closes a window early or measures a negative span.
/// `Clone` copies the whole state; the copies then evolve independently.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::limit::{SAMPLING, Sample, Sampler};
///
/// let ms = Duration::from_millis;
/// let mut sampler = Sampler::new(SAMPLING, ms(0));
/// for i in 0..10 {
///     // Calls of 20 ms finishing through the first second: the window is open.
///     assert_eq!(sampler.add(ms(100 * i), ms(20), 5, false), None);
/// }
/// // The first call to finish after the second closes the window, itself included.
/// let sample = sampler.add(ms(1001), ms(31), 7, false);
/// assert_eq!(sample, Some(Sample { rtt: ms(21), in_flight: 7, dropped: false }));
/// ```
#[derive(Clone)]
pub struct Sampler {
    sampling: Sampling,
    clock: Latest,
    /// When the open window ends: the first call to finish after it closes it.
    end: u64,
    /// Calls in the open window, and their latencies' sum and minimum (`u64::MAX` if none).
    calls: u64,
    sum: u128,
    fastest: u64,
    /// The most calls in flight when a call of the window started.
    in_flight: u32,
    dropped: bool,
    /// How many of `kept` hold latencies of the open window.
    held: usize,
    /// Whether the open window closes as soon as it holds `size` calls, or at its end with
    /// any: a probe at one call in flight, bounded in time however slow the backend.
    early: bool,
    kept: [u64; Sampler::CAPACITY],
}

impl Sampler {
    /// How many latencies a window keeps for its percentile: 1024 (8 KiB in the sampler).
    ///
    /// Enough for a percentile to a tenth of a percent; with a call every millisecond, a
    /// whole default window. A busier window's percentile is that of its first 1024 calls,
    /// as the reference's fixed array gives.
    pub const CAPACITY: usize = 1024;

    /// A sampler whose first window opens at `now`.
    ///
    /// The first window lasts `min_window`, held to `max_window`: the length the reference
    /// gives a window after a fastest latency of zero.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::limit::{SAMPLING, Sampler};
    ///
    /// let sampler = Sampler::new(SAMPLING, Duration::from_secs(3));
    /// assert_eq!(sampler.end(), Duration::from_secs(4));
    /// assert_eq!(sampler.calls(), 0);
    /// ```
    pub fn new(sampling: Sampling, now: Duration) -> Self {
        let clock = Latest::new(now);
        Self {
            end: clock.get().saturating_add(sampling.length(0)),
            sampling,
            clock,
            calls: 0,
            sum: 0,
            fastest: u64::MAX,
            in_flight: 0,
            dropped: false,
            held: 0,
            early: false,
            kept: [0; Self::CAPACITY],
        }
    }

    /// Adds one call that finished at `now` after `rtt`, with `in_flight` calls in flight
    /// when it started (itself included); returns the window's sample when this call closes
    /// a window with enough calls.
    ///
    /// A latency under `min_rtt` is ignored, and cannot close a window. A window closed with
    /// fewer than `size` calls gives `None`, and its calls are forgotten.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::limit::{SAMPLING, Sampler, Sampling};
    ///
    /// let ms = Duration::from_millis;
    /// let few = Sampling { size: 2, ..SAMPLING };
    /// let mut sampler = Sampler::new(few, ms(0));
    /// assert_eq!(sampler.add(ms(10), ms(10), 1, false), None);
    /// // Too fast to count: ignored, even past the window's end.
    /// assert_eq!(sampler.add(ms(1500), Duration::from_micros(50), 1, false), None);
    /// let sample = sampler.add(ms(1500), ms(30), 2, true).expect("two calls, closed");
    /// assert_eq!((sample.rtt, sample.in_flight, sample.dropped), (ms(20), 2, true));
    /// ```
    pub fn add(
        &mut self,
        now: Duration,
        rtt: Duration,
        in_flight: u32,
        dropped: bool,
    ) -> Option<Sample> {
        let now = self.clock.advance(now);
        let rtt = nanos(rtt);
        if rtt < nanos(self.sampling.min_rtt) {
            return None;
        }
        self.calls = self.calls.saturating_add(1);
        self.sum += u128::from(rtt);
        self.fastest = self.fastest.min(rtt);
        self.in_flight = self.in_flight.max(in_flight);
        self.dropped |= dropped;
        if let Some(slot) = self.kept.get_mut(self.held) {
            *slot = rtt;
            self.held += 1;
        }
        let enough = self.calls >= u64::from(self.sampling.size.max(1));
        let open = if self.early {
            now <= self.end
        } else {
            now <= self.end || (self.sampling.fill && !enough)
        };
        if open {
            return None;
        }
        let sample = (enough || self.early).then(|| Sample {
            rtt: Duration::from_nanos(self.latency()),
            in_flight: self.in_flight,
            dropped: self.dropped,
        });
        self.end = now.saturating_add(self.sampling.length(self.fastest));
        self.calls = 0;
        self.sum = 0;
        self.fastest = u64::MAX;
        self.in_flight = 0;
        self.dropped = false;
        self.held = 0;
        self.early = false;
        sample
    }

    /// The open window's latency in nanoseconds, as [`Sampling::latency`] says; 0 for a
    /// window without calls.
    fn latency(&mut self) -> u64 {
        match self.sampling.latency {
            Latency::Average => match self.calls {
                0 => 0,
                // The mean of `u64`s fits a `u64`.
                calls => (self.sum / u128::from(calls)) as u64,
            },
            // `Math.round(n * p) - 1`, the reference's index, held to the latencies kept.
            Latency::Percentile(p) => percentile(&mut self.kept[..self.held], p).unwrap_or(0),
        }
    }

    /// Changes the sampling in place at `now`, keeping the open window.
    ///
    /// The calls already in the window stay in it and are read by the new rules when it
    /// closes (its latency, the `size` it needs); the window ends when it would have, or
    /// `max_window` after `now` if that is sooner. A `now` earlier than one already seen is
    /// read as the latest seen.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::limit::{SAMPLING, Sampler, Sampling};
    ///
    /// let ms = Duration::from_millis;
    /// let mut sampler = Sampler::new(SAMPLING, ms(0));
    /// sampler.add(ms(100), ms(20), 1, false);
    /// sampler.retune(Sampling { max_window: ms(200), ..SAMPLING }, ms(150));
    /// assert_eq!(sampler.end(), ms(350));
    /// assert_eq!(sampler.calls(), 1);
    /// ```
    pub fn retune(&mut self, sampling: Sampling, now: Duration) {
        let now = self.clock.advance(now);
        self.sampling = sampling;
        self.end = self.end.min(now.saturating_add(nanos(sampling.max_window)));
    }

    /// Forgets the open window and opens a new one at `now` that lasts `length`: what a
    /// [`Limiter`](crate::Limiter)'s probe does so that its window holds only calls let in
    /// once the queue has drained. The window after it is as long as usual.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::limit::{SAMPLING, Sampler};
    ///
    /// let ms = Duration::from_millis;
    /// let mut sampler = Sampler::new(SAMPLING, ms(0));
    /// sampler.add(ms(300), ms(5), 1, false);
    /// sampler.restart(ms(400), ms(200));
    /// assert_eq!((sampler.calls(), sampler.end()), (0, ms(600)));
    /// ```
    pub fn restart(&mut self, now: Duration, length: Duration) {
        let now = self.clock.advance(now);
        *self = Self::new(self.sampling, Duration::from_nanos(now));
        self.end = now.saturating_add(nanos(length));
    }

    /// [`restart`](Sampler::restart) for a window that closes as soon as it holds `size`
    /// calls, or at its end with any: a probe with one call in flight, which queues nothing
    /// whatever its length, and so need not last longer than its calls.
    pub(crate) fn restart_early(&mut self, now: Duration, length: Duration) {
        self.restart(now, length);
        self.early = true;
    }

    /// The sampling in use.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::limit::{SAMPLING, Sampler};
    ///
    /// assert_eq!(Sampler::new(SAMPLING, Duration::ZERO).sampling(), &SAMPLING);
    /// ```
    pub fn sampling(&self) -> &Sampling {
        &self.sampling
    }

    /// The calls in the open window.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::limit::{SAMPLING, Sampler};
    ///
    /// let ms = Duration::from_millis;
    /// let mut sampler = Sampler::new(SAMPLING, ms(0));
    /// sampler.add(ms(5), ms(5), 1, false);
    /// assert_eq!(sampler.calls(), 1);
    /// ```
    pub fn calls(&self) -> u64 {
        self.calls
    }

    /// When the open window ends, on the caller's clock: the first call to finish after it
    /// closes the window.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::limit::{SAMPLING, Sampler};
    ///
    /// let sampler = Sampler::new(SAMPLING, Duration::ZERO);
    /// assert_eq!(sampler.end(), SAMPLING.min_window);
    /// ```
    pub fn end(&self) -> Duration {
        Duration::from_nanos(self.end)
    }
}

impl fmt::Debug for Sampler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sampler")
            .field("sampling", &self.sampling)
            .field("latest", &self.clock.get())
            .field("end", &self.end)
            .field("calls", &self.calls)
            .field("sum", &self.sum)
            .field("fastest", &self.fastest)
            .field("in_flight", &self.in_flight)
            .field("dropped", &self.dropped)
            .field("kept", &&self.kept[..self.held])
            .finish()
    }
}

/// Two samplers are equal when their windows hold the same calls: the array past the
/// latencies kept is not compared.
impl PartialEq for Sampler {
    fn eq(&self, other: &Self) -> bool {
        self.sampling == other.sampling
            && self.clock == other.clock
            && self.end == other.end
            && self.calls == other.calls
            && self.sum == other.sum
            && self.fastest == other.fastest
            && self.in_flight == other.in_flight
            && self.dropped == other.dropped
            && self.kept[..self.held] == other.kept[..other.held]
    }
}

#[cfg(test)]
mod tests;
