//! The simulator's only source of chance: a seeded SplitMix64.

use ironward::SplitMix64;

/// A seeded SplitMix64 generator: every random draw in a simulation comes from one of these.
///
/// SplitMix64 (Steele, Lea and Flood, "Fast Splittable Pseudorandom Number Generators",
/// OOPSLA 2014) is fully specified by a few integer operations, so a seed gives the same
/// sequence on every platform and every build: that is what makes a run byte-identical.
/// Draws in `[0, 1)` take the top 53 bits; exponential deviates come from Marsaglia and
/// Tsang's ziggurat and log-normal ones from a table of the distribution's quantiles
/// (Wichura's AS 241 for the normal quantile), whose construction and rare slow paths use only IEEE arithmetic and the
/// pure-Rust `libm`, never the platform's maths library, whose last bit may differ between
/// systems.
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
    bits: SplitMix64,
}

impl Dice {
    /// A generator whose state starts at `seed`.
    pub fn new(seed: u64) -> Self {
        Self {
            bits: SplitMix64::new(seed),
        }
    }

    /// An independent stream for one use of chance, numbered `stream`, from the same seed.
    ///
    /// The stream's state is the seed mixed with the stream number through SplitMix64's
    /// finaliser, which puts distinct streams far apart in the sequence.
    pub fn fork(seed: u64, stream: u64) -> Self {
        let mix = SplitMix64::mix;
        Self::new(mix(seed ^ mix(stream.wrapping_mul(SplitMix64::GAMMA))))
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.bits.next_u64()
    }

    /// A draw from `[0, 1)`, in steps of 2⁻⁵³.
    #[inline]
    pub fn roll(&mut self) -> f64 {
        self.bits.roll()
    }

    /// An exponential deviate with the given mean: the gap between Poisson arrivals.
    ///
    /// Inlined where it is called, so that the draw that lands in the ziggurat's shadow
    /// (nearly all of them) is a word, two loads and a multiplication; the rest take the
    /// slow path, which goes on with the same stream.
    #[inline]
    pub(crate) fn exponential(&mut self, mean: f64) -> f64 {
        let z = tables();
        let (i, x) = z.draw(self.next_u64());
        if x < z.x[i + 1] {
            return mean * x;
        }
        self.exponential_beyond(mean, i, x)
    }

    /// The rest of [`exponential`](Dice::exponential), from a draw `x` in layer `i` that
    /// fell outside the shadow of the layer above.
    #[cold]
    fn exponential_beyond(&mut self, mean: f64, mut i: usize, mut x: f64) -> f64 {
        let z = tables();
        loop {
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
            (i, x) = z.draw(self.next_u64());
        }
    }
}

/// Layers in the ziggurat.
const LAYERS: usize = 256;

/// Marsaglia and Tsang's constants for a 256-layer exponential ziggurat ("The Ziggurat
/// Method for Generating Random Variables", Journal of Statistical Software 5, 2000): where
/// the tail starts, and the area of every layer.
const EXPONENTIAL_R: f64 = 7.697_117_470_131_487;
const EXPONENTIAL_V: f64 = 3.949_659_822_581_572e-3;

/// The layers of a ziggurat over a decreasing density `f`: layer `i` is the rectangle of
/// width `x[i]` between heights `f[i]` and `f[i + 1]`; layer 0 is the base, whose width
/// `v / f(r)` stands for the rectangle under `f(r)` and the tail beyond `r`.
///
/// Most draws land inside the curve's shadow (`x < x[i + 1]`) and cost one random word and
/// a multiplication, which is what makes the simulator's Poisson gaps cheap; the rest are
/// decided against the density itself.
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
    #[inline]
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

/// The exponential ziggurat, built once.
#[inline]
fn tables() -> &'static Ziggurat {
    static TABLE: std::sync::OnceLock<Ziggurat> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        Ziggurat::new(
            EXPONENTIAL_R,
            EXPONENTIAL_V,
            |x| libm::exp(-x),
            |y| -libm::log(y),
        )
    })
}

/// Bins of a [`LogNormal`] table, as a power of two: 1,024 bins of equal probability.
const BIN_BITS: u32 = 10;
const BINS: usize = 1 << BIN_BITS;

/// A log-normal distribution drawn through its inverse CDF: one random word a draw, and no
/// `exp`.
///
/// A log-normal deviate is `median · exp(σ·z)` for a standard normal `z`; drawn so, each
/// service time costs a normal deviate and an `exp`, which were a fifth of a run at ten
/// thousand calls a second. Instead the quantiles at the 1,023 inner edges of 1,024 bins of
/// equal probability are worked out once (Wichura's AS 241 for the normal quantile, then
/// `exp`), and a draw picks a bin with the word's top ten bits and a point across it with the
/// next 52, interpolating linearly between the bin's edges. So every bin keeps its exact
/// probability and the median is exact; within a bin the quantile function is replaced by
/// its chord, which moves a 99th percentile by well under a thousandth. The two outermost
/// bins, where the quantile function bends too fast for a chord, are drawn exactly, from the
/// same word: one draw in 512.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LogNormal {
    median: f64,
    sigma: f64,
    /// `edges[k]` is the quantile at `k / BINS`, for `k` from 1 to `BINS - 1`; the ends are
    /// unused.
    edges: Box<[f64]>,
}

impl LogNormal {
    /// The table for a median (any unit) and a σ of the logarithm.
    pub(crate) fn new(median: f64, sigma: f64) -> Self {
        let edges = (0..=BINS)
            .map(|k| match k {
                0 => 0.0,
                k if k == BINS => f64::INFINITY,
                k => median * libm::exp(sigma * probit(k as f64 / BINS as f64)),
            })
            .collect();
        Self {
            median,
            sigma,
            edges,
        }
    }

    /// One deviate.
    #[inline(always)]
    pub(crate) fn draw(&self, dice: &mut Dice) -> f64 {
        self.draw_word(dice.next_u64())
    }

    /// The deviate a random word stands for.
    #[inline(always)]
    fn draw_word(&self, bits: u64) -> f64 {
        let k = (bits >> (64 - BIN_BITS)) as usize;
        // The 52 bits after the bin's, as a fraction of the bin, never 0 or 1.
        let across = ((bits << BIN_BITS >> 12) as f64 + 0.5) / (1u64 << 52) as f64;
        if k == 0 {
            return self.median * libm::exp(self.sigma * probit(across / BINS as f64));
        }
        if k == BINS - 1 {
            // The upper tail by symmetry, from its own small probability, which keeps its
            // precision where `1 - p` would round to 0.
            let tail = (1.0 - across) / BINS as f64;
            return self.median * libm::exp(-self.sigma * probit(tail));
        }
        let (low, high) = (self.edges[k], self.edges[k + 1]);
        low + across * (high - low)
    }
}

/// The standard normal quantile: the `z` whose lower tail holds `p`, for `p` in `(0, 1)`
/// (NaN outside it). Wichura's AS 241, "The Percentage Points of the Normal Distribution"
/// (Applied Statistics 37, 1988), algorithm PPND16: rational approximations good to about
/// 1 part in 10¹⁶, in three ranges.
#[allow(
    clippy::excessive_precision,
    reason = "AS 241's coefficients as published, each read as the nearest f64"
)]
pub(crate) fn probit(p: f64) -> f64 {
    if !(p > 0.0 && p < 1.0) {
        return f64::NAN;
    }
    /// `c[0] + c[1]·x + … + c[7]·x⁷`.
    fn poly(c: &[f64; 8], x: f64) -> f64 {
        c.iter().rev().fold(0.0, |acc, &k| acc * x + k)
    }
    const A: [f64; 8] = [
        3.387_132_872_796_366_608,
        1.331_416_678_917_843_774_5e2,
        1.971_590_950_306_551_442_7e3,
        1.373_169_376_550_946_112_5e4,
        4.592_195_393_154_987_145_7e4,
        6.726_577_092_700_870_085_3e4,
        3.343_057_558_358_812_810_5e4,
        2.509_080_928_730_122_672_7e3,
    ];
    const B: [f64; 8] = [
        1.0,
        4.231_333_070_160_091_125_2e1,
        6.871_870_074_920_579_083e2,
        5.394_196_021_424_751_107_7e3,
        2.121_379_430_158_659_586_7e4,
        3.930_789_580_009_271_061e4,
        2.872_908_573_572_194_267_4e4,
        5.226_495_278_852_854_561e3,
    ];
    const C: [f64; 8] = [
        1.423_437_110_749_683_577_34,
        4.630_337_846_156_545_295_9,
        5.769_497_221_460_691_405_5,
        3.647_848_324_763_204_605_04,
        1.270_458_252_452_368_382_58,
        2.417_807_251_774_506_117_7e-1,
        2.272_384_498_926_918_458_33e-2,
        7.745_450_142_783_414_076_4e-4,
    ];
    const D: [f64; 8] = [
        1.0,
        2.053_191_626_637_758_821_87,
        1.676_384_830_183_803_849_4,
        6.897_673_349_851_000_045_5e-1,
        1.481_039_764_274_800_745_9e-1,
        1.519_866_656_361_645_719_66e-2,
        5.475_938_084_995_344_946e-4,
        1.050_750_071_644_416_843_24e-9,
    ];
    const E: [f64; 8] = [
        6.657_904_643_501_103_777_2,
        5.463_784_911_164_114_369_9,
        1.784_826_539_917_291_335_8,
        2.965_605_718_285_048_912_3e-1,
        2.653_218_952_657_612_309_3e-2,
        1.242_660_947_388_078_438_6e-3,
        2.711_555_568_743_487_578_15e-5,
        2.010_334_399_292_288_132_65e-7,
    ];
    const F: [f64; 8] = [
        1.0,
        5.998_322_065_558_879_376_9e-1,
        1.369_298_809_227_358_053_1e-1,
        1.487_536_129_085_061_485_25e-2,
        7.868_691_311_456_132_591e-4,
        1.846_318_317_510_054_681_8e-5,
        1.421_511_758_316_445_888_7e-7,
        2.044_263_103_389_939_785_64e-15,
    ];
    let q = p - 0.5;
    if q.abs() <= 0.425 {
        let r = 0.180_625 - q * q;
        return q * poly(&A, r) / poly(&B, r);
    }
    let r = libm::sqrt(-libm::log(if q < 0.0 { p } else { 1.0 - p }));
    let z = if r <= 5.0 {
        poly(&C, r - 1.6) / poly(&D, r - 1.6)
    } else {
        poly(&E, r - 5.0) / poly(&F, r - 5.0)
    };
    if q < 0.0 { -z } else { z }
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
    fn the_ziggurat_constants_close_the_table_at_the_peak() {
        let z = tables();
        assert!(z.x.windows(2).all(|w| w[0] > w[1]), "widths decrease");
        let top = EXPONENTIAL_V / z.x[LAYERS - 1] + z.f[LAYERS - 1];
        assert!((top - 1.0).abs() < 1e-9, "{top}");
    }

    // Reference quantiles of the standard normal, to 15 digits (Wichura 1988, table 2, and
    // the 99th percentile the backend's σ is worked out from).
    #[test]
    fn the_normal_quantile_matches_its_reference_values() {
        for (p, z) in [
            (0.5, 0.0),
            (0.975, 1.959_963_984_540_054),
            (0.99, 2.326_347_874_040_841),
            (0.25, -0.674_489_750_196_082),
            (0.001, -3.090_232_306_167_813),
            (1e-10, -6.361_340_902_404_056),
        ] {
            let got = probit(p);
            assert!((got - z).abs() <= 1e-14 * z.abs().max(1.0), "{p}: {got}");
        }
        // And the normal CDF, from libm's erfc, takes each quantile back to its probability,
        // far into the tails.
        for p in [
            1e-300,
            1e-50,
            1e-17,
            1e-5,
            0.03,
            0.2,
            0.5,
            0.8,
            0.97,
            1.0 - 1e-9,
        ] {
            let back = 0.5 * libm::erfc(-probit(p) / core::f64::consts::SQRT_2);
            assert!((back / p - 1.0).abs() < 1e-12, "{p}: {back}");
        }
        assert_eq!(probit(0.3), -probit(0.7));
        assert!(probit(0.0).is_nan() && probit(1.0).is_nan() && probit(f64::NAN).is_nan());
    }

    #[test]
    fn deviates_have_the_moments_they_should() {
        let mut dice = Dice::new(42);
        let n = 200_000;
        let mean_exp = (0..n).map(|_| dice.exponential(2.0)).sum::<f64>() / n as f64;
        assert!((mean_exp - 2.0).abs() < 0.03, "{mean_exp}");
        // The logarithm of a log-normal deviate over its σ is a standard normal.
        let (median, sigma) = (20.0, 0.6);
        let table = LogNormal::new(median, sigma);
        let normals: Vec<f64> = (0..n)
            .map(|_| libm::log(table.draw(&mut dice) / median) / sigma)
            .collect();
        let mean = normals.iter().sum::<f64>() / n as f64;
        let var = normals.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        assert!(
            mean.abs() < 0.01 && (var - 1.0).abs() < 0.02,
            "{mean} {var}"
        );
    }

    // The bin a word picks, and where in it: every bin's edges are the exact quantiles, so
    // each holds its probability exactly, whatever the chord does inside it.
    #[test]
    fn a_log_normal_draw_stays_between_its_bins_exact_quantiles() {
        let table = LogNormal::new(1.0, 0.5);
        let word = |bin: u64, across: u64| (bin << (64 - BIN_BITS)) | across;
        let quantile = |p: f64| libm::exp(0.5 * probit(p));
        for bin in [1, 100, 512, 1000, BINS as u64 - 2] {
            let p = bin as f64 / BINS as f64;
            let (low, high) = (quantile(p), quantile(p + 1.0 / BINS as f64));
            for across in [0, 1 << 30, (1 << 54) - 1] {
                let v = table.draw_word(word(bin, across));
                assert!(low <= v && v <= high, "{bin} {across}: {low} {v} {high}");
            }
        }
        let median = table.draw_word(word(512, 0));
        assert!(
            (median - 1.0).abs() < 1e-12,
            "the median is a bin edge: {median}"
        );
        let (first, last) = (table.draw_word(0), table.draw_word(u64::MAX));
        assert!(
            first > 0.0 && first < quantile(1.0 / BINS as f64),
            "{first}"
        );
        assert!(
            last.is_finite() && last > quantile(1.0 - 1.0 / BINS as f64),
            "{last}"
        );
    }
}
