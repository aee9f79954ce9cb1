//! [`Group`]: the local fallback of one key of a [`Limits`](crate::Limits), a core limiter
//! per limit at the store's share, decided as the core's `Limits` decides them.

use std::time::Duration;

use ironward::LimitsReason;
use ironward_tokio::Quota;

use crate::local::{self, Fallback};
use crate::{Answer, Source};

/// What a decision of several limits answers: admitted, or why not.
pub(crate) type Decision = Result<(), LimitsReason>;

/// The core's `Limits::peek` rule over waits: the first limit that waits longest, or `Ok`
/// when none waits.
pub(crate) fn longest(waits: impl IntoIterator<Item = Duration>) -> Decision {
    let mut longest = LimitsReason {
        index: 0,
        next: Duration::ZERO,
    };
    for (index, next) in waits.into_iter().enumerate() {
        if next > longest.next {
            longest = LimitsReason { index, next };
        }
    }
    if longest.next.is_zero() {
        Ok(())
    } else {
        Err(longest)
    }
}

/// Whether `n` is a cost a bucket can charge: finite and not negative.
pub(crate) fn is_cost(n: f64) -> bool {
    n.is_finite() && n >= 0.0
}

/// A log's or a period's cost: a whole number of units from 0 to `u32::MAX`, or `None` for
/// any other number, which no quota admits.
pub(crate) fn units(cost: f64) -> Option<u32> {
    // NaN fails both comparisons.
    (cost >= 0.0 && cost <= f64::from(u32::MAX) && cost.fract() == 0.0).then_some(cost as u32)
}

/// One limit of a fallback group: a core limiter at the store's share, or none where the
/// share comes to less than the least a core limiter holds.
#[derive(Clone)]
enum Member {
    Bucket(ironward::Bucket),
    Sliding(ironward::Sliding),
    Period(ironward::Period),
    /// A share below one unit (one token, for a bucket): every cost is refused, as the
    /// single limiter's fallback refuses it, `next` the probe interval (when Redis may
    /// answer again); a bucket's cost of 0 still passes, and one that is no cost never.
    Below {
        bucket: bool,
    },
}

impl Member {
    /// `limit` (as the core reads it) at `share` of its quota, or of its rate and burst.
    ///
    /// A bucket starts full with its clock at zero, so that it reads no clock before its
    /// first admission, as the script's bucket, which has no state until then.
    fn new(limit: &Quota, share: f64) -> Self {
        match *limit {
            Quota::Bucket { rate, burst } => {
                let (rate, burst) = (rate * share, burst * share);
                // NaN (an infinite burst at a share of 0) is below one token too.
                if burst >= 1.0 {
                    Member::Bucket(ironward::Bucket::new(rate, burst, Duration::ZERO))
                } else {
                    Member::Below { bucket: true }
                }
            }
            Quota::Sliding { quota, window } => match shared(quota, share) {
                Some(quota) => Member::Sliding(ironward::Sliding::new(quota, window)),
                None => Member::Below { bucket: false },
            },
            Quota::Period {
                quota,
                period,
                align,
            } => match shared(quota, share) {
                Some(quota) if align => Member::Period(ironward::Period::aligned(quota, period)),
                Some(quota) => Member::Period(ironward::Period::new(quota, period)),
                None => Member::Below { bucket: false },
            },
        }
    }

    /// The core's `Limit::next` of `cost` at `now` (the `next` of a bucket, the `next_n`
    /// of a log or a period), counted from `now` where the member has seen `latest`; the
    /// probe interval for a member below one unit.
    fn wait(&self, now: Duration, cost: f64, latest: Duration, probe: Duration) -> Duration {
        let wait = match self {
            Member::Bucket(bucket) => bucket.next(now, cost),
            Member::Sliding(log) => units(cost).map_or(Duration::MAX, |n| log.next_n(now, n)),
            Member::Period(period) => units(cost).map_or(Duration::MAX, |n| period.next_n(now, n)),
            Member::Below { bucket: true } if cost == 0.0 => Duration::ZERO,
            Member::Below { bucket: true } if !is_cost(cost) => Duration::MAX,
            Member::Below { .. } => return probe,
        };
        local::from_now(wait, latest, now)
    }

    /// Takes `cost` at `now`, once every member's wait has said it fits: the core's own
    /// cost method, as the core's `Limits` takes it.
    fn take(&mut self, now: Duration, cost: f64) {
        let units = units(cost).unwrap_or(0);
        let taken = match self {
            Member::Bucket(bucket) => bucket.take(now, cost),
            Member::Sliding(log) => log.take_n(now, units),
            Member::Period(period) => period.check_n(now, units).is_ok(),
            Member::Below { .. } => true,
        };
        debug_assert!(taken, "a limit refused what its wait admitted");
    }

    fn idle(&self) -> Duration {
        match self {
            Member::Bucket(bucket) => bucket.idle(),
            Member::Sliding(log) => log.idle(),
            Member::Period(period) => period.idle(),
            Member::Below { .. } => Duration::ZERO,
        }
    }
}

/// `share` of `quota`, rounded down, or `None` when that refuses every event of a quota
/// above 0.
fn shared(quota: u32, share: f64) -> Option<u32> {
    // The product is below 2^32, and `as` truncates towards zero.
    let local = (f64::from(quota) * share) as u32;
    (local > 0 || quota == 0).then_some(local)
}

/// The fallback of one key: a core limiter per limit, and the latest reading they were
/// charged at. Every limiter is charged at once or none is, so they have all seen that
/// reading, as core limiters under one `Limits` have.
#[derive(Clone)]
pub(crate) struct Group {
    members: Vec<Member>,
    latest: Duration,
    /// The store's probe interval: the wait of a member below one unit.
    probe: Duration,
}

impl Fallback for Group {
    fn idle(&self) -> Duration {
        self.members
            .iter()
            .map(Member::idle)
            .max()
            .unwrap_or(Duration::ZERO)
    }
}

impl Group {
    /// A fresh group for `limits` (as the core reads them) at `share`, refusing for `probe`
    /// where a share is below one unit. It has seen no reading: a refusal moves no clock.
    pub(crate) fn new(limits: &[Quota], share: f64, probe: Duration) -> Self {
        Self {
            members: limits
                .iter()
                .map(|limit| Member::new(limit, share))
                .collect(),
            latest: Duration::ZERO,
            probe,
        }
    }

    /// The core's `Limits::peek` at `now`, each wait counted from `now`.
    pub(crate) fn peek(&self, now: Duration, costs: &[f64]) -> Decision {
        longest(
            self.members
                .iter()
                .zip(costs)
                .map(|(member, &cost)| member.wait(now, cost, self.latest, self.probe)),
        )
    }

    /// The core's `Limits::check` at `now`, and its `peek` after.
    pub(crate) fn take(&mut self, now: Duration, costs: &[f64]) -> Answer<Decision> {
        let value = self.peek(now, costs);
        if value.is_ok() {
            for (member, &cost) in self.members.iter_mut().zip(costs) {
                member.take(now, cost);
            }
            self.latest = self.latest.max(now);
        }
        let next = self
            .peek(now, costs)
            .err()
            .map_or(Duration::ZERO, |reason| reason.next);
        Answer {
            value,
            next,
            source: Source::Local,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_are_whole_numbers_a_u32_holds() {
        assert_eq!(units(0.0), Some(0));
        assert_eq!(units(-0.0), Some(0));
        assert_eq!(units(4_000.0), Some(4_000));
        assert_eq!(units(f64::from(u32::MAX)), Some(u32::MAX));
        for none in [0.5, -1.0, 4_294_967_296.0, f64::NAN, f64::INFINITY] {
            assert_eq!(units(none), None, "{none}");
        }
    }

    #[test]
    fn a_share_below_one_unit_refuses_as_the_single_limiter_does() {
        let probe = Duration::from_millis(100);
        let secs = Duration::from_secs;
        let limits = [Quota::bucket(1.0, 1.0), Quota::sliding(1, secs(60))];
        let group = Group::new(&limits, 0.5, probe);
        let never = LimitsReason {
            index: 0,
            next: Duration::MAX,
        };
        assert_eq!(
            group.peek(secs(0), &[0.0, 0.0]),
            Err(LimitsReason {
                index: 1,
                next: probe
            })
        );
        assert_eq!(group.peek(secs(0), &[f64::NAN, 0.0]), Err(never));
        // With the whole quota, the same limits admit.
        let group = Group::new(&limits, 1.0, probe);
        assert_eq!(group.peek(secs(0), &[1.0, 1.0]), Ok(()));
    }
}
