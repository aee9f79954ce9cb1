//! The few float helpers a `no_std` crate needs: `f64::round`, `ceil`, `powi` and `sqrt`
//! live in `std` on stable, so the core carries its own, each exact for the values it is used
//! on.

use core::time::Duration;

/// The largest `f64` below 1.
const BELOW_ONE: f64 = 1.0 - f64::EPSILON / 2.0;

/// A caller's draw clamped into `[0, 1)`: NaN and negatives are 0, 1 and above just below 1.
#[inline]
pub(crate) fn unit(draw: f64) -> f64 {
    if draw >= BELOW_ONE {
        BELOW_ONE
    } else if draw > 0.0 {
        draw
    } else {
        0.0
    }
}

/// `x` raised to `n` by repeated squaring (`f64::powi` is not in `core`).
pub(crate) fn powi(mut x: f64, mut n: u32) -> f64 {
    let mut acc = 1.0;
    while n > 0 {
        if n & 1 == 1 {
            acc *= x;
        }
        x *= x;
        n >>= 1;
    }
    acc
}

/// `x` rounded half away from zero to a whole number of nanoseconds; NaN and negatives are 0,
/// values past `u128::MAX` saturate.
pub(crate) fn round_nanos(x: f64) -> u128 {
    // Up to 2^52, `x + 0.5` is exact or rounds without crossing a whole number, so truncating
    // it rounds half up: one addition and one conversion, the shortest chain on a backoff's
    // path. From 2^52 `x` is already whole (and the sum could round to the next even number).
    // Below 0.5, NaN included, the answer is 0: tested first, as one comparison, because
    // there the sum could round up to 1.
    if x >= 0.5 {
        if x < TWO_52 {
            (x + 0.5) as i64 as u128
        } else if x < TWO_63 {
            // Through `i64`, which x86-64 and AArch64 convert in one instruction.
            x as i64 as u128
        } else {
            wide_whole(x)
        }
    } else {
        0
    }
}

/// `x` as a `u128`, saturating, for `x` of 2^63 or more, where every `f64` is whole: what
/// both rounding helpers answer there. Out of line: the `u128` conversion is a library call
/// that the common paths never make.
#[cold]
#[inline(never)]
fn wide_whole(x: f64) -> u128 {
    x as u128
}

/// `x` rounded up to a whole number of nanoseconds; NaN and negatives are 0.
pub(crate) fn ceil_nanos(x: f64) -> u128 {
    if x.is_nan() || x <= 0.0 {
        return 0;
    }
    if x < TWO_63 {
        let whole = x as i64;
        return (whole + i64::from((whole as f64) < x)) as u128;
    }
    // Already whole, like every float from 2^52: rounding up leaves it as it is.
    wide_whole(x)
}

/// 2^52, from which every `f64` is a whole number.
const TWO_52: f64 = 4_503_599_627_370_496.0;

/// 2^63, the first float whose truncation does not fit an `i64`.
const TWO_63: f64 = 9_223_372_036_854_775_808.0;

/// A count of nanoseconds as a float: `n as f64`, converted through `i64` when the count fits
/// one (the same integer, so the same rounding) to avoid the `u128` conversion's library call.
#[inline]
pub(crate) fn whole_f64(n: u128) -> f64 {
    if n >> 63 == 0 {
        n as i64 as f64
    } else {
        wide_f64(n)
    }
}

/// `n as f64` for counts past `i64::MAX`, kept out of line: inlined, the optimiser merges it
/// with the `i64` path of [`whole_f64`] into one library call for every count.
#[cold]
#[inline(never)]
fn wide_f64(n: u128) -> f64 {
    n as f64
}

/// The square root of `x` by Newton's method (`f64::sqrt` is not in `core`): within an ulp of
/// the correctly rounded root for every positive finite `x`; 0 and infinity are their own
/// roots, NaN and negatives give NaN.
pub(crate) fn sqrt(x: f64) -> f64 {
    if x.is_nan() || x < 0.0 {
        return f64::NAN;
    }
    if x == 0.0 || x.is_infinite() {
        return x;
    }
    // Halving the biased exponent lands within a factor of two of the root; each step then
    // doubles the digits, and one that no longer moves the root has found it (or, alternating
    // between two neighbours, is within an ulp of it).
    let mut root = f64::from_bits((x.to_bits() >> 1) + (1023 << 51));
    for _ in 0..64 {
        let next = 0.5 * (root + x / root);
        if next == root {
            break;
        }
        root = next;
    }
    root
}

/// The nanoseconds in `d` as a float: `d.as_nanos() as f64`, through [`whole_f64`].
pub(crate) fn nanos_f64(d: Duration) -> f64 {
    whole_f64(d.as_nanos())
}

/// A count of nanoseconds as a `Duration`, saturating at `Duration::MAX`.
pub(crate) fn duration(nanos: u128) -> Duration {
    // `Duration::from_nanos` when the count fits a `u64`: a `u128` division is a library call
    // several times slower.
    match u64::try_from(nanos) {
        Ok(n) => Duration::from_nanos(n),
        Err(_) => wide_duration(nanos),
    }
}

/// [`duration`] for counts past `u64::MAX`, out of line to keep the `u128` division off the
/// common path.
#[cold]
#[inline(never)]
fn wide_duration(nanos: u128) -> Duration {
    const PER_SEC: u128 = 1_000_000_000;
    match u64::try_from(nanos / PER_SEC) {
        Ok(secs) => Duration::new(secs, (nanos % PER_SEC) as u32),
        Err(_) => Duration::MAX,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_are_clamped_into_the_unit_interval() {
        assert_eq!(unit(f64::NAN), 0.0);
        assert_eq!(unit(-0.5), 0.0);
        assert_eq!(unit(f64::NEG_INFINITY), 0.0);
        assert_eq!(unit(0.25), 0.25);
        assert!(unit(1.0) < 1.0);
        assert!(unit(f64::INFINITY) < 1.0);
        assert_eq!(unit(1.0), 0.9999999999999999);
    }

    #[test]
    fn square_roots_are_within_an_ulp() {
        for (x, root) in [
            (4.0, 2.0),
            (1.0, 1.0),
            (0.25, 0.5),
            (1e300, 1e150),
            (9e-300, 3e-150),
        ] {
            assert_eq!(sqrt(x), root, "{x}");
        }
        for x in [2.0, 3.0, 0.1, 12345.678, 5e-324, f64::MAX, 1e-310] {
            let root = sqrt(x);
            let ulp = f64::from_bits(root.to_bits() + 1) - root;
            // `x / root` is `root` again, give or take the rounding of the division.
            assert!((x / root - root).abs() <= 2.0 * ulp, "{x}: {root}");
        }
        assert_eq!(sqrt(0.0), 0.0);
        assert_eq!(sqrt(f64::INFINITY), f64::INFINITY);
        assert!(sqrt(-1.0).is_nan());
        assert!(sqrt(f64::NAN).is_nan());
    }

    #[test]
    fn powi_matches_repeated_multiplication() {
        assert_eq!(powi(2.0, 0), 1.0);
        assert_eq!(powi(2.0, 10), 1024.0);
        assert_eq!(powi(1.5, 3), 3.375);
        assert_eq!(powi(0.5, 2), 0.25);
        assert_eq!(powi(2.0, 2000), f64::INFINITY);
        assert_eq!(powi(1.0, u32::MAX), 1.0);
    }

    #[test]
    fn rounding_is_to_the_nearest_nanosecond() {
        assert_eq!(round_nanos(1.4), 1);
        assert_eq!(round_nanos(1.5), 2);
        assert_eq!(round_nanos(2.5), 3);
        assert_eq!(round_nanos(0.49), 0);
        assert_eq!(round_nanos(-3.0), 0);
        assert_eq!(round_nanos(f64::NAN), 0);
        assert_eq!(round_nanos(f64::INFINITY), u128::MAX);
        assert_eq!(round_nanos(9_007_199_254_740_993.0), 9_007_199_254_740_992);
    }

    #[test]
    fn ceiling_rounds_any_fraction_up() {
        assert_eq!(ceil_nanos(1.0), 1);
        assert_eq!(ceil_nanos(1.000001), 2);
        assert_eq!(ceil_nanos(0.0), 0);
        assert_eq!(ceil_nanos(f64::NAN), 0);
        assert_eq!(ceil_nanos(333_333_333.3), 333_333_334);
    }

    #[test]
    fn the_i64_fast_paths_agree_with_u128() {
        let slow_round = |x: f64| {
            let whole = x as u128;
            if x - whole as f64 >= 0.5 {
                whole.saturating_add(1)
            } else {
                whole
            }
        };
        let slow_ceil = |x: f64| {
            let whole = x as u128;
            if (whole as f64) < x {
                whole.saturating_add(1)
            } else {
                whole
            }
        };
        for x in [
            0.25,
            0.49999999999999994,
            0.5,
            0.5000000000000001,
            1.4999999999999998,
            4_503_599_627_370_495.5,
            4_503_599_627_370_497.0,
            1.0,
            2.5,
            2.4999999999999996,
            123_456_789.5,
            9_007_199_254_740_993.0,
            TWO_63 - 1024.0,
            TWO_63,
            TWO_63 * 2.0 - 4096.0,
            TWO_63 * 2.0,
            TWO_63 * 4.0,
            f64::MAX,
            f64::INFINITY,
        ] {
            assert_eq!(round_nanos(x), slow_round(x), "{x}");
            assert_eq!(ceil_nanos(x), slow_ceil(x), "{x}");
        }
        for d in [
            Duration::ZERO,
            Duration::new(1, 1),
            Duration::new(9_223_372_036, 854_775_807),
            Duration::new(9_223_372_036, 854_775_808),
            Duration::new(9_007_199, 254_740_993),
            Duration::new(18_446_744_072, 999_999_999),
            Duration::new(18_446_744_073, 709_551_615),
            Duration::new(18_446_744_073, 709_551_616),
            Duration::MAX,
        ] {
            assert_eq!(
                nanos_f64(d).to_bits(),
                (d.as_nanos() as f64).to_bits(),
                "{d:?}"
            );
        }
        for n in [0, 1, u128::from(u64::MAX), u128::from(u64::MAX) + 1] {
            assert_eq!(
                duration(n),
                Duration::new((n / 1_000_000_000) as u64, (n % 1_000_000_000) as u32)
            );
        }
    }

    #[test]
    fn durations_saturate() {
        assert_eq!(duration(1_500_000_000), Duration::from_millis(1500));
        assert_eq!(duration(u128::MAX), Duration::MAX);
        assert_eq!(duration(Duration::MAX.as_nanos()), Duration::MAX);
    }
}
