//! [`Dice`]: the draws from `[0, 1)` the core's decisions take.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use ironward::SplitMix64;

/// A source of draws from `[0, 1)`: the breaker's roll, a retry's jitter.
///
/// - [`Dice::random`] (the default) draws from the thread-local generator of `rand`;
/// - [`Dice::seeded`] gives the same SplitMix64 sequence on every run, shared by all its
///   clones, for tests and simulations;
/// - [`Dice::from_fn`] draws whatever a closure returns (the core clamps it into `[0, 1)`):
///   `Dice::from_fn(|| 1.0)` is the top of every range, which for a retry's full jitter means
///   no jitter at all.
///
/// `Clone` is cheap and clones draw from the same source. `Debug` names the kind of dice and
/// never draws.
///
/// # Examples
///
/// ```
/// use ironward_tokio::Dice;
///
/// let a = Dice::seeded(7);
/// let b = Dice::seeded(7);
/// let draws: Vec<f64> = (0..3).map(|_| a.roll()).collect();
/// assert_eq!(draws, (0..3).map(|_| b.roll()).collect::<Vec<_>>());
/// assert!(draws.iter().all(|d| (0.0..1.0).contains(d)));
/// assert_eq!(format!("{a:?}"), "Dice::seeded");
/// ```
#[derive(Clone)]
pub struct Dice(Source);

#[derive(Clone)]
enum Source {
    Random,
    Seeded(Arc<AtomicU64>),
    Fn(Arc<dyn Fn() -> f64 + Send + Sync>),
}

impl Dice {
    /// Real randomness, from `rand`'s thread-local generator.
    pub fn random() -> Self {
        Self(Source::Random)
    }

    /// A SplitMix64 sequence from `seed`: reproducible, lock-free, and shared by every clone.
    pub fn seeded(seed: u64) -> Self {
        Self(Source::Seeded(Arc::new(AtomicU64::new(seed))))
    }

    /// Draws from whatever `roll` returns.
    pub fn from_fn(roll: impl Fn() -> f64 + Send + Sync + 'static) -> Self {
        Self(Source::Fn(Arc::new(roll)))
    }

    /// One draw.
    pub fn roll(&self) -> f64 {
        match &self.0 {
            Source::Random => rand::random::<f64>(),
            Source::Seeded(state) => {
                // One step of the core's SplitMix64, the state shared by every clone.
                let moved = state
                    .fetch_add(SplitMix64::GAMMA, Ordering::Relaxed)
                    .wrapping_add(SplitMix64::GAMMA);
                SplitMix64::unit(SplitMix64::mix(moved))
            }
            Source::Fn(roll) => roll(),
        }
    }
}

impl Default for Dice {
    /// [`Dice::random`].
    fn default() -> Self {
        Self::random()
    }
}

impl fmt::Debug for Dice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.0 {
            Source::Random => "Dice::random",
            Source::Seeded(_) => "Dice::seeded",
            Source::Fn(_) => "Dice::from_fn",
        })
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
    fn seeded_dice_draw_the_cores_splitmix64_sequence() {
        let (dice, mut core) = (Dice::seeded(99), SplitMix64::new(99));
        assert!((0..100).all(|_| dice.roll() == core.roll()));
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

    #[test]
    fn debug_never_draws() {
        let dice = Dice::from_fn(|| panic!("Debug must not roll"));
        assert_eq!(format!("{dice:?}"), "Dice::from_fn");
        assert_eq!(format!("{:?}", Dice::random()), "Dice::random");
    }
}
