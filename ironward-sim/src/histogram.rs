//! A fixed-size log-linear histogram of latencies, for percentiles without keeping samples.

/// Values below this are counted exactly.
const EXACT: u64 = 64;
/// Sub-buckets per power of two above `EXACT`: about 3 % relative precision.
const SUB_BITS: u32 = 5;
const SUB: u64 = 1 << SUB_BITS;
/// Buckets in all: the exact ones, then 32 for each power of two from 2⁶ to 2⁶³.
const BUCKETS: usize = EXACT as usize + (64 - 6) * SUB as usize;

/// Counts of values (microseconds here) in buckets whose width grows with the value, as
/// HdrHistogram does: the memory is fixed, so a run of any length keeps the same size.
#[derive(Debug, Clone)]
pub(crate) struct Histogram {
    counts: Box<[u64]>,
    total: u64,
    max: u64,
}

impl Histogram {
    pub(crate) fn new() -> Self {
        Self {
            counts: vec![0; BUCKETS].into_boxed_slice(),
            total: 0,
            max: 0,
        }
    }

    pub(crate) fn record(&mut self, value: u64) {
        self.counts[index(value)] += 1;
        self.total += 1;
        self.max = self.max.max(value);
    }

    /// Adds every value recorded in `other`.
    pub(crate) fn merge(&mut self, other: &Histogram) {
        if other.total == 0 {
            return;
        }
        for (mine, theirs) in self.counts.iter_mut().zip(other.counts.iter()) {
            *mine += theirs;
        }
        self.total += other.total;
        self.max = self.max.max(other.max);
    }

    pub(crate) fn clear(&mut self) {
        if self.total > 0 {
            self.counts.fill(0);
            self.total = 0;
            self.max = 0;
        }
    }

    /// How many values were recorded.
    pub(crate) fn total(&self) -> u64 {
        self.total
    }

    /// The largest value recorded, exactly.
    pub(crate) fn max(&self) -> u64 {
        self.max
    }

    /// The value at quantile `q` (0 to 1): the middle of its bucket, at most the maximum, and
    /// the maximum itself for the last rank; `None` when nothing was recorded.
    pub(crate) fn quantile(&self, q: f64) -> Option<u64> {
        if self.total == 0 {
            return None;
        }
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        if rank == self.total {
            return Some(self.max);
        }
        let mut seen = 0;
        for (i, &count) in self.counts.iter().enumerate() {
            seen += count;
            if seen >= rank {
                return Some(middle(i).min(self.max));
            }
        }
        Some(self.max)
    }
}

fn index(value: u64) -> usize {
    if value < EXACT {
        return value as usize;
    }
    let power = 63 - value.leading_zeros(); // at least 6
    let sub = (value >> (power - SUB_BITS)) & (SUB - 1);
    (EXACT + u64::from(power - 6) * SUB + sub) as usize
}

fn middle(i: usize) -> u64 {
    let i = i as u64;
    if i < EXACT {
        return i;
    }
    let power = (i - EXACT) / SUB + 6;
    let sub = (i - EXACT) % SUB;
    let width = 1u64 << (power - u64::from(SUB_BITS));
    let low = (SUB + sub) * width;
    low + width / 2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_values_are_exact_and_large_ones_within_three_percent() {
        let mut h = Histogram::new();
        for v in 0..64 {
            h.record(v);
        }
        assert_eq!(h.quantile(0.5), Some(31));
        for v in [100, 1_234, 98_765, 12_345_678, u64::MAX / 3] {
            let mid = middle(index(v));
            let error = (mid as f64 - v as f64).abs() / v as f64;
            assert!(error < 1.0 / 32.0, "{v} -> {mid}");
        }
        assert_eq!(index(u64::MAX), BUCKETS - 1);
    }

    #[test]
    fn quantiles_rank_what_was_recorded() {
        let mut h = Histogram::new();
        assert_eq!(h.quantile(0.99), None);
        for v in 1..=1000 {
            h.record(v * 1000);
        }
        let p50 = h.quantile(0.5).unwrap() as f64;
        let p99 = h.quantile(0.99).unwrap() as f64;
        assert!((p50 / 500_000.0 - 1.0).abs() < 0.03, "{p50}");
        assert!((p99 / 990_000.0 - 1.0).abs() < 0.03, "{p99}");
        assert_eq!(h.quantile(1.0), Some(1_000_000));
        let mut sum = Histogram::new();
        sum.merge(&h);
        sum.merge(&h);
        assert_eq!(
            (sum.total(), sum.quantile(0.5), sum.max()),
            (2000, h.quantile(0.5), 1_000_000)
        );
        h.clear();
        assert_eq!(h.total(), 0);
    }
}
