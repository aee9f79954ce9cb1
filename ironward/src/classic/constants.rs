//! A classic policy's numbers as the breaker reads them, worked out once per policy.

use super::policy::Classic;
use crate::clock::nanos;
use crate::internal::constant::constant;

/// What every decision reads of the [`Classic`] policy, read once when the breaker is given a
/// policy (at `new` and `retune`) instead of on every call: a healthy call reads the rates,
/// the minimum and the slow threshold, and working them out costs more than the rest of its
/// decision.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Constants {
    /// The failure and slow rates as the policy's docs read them: above 1 as 1, 0 or below as
    /// the least above 0, NaN as infinity (no share reaches it). Never NaN and never 0, so
    /// a share of 0 never reaches one.
    pub(super) rates: (f64, f64),
    /// The calls the record must hold before its shares are read: at most a count record's
    /// size, at least 1.
    pub(super) minimum: u64,
    /// `slow_call` in nanoseconds.
    pub(super) slow: u64,
    /// `lease` in nanoseconds.
    pub(super) lease: u64,
    /// How long each progressive stage lasts, in nanoseconds.
    pub(super) hold: u64,
    /// The probes half-open: at least 1.
    pub(super) probes: u32,
}

impl Constants {
    /// `policy` as read by a breaker whose record holds at most `capacity` calls.
    pub(super) fn read(policy: &Classic, capacity: u64) -> Self {
        let rate = |r| constant(r, 0.0, 1.0, f64::INFINITY).max(f64::MIN_POSITIVE);
        Self {
            rates: (rate(policy.failure_rate), rate(policy.slow_rate)),
            minimum: u64::from(policy.minimum).min(capacity).max(1),
            slow: nanos(policy.slow_call),
            lease: nanos(policy.lease),
            hold: nanos(policy.half_open.hold()),
            probes: policy.probes.max(1),
        }
    }
}
