//! What the core is fed at the edge: the clock, the random draw and the CPU reading.
//!
//! The `ironward` core reads none of these itself. Each layer here owns one value of each kind
//! it needs and hands their readings to the core on every request. The real sources are the
//! defaults; the others exist so that a test or a simulation can script what a layer sees.
//! Each is a cheap `Clone` (an `Arc` inside): clones read the same source.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::time::Instant;

/// A clock: what `now` reads, as a [`Duration`] since the clock's own epoch.
///
/// [`Clock::monotonic`] (the default) counts from the moment it was made, on tokio's clock,
/// so `tokio::time::pause` and `advance` drive it in tests. [`Clock::unix`] counts from the
/// Unix epoch on the wall clock, for a [`Period`](ironward::Period) that must reset at
/// calendar boundaries; it can step backwards, which the core reads as the latest time seen.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward_tower::Clock;
///
/// let clock = Clock::from_fn(|| Duration::from_secs(42));
/// assert_eq!(clock.now(), Duration::from_secs(42));
/// ```
#[derive(Clone)]
pub struct Clock(Arc<dyn Fn() -> Duration + Send + Sync>);

impl Clock {
    /// tokio's monotonic clock, counting from now.
    pub fn monotonic() -> Self {
        let origin = Instant::now();
        Self(Arc::new(move || origin.elapsed()))
    }

    /// The wall clock, counting from the Unix epoch (zero if the system clock is set before
    /// it).
    pub fn unix() -> Self {
        Self(Arc::new(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default()
        }))
    }

    /// A clock that reads whatever `now` returns.
    pub fn from_fn(now: impl Fn() -> Duration + Send + Sync + 'static) -> Self {
        Self(Arc::new(now))
    }

    /// What the clock reads.
    pub fn now(&self) -> Duration {
        (self.0)()
    }
}

impl Default for Clock {
    fn default() -> Self {
        Self::monotonic()
    }
}

impl fmt::Debug for Clock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Clock").field(&self.now()).finish()
    }
}

/// A source of draws from `[0, 1)`, for the breaker's roll.
///
/// [`Dice::random`] (the default) draws from the thread-local generator of `rand`;
/// [`Dice::seeded`] gives the same sequence on every run, shared by all its clones, for tests
/// and simulations.
///
/// # Examples
///
/// ```
/// use ironward_tower::Dice;
///
/// let a = Dice::seeded(7);
/// let b = Dice::seeded(7);
/// let draws: Vec<f64> = (0..3).map(|_| a.roll()).collect();
/// assert_eq!(draws, (0..3).map(|_| b.roll()).collect::<Vec<_>>());
/// assert!(draws.iter().all(|d| (0.0..1.0).contains(d)));
/// ```
#[derive(Clone)]
pub struct Dice(Arc<dyn Fn() -> f64 + Send + Sync>);

impl Dice {
    /// Real randomness, from `rand`'s thread-local generator.
    pub fn random() -> Self {
        Self(Arc::new(rand::random::<f64>))
    }

    /// A SplitMix64 sequence from `seed`: reproducible, lock-free, and shared by every clone.
    pub fn seeded(seed: u64) -> Self {
        let state = AtomicU64::new(seed);
        Self(Arc::new(move || {
            let mut z = state
                .fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed)
                .wrapping_add(0x9E37_79B9_7F4A_7C15);
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            (z >> 11) as f64 / (1u64 << 53) as f64
        }))
    }

    /// Draws from whatever `roll` returns (the core clamps it into `[0, 1)`).
    pub fn from_fn(roll: impl Fn() -> f64 + Send + Sync + 'static) -> Self {
        Self(Arc::new(roll))
    }

    /// One draw.
    pub fn roll(&self) -> f64 {
        (self.0)()
    }
}

impl Default for Dice {
    fn default() -> Self {
        Self::random()
    }
}

impl fmt::Debug for Dice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Dice")
    }
}

/// A CPU reading, in thousandths (0 to 1000), for the shedder.
///
/// The real one is a [`CpuSampler`](crate::CpuSampler)'s (`Cpu::from(&sampler)`); for tests
/// there are [`Cpu::fixed`] and [`Cpu::scripted`], whose reading the test sets as it goes.
///
/// # Examples
///
/// ```
/// use ironward_tower::Cpu;
///
/// let (cpu, dial) = Cpu::scripted(100);
/// assert_eq!(cpu.read(), 100);
/// dial.set(950);
/// assert_eq!(cpu.read(), 950);
/// assert_eq!(Cpu::fixed(300).read(), 300);
/// ```
#[derive(Clone)]
pub struct Cpu(Arc<dyn Fn() -> u32 + Send + Sync>);

impl Cpu {
    /// A reading that never changes.
    pub fn fixed(reading: u32) -> Self {
        Self(Arc::new(move || reading))
    }

    /// A reading the returned [`CpuDial`] sets, starting at `reading`.
    pub fn scripted(reading: u32) -> (Self, CpuDial) {
        let dial = CpuDial(Arc::new(AtomicU32::new(reading)));
        let shared = Arc::clone(&dial.0);
        (Self(Arc::new(move || shared.load(Ordering::Relaxed))), dial)
    }

    /// A reading taken from whatever `read` returns.
    pub fn from_fn(read: impl Fn() -> u32 + Send + Sync + 'static) -> Self {
        Self(Arc::new(read))
    }

    /// The current reading, in thousandths.
    pub fn read(&self) -> u32 {
        (self.0)()
    }
}

impl fmt::Debug for Cpu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Cpu").field(&self.read()).finish()
    }
}

/// Sets the reading of a [`Cpu::scripted`] source.
#[derive(Debug, Clone)]
pub struct CpuDial(Arc<AtomicU32>);

impl CpuDial {
    /// Makes the source read `reading` thousandths from now on.
    pub fn set(&self, reading: u32) {
        self.0.store(reading, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_dice_are_shared_by_clones() {
        let a = Dice::seeded(1);
        let b = a.clone();
        let first = a.roll();
        let second = b.roll();
        let fresh = Dice::seeded(1);
        assert_eq!((fresh.roll(), fresh.roll()), (first, second));
        assert_ne!(first, second);
    }

    #[test]
    fn random_dice_stay_in_the_unit_interval() {
        let dice = Dice::default();
        assert!(
            (0..1000)
                .map(|_| dice.roll())
                .all(|d| (0.0..1.0).contains(&d))
        );
    }

    #[tokio::test(start_paused = true)]
    async fn the_monotonic_clock_follows_tokio_time() {
        let clock = Clock::monotonic();
        assert_eq!(clock.now(), Duration::ZERO);
        tokio::time::advance(Duration::from_millis(1500)).await;
        assert_eq!(clock.now(), Duration::from_millis(1500));
    }

    #[test]
    fn the_unix_clock_is_past_2020() {
        assert!(Clock::unix().now() > Duration::from_secs(1_577_836_800));
    }
}
