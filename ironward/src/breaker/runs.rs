//! The failing and working runs at the newest end of a breaker's window, kept as outcomes
//! are counted and buckets clear, so that a refusing breaker needs no scan of the window.

use crate::window::{Outcome, Tally};

/// The runs at the newest end of the window, kept as outcomes are counted and buckets clear.
///
/// A bucket holding a success ends the failing run, one holding a failure ends the working
/// run, and one holding neither (empty, or drops only) changes neither, as in the scan of
/// [`SreBreaker::history`](super::SreBreaker::history). The run of failure-only buckets is
/// therefore every failure-only bucket newer than the newest bucket holding a success, or all
/// of them when none does; the bucket that clears is always the oldest, so it leaves the run
/// exactly when no bucket holds a success.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Runs {
    pub(super) failing: usize,
    pub(super) working: usize,
    /// Buckets in the window holding at least one success.
    pub(super) succeeded: usize,
    /// Buckets in the window holding at least one failure.
    pub(super) failed: usize,
}

impl Runs {
    /// The runs of a window whose only bucket holding anything is `bucket`.
    pub(super) fn of(bucket: &Tally) -> Self {
        let (succeeded, failed) = (bucket.success > 0, bucket.failure > 0);
        Self {
            failing: usize::from(failed && !succeeded),
            working: usize::from(succeeded && !failed),
            succeeded: usize::from(succeeded),
            failed: usize::from(failed),
        }
    }

    /// `bucket`, the newest, is about to count `outcome`.
    pub(super) fn count(&mut self, bucket: &Tally, outcome: Outcome) {
        match outcome {
            Outcome::Success => {
                if bucket.success == 0 {
                    self.succeeded += 1;
                    if bucket.failure == 0 {
                        self.working += 1;
                    }
                }
                self.failing = 0;
            }
            Outcome::Failure => {
                if bucket.failure == 0 {
                    self.failed += 1;
                    if bucket.success == 0 {
                        self.failing += 1;
                    }
                }
                self.working = 0;
            }
            Outcome::Drop => {}
        }
    }

    /// `bucket`, the oldest, leaves the window.
    pub(super) fn clear(&mut self, bucket: &Tally) {
        if bucket.success > 0 {
            self.succeeded -= 1;
        }
        if bucket.failure > 0 {
            self.failed -= 1;
        }
        if bucket.failure > 0 && bucket.success == 0 && self.succeeded == 0 {
            self.failing -= 1;
        }
        if bucket.success > 0 && bucket.failure == 0 && self.failed == 0 {
            self.working -= 1;
        }
    }
}
