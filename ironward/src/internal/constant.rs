//! How the core reads a policy's float constants: one rule for every one of them.
//!
//! A constant outside its meaningful range is read as the nearest end of it, and NaN as the
//! end at which the constant does least (the one that refuses least). The guide states
//! the rule, under `_guide::edge_cases`, with each constant's range.

/// `x` held to `[low, high]`, NaN read as `nan`.
///
/// `low ≤ high` and neither is NaN (the callers pass constants), so `f64::clamp` cannot
/// panic here.
pub(crate) fn constant(x: f64, low: f64, high: f64, nan: f64) -> f64 {
    if x.is_nan() { nan } else { x.clamp(low, high) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_a_constant_to_its_range_and_reads_nan_as_given() {
        assert_eq!(constant(0.5, 0.0, 1.0, 1.0), 0.5);
        assert_eq!(constant(-3.0, 0.0, 1.0, 1.0), 0.0);
        assert_eq!(constant(f64::NEG_INFINITY, 0.0, 1.0, 1.0), 0.0);
        assert_eq!(constant(f64::INFINITY, 0.0, 1.0, 1.0), 1.0);
        assert_eq!(constant(f64::NAN, 0.0, 1.0, 1.0), 1.0);
        assert_eq!(
            constant(f64::NAN, 0.0, f64::INFINITY, f64::INFINITY),
            f64::INFINITY
        );
        assert_eq!(
            constant(f64::INFINITY, 0.0, f64::INFINITY, 0.0),
            f64::INFINITY
        );
    }
}
