//! The one seeded generator of the workspace.

/// SplitMix64 (Steele, Lea and Flood, "Fast Splittable Pseudorandom Number Generators",
/// 2014): a 64-bit state moved by a fixed odd step and mixed on the way out.
///
/// The core's decisions take their draws from the caller; this is the generator for a caller
/// that wants them reproducible: a test, a simulation, a replay. The same seed gives the same
/// sequence on every platform. Vegas draws its probe jitter from it, ironward-tokio's
/// `Dice::seeded` and the simulator their draws. It is fast and statistically sound for
/// these uses, and no good for secrets.
///
/// # Examples
///
/// ```
/// use ironward::SplitMix64;
///
/// // The first output for 1234567 (Rosetta Code, "Pseudo-random numbers/Splitmix64").
/// let mut dice = SplitMix64::new(1_234_567);
/// assert_eq!(dice.next_u64(), 6_457_827_717_110_365_317);
/// let roll = dice.roll();
/// assert!((0.0..1.0).contains(&roll));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// The step the state moves by: 2⁶⁴ over the golden ratio, made odd.
    pub const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

    /// A generator whose state starts at `seed`.
    #[must_use]
    pub const fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(Self::GAMMA);
        Self::mix(self.state)
    }

    /// A draw from `[0, 1)`, in steps of 2⁻⁵³: the draw every decision of the core takes.
    #[inline]
    pub fn roll(&mut self) -> f64 {
        Self::unit(self.next_u64())
    }

    /// The output function (Stafford's "Mix13" variant of MurmurHash3's finaliser), for a
    /// state moved elsewhere: a counter that several threads step with one `fetch_add` of
    /// [`GAMMA`](Self::GAMMA) each, as ironward-tokio's `Dice::seeded` does.
    #[must_use]
    #[inline]
    pub const fn mix(mut z: u64) -> u64 {
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// 64 random bits as a draw from `[0, 1)`: the top 53 as a fraction of 2⁵³, so every
    /// step is exact and the draw never reaches 1.
    #[must_use]
    #[inline]
    pub fn unit(bits: u64) -> f64 {
        (bits >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gives_its_published_outputs() {
        // Rosetta Code, "Pseudo-random numbers/Splitmix64": the first five for 1234567.
        let mut dice = SplitMix64::new(1_234_567);
        let outputs = [
            6_457_827_717_110_365_317,
            3_203_168_211_198_807_973,
            9_817_491_932_198_370_423,
            4_593_380_528_125_082_431,
            16_408_922_859_458_223_821,
        ];
        for output in outputs {
            assert_eq!(dice.next_u64(), output);
        }
    }

    #[test]
    fn the_unit_draw_spans_zero_to_just_below_one() {
        assert_eq!(SplitMix64::unit(0), 0.0);
        assert_eq!(SplitMix64::unit(u64::MAX), 1.0 - 1.0 / (1u64 << 53) as f64);
        let mut dice = SplitMix64::new(0);
        assert!((0..10_000).all(|_| (0.0..1.0).contains(&dice.roll())));
    }
}
