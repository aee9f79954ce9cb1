//! The simulator's only source of chance: a seeded SplitMix64.

/// The increment of SplitMix64's Weyl sequence: 2⁶⁴ divided by the golden ratio, made odd.
const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// A seeded SplitMix64 generator: every random draw in a simulation comes from one of these.
///
/// SplitMix64 (Steele, Lea and Flood, "Fast Splittable Pseudorandom Number Generators",
/// OOPSLA 2014) is fully specified by a few integer operations, so a seed gives the same
/// sequence on every platform and every build: that is what makes a run byte-identical.
/// Draws in `[0, 1)` take the top 53 bits; the exponential and normal deviates are
/// Marsaglia and Tsang's ziggurats, whose tables and rare slow paths use only IEEE
/// arithmetic and the pure-Rust `libm`, never the platform's maths library, whose last bit
/// may differ between systems.
///
/// A simulation keeps one generator per use of chance ([`fork`](Dice::fork)): arrivals,
/// service times, backend failures, breaker draws and jitter each have their own, so two
/// variants of a scenario see the same arrivals whatever their policies do with the rest.
///
/// # Examples
///
/// ```
/// use ironward_sim::Dice;
///
/// // SplitMix64's reference output for a zero seed.
/// let mut dice = Dice::new(0);
/// assert_eq!(dice.next_u64(), 0xE220_A839_7B1D_CDAF);
///
/// let roll = Dice::new(7).roll();
/// assert!((0.0..1.0).contains(&roll));
/// assert_eq!(roll, Dice::new(7).roll());
/// ```
#[derive(Debug, Clone)]
pub struct Dice {
    state: u64,
}

impl Dice {
    /// A generator whose state starts at `seed`.
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// An independent stream for one use of chance, numbered `stream`, from the same seed.
    ///
    /// The stream's state is the seed mixed with the stream number through SplitMix64's
    /// finaliser, which puts distinct streams far apart in the sequence.
    pub fn fork(seed: u64, stream: u64) -> Self {
        Self::new(mix(seed ^ mix(stream.wrapping_mul(GAMMA))))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GAMMA);
        mix(self.state)
    }

    /// A draw from `[0, 1)`, in steps of 2⁻⁵³.
    pub fn roll(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// An exponential deviate with the given mean: the gap between Poisson arrivals.
    pub(crate) fn exponential(&mut self, mean: f64) -> f64 {
        let z = &tables().exponential;
        loop {
            let (i, x) = z.draw(self.next_u64());
            if x < z.x[i + 1] {
                return mean * x;
            }
            if i == 0 {
                // The tail beyond r is r plus another exponential: the distribution forgets.
                return mean * (EXPONENTIAL_R - libm::log(1.0 - self.roll()));
            }
            if z.under(i, self.roll(), libm::exp(-x)) {
                return mean * x;
            }
        }
    }

    /// A standard normal deviate.
    pub(crate) fn normal(&mut self) -> f64 {
        let z = &tables().normal;
        loop {
            let bits = self.next_u64();
            let sign = if bits & 0x100 == 0 { 1.0 } else { -1.0 };
            let (i, x) = z.draw(bits);
            if x < z.x[i + 1] {
                return sign * x;
            }
            if i == 0 {
                // Marsaglia's tail method (1964) for the normal beyond r.
                loop {
                    let a = -libm::log(1.0 - self.roll()) / NORMAL_R;
                    let b = -libm::log(1.0 - self.roll());
                    if 2.0 * b > a * a {
                        return sign * (NORMAL_R + a);
                    }
                }
            }
            if z.under(i, self.roll(), libm::exp(-0.5 * x * x)) {
                return sign * x;
            }
        }
    }
}

/// Layers in each ziggurat.
const LAYERS: usize = 256;

/// Marsaglia and Tsang's constants for a 256-layer ziggurat ("The Ziggurat Method for
/// Generating Random Variables", Journal of Statistical Software 5, 2000): where the tail
/// starts, and the area of every layer.
const NORMAL_R: f64 = 3.654_152_885_361_009;
const NORMAL_V: f64 = 4.928_673_233_99e-3;
const EXPONENTIAL_R: f64 = 7.697_117_470_131_487;
const EXPONENTIAL_V: f64 = 3.949_659_822_581_572e-3;

/// The layers of a ziggurat over a decreasing density `f`: layer `i` is the rectangle of
/// width `x[i]` between heights `f[i]` and `f[i + 1]`; layer 0 is the base, whose width
/// `v / f(r)` stands for the rectangle under `f(r)` and the tail beyond `r`.
///
/// Most draws land inside the curve's shadow (`x < x[i + 1]`) and cost one random word and
/// a multiplication, which is what makes the simulator's service times and Poisson gaps
/// cheap; the rest are decided against the density itself.
#[derive(Debug)]
struct Ziggurat {
    x: [f64; LAYERS + 1],
    f: [f64; LAYERS + 1],
}

impl Ziggurat {
    /// Builds the layers from the tail start `r`, the layer area `v`, the density and its
    /// inverse, with `libm` so that every platform builds the same table.
    fn new(r: f64, v: f64, density: fn(f64) -> f64, inverse: fn(f64) -> f64) -> Self {
        let mut x = [0.0; LAYERS + 1];
        x[0] = v / density(r);
        x[1] = r;
        for i in 1..LAYERS - 1 {
            x[i + 1] = inverse(v / x[i] + density(x[i]));
        }
        x[LAYERS] = 0.0;
        let f = x.map(density);
        Self { x, f }
    }

    /// The layer a random word picks (its low byte) and a point across it (its top 53 bits).
    fn draw(&self, bits: u64) -> (usize, f64) {
        let i = (bits & 0xFF) as usize;
        let u = (bits >> 11) as f64 / (1u64 << 53) as f64;
        (i, u * self.x[i])
    }

    /// Whether a point at height `u` across layer `i` lies under a density of `at`.
    fn under(&self, i: usize, u: f64, at: f64) -> bool {
        self.f[i] + u * (self.f[i + 1] - self.f[i]) < at
    }
}

/// Both ziggurats, built once.
#[derive(Debug)]
struct Tables {
    normal: Ziggurat,
    exponential: Ziggurat,
}

fn tables() -> &'static Tables {
    static TABLES: std::sync::OnceLock<Tables> = std::sync::OnceLock::new();
    TABLES.get_or_init(|| Tables {
        normal: Ziggurat::new(
            NORMAL_R,
            NORMAL_V,
            |x| libm::exp(-0.5 * x * x),
            |y| libm::sqrt(-2.0 * libm::log(y)),
        ),
        exponential: Ziggurat::new(
            EXPONENTIAL_R,
            EXPONENTIAL_V,
            |x| libm::exp(-x),
            |y| -libm::log(y),
        ),
    })
}

/// SplitMix64's output function (Stafford's "Mix13" variant of the MurmurHash3 finaliser).
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    // The reference sequence of SplitMix64 for seed 0 (the C reference implementation by
    // Vigna, splitmix64.c).
    #[test]
    fn reproduces_the_reference_sequence() {
        let mut dice = Dice::new(0);
        let first: Vec<u64> = (0..3).map(|_| dice.next_u64()).collect();
        assert_eq!(
            first,
            [
                0xE220_A839_7B1D_CDAF,
                0x6E78_9E6A_A1B9_65F4,
                0x06C4_5D18_8009_454F
            ]
        );
    }

    #[test]
    fn forked_streams_differ_from_each_other_and_from_the_seed() {
        let a = Dice::fork(1, 0).next_u64();
        let b = Dice::fork(1, 1).next_u64();
        let c = Dice::new(1).next_u64();
        assert!(a != b && b != c && a != c);
    }

    // Every layer has the area v, so the layer on top of the last width computed must reach
    // the density's peak, 1, at x = 0: v / x[255] + f(x[255]) = 1. That checks the constants.
    #[test]
    fn the_ziggurat_constants_close_each_table_at_the_peak() {
        for (v, z) in [
            (NORMAL_V, &tables().normal),
            (EXPONENTIAL_V, &tables().exponential),
        ] {
            assert!(z.x.windows(2).all(|w| w[0] > w[1]), "widths decrease");
            let top = v / z.x[LAYERS - 1] + z.f[LAYERS - 1];
            assert!((top - 1.0).abs() < 1e-9, "{top}");
        }
    }

    #[test]
    fn deviates_have_the_moments_they_should() {
        let mut dice = Dice::new(42);
        let n = 200_000;
        let mean_exp = (0..n).map(|_| dice.exponential(2.0)).sum::<f64>() / n as f64;
        assert!((mean_exp - 2.0).abs() < 0.03, "{mean_exp}");
        let normals: Vec<f64> = (0..n).map(|_| dice.normal()).collect();
        let mean = normals.iter().sum::<f64>() / n as f64;
        let var = normals.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        assert!(
            mean.abs() < 0.01 && (var - 1.0).abs() < 0.02,
            "{mean} {var}"
        );
    }
}
