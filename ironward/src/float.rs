//! The few float helpers a `no_std` crate needs: `f64::round`, `ceil` and `powi` live in
//! `std` on stable, so the core carries its own, each exact for the values it is used on.

use core::time::Duration;

/// The largest `f64` below 1.
const BELOW_ONE: f64 = 1.0 - f64::EPSILON / 2.0;

/// A caller's draw clamped into `[0, 1)`: NaN and negatives are 0, 1 and above just below 1.
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
    if x.is_nan() || x <= 0.0 {
        return 0;
    }
    // `as` truncates and saturates; below 2^53 the truncated value is exact in f64, and
    // above it `x` is already whole.
    let whole = x as u128;
    if x - whole as f64 >= 0.5 {
        whole.saturating_add(1)
    } else {
        whole
    }
}

/// `x` rounded up to a whole number of nanoseconds; NaN and negatives are 0.
pub(crate) fn ceil_nanos(x: f64) -> u128 {
    if x.is_nan() || x <= 0.0 {
        return 0;
    }
    let whole = x as u128;
    if (whole as f64) < x {
        whole.saturating_add(1)
    } else {
        whole
    }
}

/// A count of nanoseconds as a `Duration`, saturating at `Duration::MAX`.
pub(crate) fn duration(nanos: u128) -> Duration {
    const PER_SEC: u128 = 1_000_000_000;
    let secs = nanos / PER_SEC;
    if secs > u64::MAX as u128 {
        Duration::MAX
    } else {
        Duration::new(secs as u64, (nanos % PER_SEC) as u32)
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
    fn durations_saturate() {
        assert_eq!(duration(1_500_000_000), Duration::from_millis(1500));
        assert_eq!(duration(u128::MAX), Duration::MAX);
        assert_eq!(duration(Duration::MAX.as_nanos()), Duration::MAX);
    }
}
