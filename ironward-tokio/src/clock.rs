//! [`Clock`]: what `now` reads, and how long a sleep on it takes.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::task::{Context, Poll};
use std::thread;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub(crate) use ironward::clock::nanos;
use tokio::time::Instant;

/// A clock: what `now` reads, as a [`Duration`] since the clock's own epoch, and a
/// [`sleep`](Clock::sleep) measured on it.
///
/// - [`Clock::monotonic`] (the default) counts from the moment it was made, on tokio's clock,
///   so `tokio::time::pause` and `advance` drive it in tests.
/// - [`Clock::coarse`] counts from the moment it was made on the operating system's monotonic
///   clock, read from a value a thread of its own refreshes every `resolution`: a reading is
///   one load instead of a system clock read (about 1 ns against 20 on a virtual machine),
///   for a server whose every request reads the clock, at the price of readings up to one
///   resolution late.
/// - [`Clock::unix`] counts from the Unix epoch on the wall clock, for a quota that must reset
///   at calendar boundaries or a `Retry-After` date; it can step backwards, which the core
///   reads as the latest time seen.
/// - [`Clock::manual`] reads what its [`Hand`] sets, and a sleep on it moves it forward
///   instead of waiting: a test of a retry loop runs its waits in no time, exactly.
/// - [`Clock::from_fn`] reads a closure.
///
/// `Clone` is cheap and clones read the same source. `Debug` names the kind of clock and never
/// reads it, so formatting a layer has no side effect.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward_tokio::Clock;
///
/// let clock = Clock::from_fn(|| Duration::from_secs(42));
/// assert_eq!(clock.now(), Duration::from_secs(42));
/// assert_eq!(format!("{clock:?}"), "Clock::from_fn");
/// ```
#[derive(Clone)]
pub struct Clock(Source);

#[derive(Clone)]
enum Source {
    Monotonic(Instant),
    Coarse(Arc<Ticker>),
    Unix,
    Manual(Arc<AtomicU64>),
    Fn(Arc<dyn Fn() -> Duration + Send + Sync>),
}

impl Clock {
    /// The coarsest resolution [`coarse`](Clock::coarse) takes: a coarser one is read as this.
    pub const COARSEST_TICK: Duration = Duration::from_secs(1);

    /// The finest resolution [`coarse`](Clock::coarse) takes: a finer one is read as this.
    pub const FINEST_TICK: Duration = Duration::from_micros(100);

    /// tokio's monotonic clock, counting from now.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward_tokio::Clock;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let clock = Clock::monotonic();
    /// tokio::time::advance(Duration::from_secs(3)).await;
    /// assert_eq!(clock.now(), Duration::from_secs(3));
    /// # }
    /// ```
    pub fn monotonic() -> Self {
        Self(Source::Monotonic(Instant::now()))
    }

    /// A coarse monotonic clock, counting from now: a reading refreshed every `resolution`
    /// by a thread of its own, the way governor offers quanta's upkeep clock.
    ///
    /// Every request a layer decides reads its clock once, and on a virtual machine a read
    /// of the system's monotonic clock costs about 20 ns, as much as the decision itself.
    /// This clock's [`now`](Clock::now) is one atomic load: the reading the thread last
    /// stored. Readings never go backwards and are never ahead of the time they stand for;
    /// they lag it by up to one `resolution`, and by more while the machine is too busy to
    /// run the thread (a thread that is not scheduled does not tick). A limit on this clock
    /// therefore decides in steps of `resolution`: a bucket refills, a window slides and a
    /// breaker's buckets roll a tick at a time, each at most one tick late, which for a
    /// resolution of a millisecond is far below anything a rate limit of a few thousand a
    /// second can tell apart. The default stays [`monotonic`](Clock::monotonic), exact and
    /// driven by tokio's paused time in tests, which this clock is not: it reads the
    /// operating system's clock (`std::time::Instant`), and its thread runs in real time.
    ///
    /// `resolution` is held to [`FINEST_TICK`](Clock::FINEST_TICK) (100 µs, so that the
    /// thread does not spin) through [`COARSEST_TICK`](Clock::COARSEST_TICK) (1 s). Each call
    /// starts one thread, named `ironward-coarse-clock`, which the clock's clones share and
    /// which ends within a tick of the last clone's drop: make one coarse clock and hand
    /// clones of it to the layers. The first reading is zero, until the first tick. Should
    /// the thread fail to start, every reading is the system clock's, exact and as costly
    /// as [`monotonic`](Clock::monotonic)'s.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    /// use ironward_tokio::Clock;
    ///
    /// let start = Instant::now();
    /// let clock = Clock::coarse(Duration::from_millis(1));
    /// let first = clock.now();
    /// // Never ahead of the time it stands for, and never backwards.
    /// assert!(first <= start.elapsed());
    /// assert!(clock.now() >= first);
    /// assert_eq!(format!("{clock:?}"), "Clock::coarse(1ms)");
    /// ```
    pub fn coarse(resolution: Duration) -> Self {
        let resolution = resolution.clamp(Self::FINEST_TICK, Self::COARSEST_TICK);
        Self(Source::Coarse(Ticker::start(resolution)))
    }

    /// The wall clock, counting from the Unix epoch (zero if the system clock is set before
    /// it).
    pub fn unix() -> Self {
        Self(Source::Unix)
    }

    /// A clock that reads `start` until its [`Hand`] moves it, and that a
    /// [`sleep`](Self::sleep) moves forward by the sleep's length instead of waiting.
    ///
    /// For tests and simulations of code that sleeps: the waits cost no time, and what the
    /// clock reads afterwards is exactly the sum of what was slept and what the hand added.
    /// Its readings are nanoseconds in a `u64` (about 584 years), saturating there.
    pub fn manual(start: Duration) -> (Self, Hand) {
        let nanos = Arc::new(AtomicU64::new(nanos(start)));
        (Self(Source::Manual(Arc::clone(&nanos))), Hand(nanos))
    }

    /// A clock that reads whatever `now` returns.
    pub fn from_fn(now: impl Fn() -> Duration + Send + Sync + 'static) -> Self {
        Self(Source::Fn(Arc::new(now)))
    }

    /// What the clock reads.
    #[inline]
    pub fn now(&self) -> Duration {
        match &self.0 {
            Source::Monotonic(origin) => origin.elapsed(),
            Source::Coarse(ticker) => ticker.now(),
            Source::Unix => unix(),
            Source::Manual(nanos) => Duration::from_nanos(nanos.load(Ordering::Acquire)),
            Source::Fn(now) => now(),
        }
    }

    /// The instant on tokio's clock that `reading`, a reading of this clock, stands for: a
    /// [monotonic](Self::monotonic) clock's origin plus the reading; `None` for every other
    /// clock, whose readings are not tokio's time (a coarse clock's lag it, a manual one's
    /// are whatever its hand set).
    ///
    /// For code that decides on one reading and keeps time on tokio's timer too: a server
    /// stack that reads its clock once for every piece starts its deadline at the same
    /// instant instead of reading the system clock again.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward_tokio::Clock;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let clock = Clock::monotonic();
    /// tokio::time::advance(Duration::from_secs(2)).await;
    /// let now = clock.now();
    /// assert_eq!(clock.instant(now), Some(tokio::time::Instant::now()));
    /// assert_eq!(Clock::from_fn(|| Duration::ZERO).instant(now), None);
    /// # }
    /// ```
    #[inline]
    pub fn instant(&self, reading: Duration) -> Option<Instant> {
        match &self.0 {
            Source::Monotonic(origin) => origin.checked_add(reading),
            _ => None,
        }
    }

    /// A future that completes after `duration` on this clock.
    ///
    /// tokio's `sleep` for every clock but a [manual](Self::manual) one, which is moved
    /// forward by `duration` at once (when this is called) and completes on its first poll.
    pub fn sleep(&self, duration: Duration) -> Delay {
        match &self.0 {
            Source::Manual(nanos) => {
                advance(nanos, duration);
                Delay { tokio: None }
            }
            _ => Delay {
                tokio: Some(tokio::time::sleep(duration)),
            },
        }
    }
}

impl Clock {
    /// Blocks the thread for `duration` on this clock: a synchronous code's
    /// [`sleep`](Self::sleep).
    ///
    /// A [manual](Self::manual) clock is moved forward by `duration` at once, as its
    /// [`sleep`](Self::sleep) moves it, and nothing waits; every other clock blocks the
    /// thread with `std::thread::sleep` (which tokio's paused time does not shorten).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward_tokio::Clock;
    ///
    /// let (clock, _hand) = Clock::manual(Duration::ZERO);
    /// clock.sleep_blocking(Duration::from_secs(3600));
    /// assert_eq!(clock.now(), Duration::from_secs(3600));
    /// ```
    pub fn sleep_blocking(&self, duration: Duration) {
        match &self.0 {
            Source::Manual(nanos) => advance(nanos, duration),
            _ => thread::sleep(duration),
        }
    }
}

impl Default for Clock {
    /// [`Clock::monotonic`].
    fn default() -> Self {
        Self::monotonic()
    }
}

/// The time since the Unix epoch on the wall clock, zero before it. Out of line: a call to
/// the system's clock anyway, kept out of [`Clock::now`] so that it stays small enough to
/// inline, and a coarse or manual clock's reading is a load at its caller.
#[inline(never)]
fn unix() -> Duration {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
}

impl fmt::Debug for Clock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Source::Monotonic(_) => f.write_str("Clock::monotonic"),
            Source::Coarse(ticker) => write!(f, "Clock::coarse({:?})", ticker.resolution),
            Source::Unix => f.write_str("Clock::unix"),
            Source::Manual(nanos) => f
                .debug_tuple("Clock::manual")
                .field(&Duration::from_nanos(nanos.load(Ordering::Acquire)))
                .finish(),
            Source::Fn(_) => f.write_str("Clock::from_fn"),
        }
    }
}

/// Moves a [`Clock::manual`] clock.
///
/// `Clone` shares the hand: every clone moves the same clock.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward_tokio::Clock;
///
/// let (clock, hand) = Clock::manual(Duration::ZERO);
/// hand.set(Duration::from_secs(5));
/// hand.advance(Duration::from_millis(250));
/// assert_eq!(clock.now(), Duration::from_millis(5250));
/// ```
#[derive(Debug, Clone)]
pub struct Hand(Arc<AtomicU64>);

impl Hand {
    /// Sets the clock to read `now` (a clock set back is read by the core as the latest time
    /// it has seen).
    pub fn set(&self, now: Duration) {
        self.0.store(nanos(now), Ordering::Release);
    }

    /// Moves the clock forward by `by`, saturating.
    pub fn advance(&self, by: Duration) {
        advance(&self.0, by);
    }
}

pin_project_lite::pin_project! {
    /// The future of [`Clock::sleep`]: tokio's `Sleep`, or nothing to wait for on a manual
    /// clock.
    #[derive(Debug)]
    #[must_use = "a sleep does nothing unless awaited"]
    pub struct Delay {
        #[pin]
        tokio: Option<tokio::time::Sleep>,
    }
}

impl Future for Delay {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        match self.project().tokio.as_pin_mut() {
            Some(sleep) => sleep.poll(cx),
            None => Poll::Ready(()),
        }
    }
}

/// Moves a manual clock's reading forward by `by`, saturating.
fn advance(reading: &AtomicU64, by: Duration) {
    let by = nanos(by);
    // `fetch_update` cannot fail here: the closure always returns `Some`.
    let _ = reading.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
        Some(n.saturating_add(by))
    });
}

/// What a [`Clock::coarse`] reads: the time since `origin`, stored by a thread every
/// `resolution`.
struct Ticker {
    origin: std::time::Instant,
    resolution: Duration,
    /// Nanoseconds since `origin` at the latest tick.
    nanos: AtomicU64,
}

impl Ticker {
    /// A ticker counting from now, and the thread that keeps it: the thread holds it weakly,
    /// so that it ends at the first tick after the last clock reading it is dropped.
    fn start(resolution: Duration) -> Arc<Self> {
        let ticker = Arc::new(Self {
            origin: std::time::Instant::now(),
            resolution,
            nanos: AtomicU64::new(0),
        });
        let weak = Arc::downgrade(&ticker);
        let spawned = thread::Builder::new()
            .name("ironward-coarse-clock".into())
            .spawn(move || Self::keep(&weak, resolution));
        // Without its thread the clock would stand still: read the system clock instead,
        // which is what a coarse clock approximates, rather than stop time.
        if spawned.is_err() {
            ticker.nanos.store(u64::MAX, Ordering::Relaxed);
        }
        ticker
    }

    /// The thread's loop: store the time every `resolution`, until nobody reads it.
    fn keep(weak: &Weak<Self>, resolution: Duration) {
        loop {
            thread::sleep(resolution);
            let Some(ticker) = weak.upgrade() else {
                return;
            };
            // Only this thread writes, and `Instant` does not go backwards.
            ticker.nanos.store(ticker.elapsed(), Ordering::Relaxed);
        }
    }

    /// Nanoseconds since `origin` on the system clock, saturating.
    fn elapsed(&self) -> u64 {
        nanos(self.origin.elapsed())
    }

    #[inline]
    fn now(&self) -> Duration {
        match self.nanos.load(Ordering::Relaxed) {
            // No thread could be started: every reading is the system clock's.
            u64::MAX => Duration::from_nanos(self.elapsed()),
            nanos => Duration::from_nanos(nanos),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn the_monotonic_clock_follows_tokio_time() {
        let clock = Clock::monotonic();
        assert_eq!(clock.now(), Duration::ZERO);
        tokio::time::advance(Duration::from_millis(1500)).await;
        assert_eq!(clock.now(), Duration::from_millis(1500));
        let start = Instant::now();
        clock.sleep(Duration::from_secs(2)).await;
        assert_eq!(start.elapsed(), Duration::from_secs(2));
        assert_eq!(clock.now(), Duration::from_millis(3500));
    }

    #[test]
    fn a_coarse_clock_ticks_never_ahead_and_never_back() {
        let start = std::time::Instant::now();
        let clock = Clock::coarse(Duration::from_millis(1));
        let mut last = clock.now();
        // Wait (bounded) for the ticker to move it; a reading is never ahead of the system
        // clock it stands for, and never earlier than the one before.
        let deadline = start + Duration::from_secs(10);
        while clock.now() == Duration::ZERO && std::time::Instant::now() < deadline {
            thread::sleep(Duration::from_millis(1));
        }
        for _ in 0..100 {
            let now = clock.now();
            assert!(now >= last, "{now:?} after {last:?}");
            assert!(now <= start.elapsed(), "{now:?} ahead of the system clock");
            last = now;
        }
        assert!(last > Duration::ZERO, "the ticker never ticked");
        // Clones read the one ticker.
        assert!(clock.clone().now() >= last);
    }

    #[test]
    fn a_coarse_resolution_is_held_to_its_bounds() {
        let debug = |resolution| format!("{:?}", Clock::coarse(resolution));
        assert_eq!(debug(Duration::ZERO), "Clock::coarse(100µs)");
        assert_eq!(debug(Duration::MAX), "Clock::coarse(1s)");
        assert_eq!(debug(Duration::from_millis(4)), "Clock::coarse(4ms)");
    }

    #[test]
    fn a_coarse_clock_without_a_ticker_reads_the_system_clock() {
        let ticker = Ticker {
            origin: std::time::Instant::now(),
            resolution: Duration::from_millis(1),
            nanos: AtomicU64::new(u64::MAX),
        };
        let before = ticker.now();
        thread::sleep(Duration::from_millis(2));
        assert!(ticker.now() >= before + Duration::from_millis(2));
    }

    #[test]
    fn the_unix_clock_is_past_2020() {
        assert!(Clock::unix().now() > Duration::from_secs(1_577_836_800));
    }

    #[tokio::test(start_paused = true)]
    async fn a_sleep_on_a_manual_clock_moves_it_and_takes_no_time() {
        let (clock, hand) = Clock::manual(Duration::from_secs(1));
        let start = Instant::now();
        clock.sleep(Duration::from_secs(30)).await;
        assert_eq!(start.elapsed(), Duration::ZERO);
        assert_eq!(clock.now(), Duration::from_secs(31));
        hand.set(Duration::from_secs(2));
        assert_eq!(clock.clone().now(), Duration::from_secs(2));
    }

    #[test]
    fn a_manual_clock_saturates() {
        let (clock, hand) = Clock::manual(Duration::MAX);
        assert_eq!(clock.now(), Duration::from_nanos(u64::MAX));
        hand.advance(Duration::MAX);
        drop(clock.sleep(Duration::from_secs(1)));
        assert_eq!(clock.now(), Duration::from_nanos(u64::MAX));
    }

    #[test]
    fn debug_never_reads_a_closure() {
        let clock = Clock::from_fn(|| panic!("Debug must not read the clock"));
        assert_eq!(format!("{clock:?}"), "Clock::from_fn");
        assert_eq!(format!("{:?}", Clock::unix()), "Clock::unix");
        let (manual, _) = Clock::manual(Duration::from_millis(5));
        assert_eq!(format!("{manual:?}"), "Clock::manual(5ms)");
    }
}
