//! [`percentile`]: which of a set of latencies a percentile reads, the one rule for every
//! piece that reads one (the limit's [`Sampler`](crate::limit::Sampler) and the hedging
//! delay's [`Tail`](crate::latency::Tail)).

use super::float::round_nanos;

/// The `p`-th percentile of `kept` (`0.95` is the 95th): the `⌊p × n⌉`-th fastest of the `n`
/// (rounded half up), at least the first and at most the last; `None` when `kept` is empty.
///
/// This is Netflix concurrency-limits' `PercentileSampleWindow` (`Math.round(n * p) - 1`,
/// held to the array). `p` is held to `[0, 1]`, NaN read as 0 (the fastest). `kept` is
/// reordered: the answer is selected in linear time (`select_nth_unstable`), not sorted.
pub(crate) fn percentile(kept: &mut [u64], p: f64) -> Option<u64> {
    let last = kept.len().checked_sub(1)?;
    let p = if p.is_nan() { 0.0 } else { p.clamp(0.0, 1.0) };
    // `usize` to `f64` is exact for any slice a machine holds below 2^53 elements.
    let rank = round_nanos(kept.len() as f64 * p);
    let index = usize::try_from(rank.saturating_sub(1))
        .unwrap_or(usize::MAX)
        .min(last);
    Some(*kept.select_nth_unstable(index).1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;
    use proptest::prelude::*;

    #[test]
    fn reads_the_rounded_rank() {
        let mut twenty: Vec<u64> = (1..=20).rev().collect();
        assert_eq!(percentile(&mut twenty, 0.95), Some(19));
        assert_eq!(percentile(&mut twenty, 0.5), Some(10));
        assert_eq!(percentile(&mut twenty, 1.0), Some(20));
        assert_eq!(percentile(&mut twenty, 0.0), Some(1));
        // 5 × 0.5 = 2.5 rounds half up to the third.
        assert_eq!(percentile(&mut [5, 1, 4, 2, 3], 0.5), Some(3));
    }

    #[test]
    fn bad_percentiles_are_held_and_nothing_kept_reads_none() {
        assert_eq!(percentile(&mut [], 0.5), None);
        assert_eq!(percentile(&mut [3, 1, 2], f64::NAN), Some(1));
        assert_eq!(percentile(&mut [3, 1, 2], -4.0), Some(1));
        assert_eq!(percentile(&mut [3, 1, 2], f64::INFINITY), Some(3));
        assert_eq!(percentile(&mut [3, 1, 2], f64::NEG_INFINITY), Some(1));
    }

    proptest! {
        // Against a sort: the same element as the sorted array's rounded rank.
        #[test]
        fn is_the_sorted_rank(mut kept in prop::collection::vec(any::<u64>(), 1..200), p in 0.0..=1.0f64) {
            let mut sorted = kept.clone();
            sorted.sort_unstable();
            let rank = (kept.len() as f64 * p + 0.5) as usize;
            let expected = sorted[rank.saturating_sub(1).min(sorted.len() - 1)];
            prop_assert_eq!(percentile(&mut kept, p), Some(expected));
        }

        // A higher percentile never reads a faster latency.
        #[test]
        fn is_monotone_in_p(kept in prop::collection::vec(any::<u64>(), 1..100), a in 0.0..=1.0f64, b in 0.0..=1.0f64) {
            let (low, high) = if a <= b { (a, b) } else { (b, a) };
            let at_low = percentile(&mut kept.clone(), low);
            let at_high = percentile(&mut kept.clone(), high);
            prop_assert!(at_low <= at_high);
        }
    }
}
