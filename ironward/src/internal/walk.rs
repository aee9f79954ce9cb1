//! A reproducible random walk of the clock, for the unit tests that check what a piece keeps
//! against a scan of its window.

/// Millisecond steps from nothing to past a whole window, mostly within a bucket, drawn by a
/// xorshift generator from a fixed seed, so that every run walks the same way.
#[derive(Debug)]
pub(crate) struct Walk {
    x: u64,
    now: u64,
}

impl Walk {
    pub(crate) fn new() -> Self {
        Self {
            x: 0x2545_f491_4f6c_dd1d,
            now: 0,
        }
    }

    /// The next step: the clock's reading in milliseconds, and the 64 random bits that moved
    /// it, for the caller to draw its other choices from.
    pub(crate) fn step(&mut self) -> (u64, u64) {
        let x = &mut self.x;
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        self.now += [0, 1, 5, 40, 300, 2_000, 11_000][(*x % 7) as usize] * (*x >> 60);
        (self.now, *x)
    }
}
