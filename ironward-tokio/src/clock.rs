//! [`Clock`]: what `now` reads, and how long a sleep on it takes.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::time::Instant;

/// A clock: what `now` reads, as a [`Duration`] since the clock's own epoch, and a
/// [`sleep`](Clock::sleep) measured on it.
///
/// - [`Clock::monotonic`] (the default) counts from the moment it was made, on tokio's clock,
///   so `tokio::time::pause` and `advance` drive it in tests.
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
    Unix,
    Manual(Arc<AtomicU64>),
    Fn(Arc<dyn Fn() -> Duration + Send + Sync>),
}

impl Clock {
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
        let nanos = Arc::new(AtomicU64::new(saturating_nanos(start)));
        (Self(Source::Manual(Arc::clone(&nanos))), Hand(nanos))
    }

    /// A clock that reads whatever `now` returns.
    pub fn from_fn(now: impl Fn() -> Duration + Send + Sync + 'static) -> Self {
        Self(Source::Fn(Arc::new(now)))
    }

    /// What the clock reads.
    pub fn now(&self) -> Duration {
        match &self.0 {
            Source::Monotonic(origin) => origin.elapsed(),
            Source::Unix => SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default(),
            Source::Manual(nanos) => Duration::from_nanos(nanos.load(Ordering::Acquire)),
            Source::Fn(now) => now(),
        }
    }

    /// A future that completes after `duration` on this clock.
    ///
    /// tokio's `sleep` for every clock but a [manual](Self::manual) one, which is moved
    /// forward by `duration` at once (when this is called) and completes on its first poll.
    pub fn sleep(&self, duration: Duration) -> Sleep {
        match &self.0 {
            Source::Manual(nanos) => {
                advance(nanos, duration);
                Sleep { tokio: None }
            }
            _ => Sleep {
                tokio: Some(tokio::time::sleep(duration)),
            },
        }
    }
}

impl Default for Clock {
    /// [`Clock::monotonic`].
    fn default() -> Self {
        Self::monotonic()
    }
}

impl fmt::Debug for Clock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Source::Monotonic(_) => f.write_str("Clock::monotonic"),
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
        self.0.store(saturating_nanos(now), Ordering::Release);
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
    pub struct Sleep {
        #[pin]
        tokio: Option<tokio::time::Sleep>,
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        match self.project().tokio.as_pin_mut() {
            Some(sleep) => sleep.poll(cx),
            None => Poll::Ready(()),
        }
    }
}

/// `d` in whole nanoseconds, saturating at `u64::MAX`.
fn saturating_nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Moves a manual clock's reading forward by `by`, saturating.
fn advance(nanos: &AtomicU64, by: Duration) {
    let by = saturating_nanos(by);
    // `fetch_update` cannot fail here: the closure always returns `Some`.
    let _ = nanos.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
        Some(n.saturating_add(by))
    });
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
