//! [`Global`]: the one budget of a layer without keys, shared by every request without a lock
//! where the core has a form that needs none.

use std::sync::{Mutex, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use ironward::{QuotaReason, SharedBucket, SharedPeriod};

use super::budget::{Budget, Terms};
use super::error::Said;
use super::http::Stamp;
use super::{KindMismatch, Limited, Quota};
use crate::lock::lock;

/// The budget every request of a layer without keys takes from.
///
/// A token bucket is the core's [`SharedBucket`] and a fixed period its [`SharedPeriod`]: a
/// take is one compare-and-swap, a refusal one load, so the tasks of every core decide at
/// once instead of taking turns, and a refusal does not read the terms (a bucket's reason
/// holds its burst and rate, a period's its quota, and the period is the limiter's own),
/// which are the policy a refusal reports. The terms are read only when an admission's
/// headroom is sent and by the tuner, behind a `RwLock` that a retune alone writes. A sliding
/// window keeps a log, which no atomic word holds: it stays a core limiter behind a `Mutex`,
/// locked for one take, together with its terms.
#[derive(Debug)]
pub(super) enum Global {
    Bucket {
        bucket: SharedBucket,
        terms: RwLock<Terms>,
    },
    Period {
        period: SharedPeriod,
        terms: RwLock<Terms>,
    },
    Locked(Mutex<Budget>),
}

impl Global {
    /// A fresh budget under `terms`, its clock at `now`.
    pub(super) fn new(terms: Terms, now: Duration) -> Self {
        match terms.limit {
            Quota::Bucket { rate, burst } => Self::Bucket {
                bucket: SharedBucket::new(rate, burst, now),
                terms: RwLock::new(terms),
            },
            Quota::Period {
                quota,
                period,
                align,
            } => Self::Period {
                period: if align {
                    SharedPeriod::aligned(quota, period)
                } else {
                    SharedPeriod::new(quota, period)
                },
                terms: RwLock::new(terms),
            },
            Quota::Sliding { .. } => Self::Locked(Mutex::new(Budget::new(terms, now))),
        }
    }

    /// Takes one request at `now`, reading what it left when `headroom` is asked for; or
    /// refuses it under the policy named `policy`.
    ///
    /// A bucket's refusal is its reason, the wait and the policy's numbers worked out from it
    /// when asked; its headroom is the tokens its own swap left, whole, and the time until it
    /// is full again.
    #[inline]
    pub(super) fn take(
        &self,
        now: Duration,
        headroom: bool,
        policy: &'static str,
    ) -> Result<Option<Stamp>, Limited> {
        match self {
            Self::Bucket { bucket, terms } => {
                let refused = |reason| Limited::of(Said::Bucket(reason), policy);
                if !headroom {
                    return bucket.check(now, 1.0).map(|()| None).map_err(refused);
                }
                let left = bucket.check_left(now, 1.0).map_err(refused)?;
                // `as` saturates: an infinite hold is `u64::MAX` whole tokens.
                let left = (left.floor() as u64, bucket.next(now, bucket.burst()));
                Ok(Some(read(terms).stamp(left)))
            }
            Self::Period { period, terms } => {
                let refused = |reason: QuotaReason| {
                    let said = Said::Known {
                        wait: reason.next,
                        quota: u64::from(reason.quota),
                        window: Some(period.period()),
                    };
                    Limited::of(said, policy)
                };
                if !headroom {
                    return period.check(now).map(|_| None).map_err(refused);
                }
                let left = period.check_left(now).map_err(refused)?;
                Ok(Some(read(terms).stamp((u64::from(left.left), left.reset))))
            }
            Self::Locked(budget) => lock(budget).take(now, headroom),
        }
    }

    /// The terms in force.
    pub(super) fn terms(&self) -> Terms {
        match self {
            Self::Bucket { terms, .. } | Self::Period { terms, .. } => read(terms).clone(),
            Self::Locked(budget) => lock(budget).terms().clone(),
        }
    }

    /// Moves the budget to `limit` at `now`, keeping its history, and answers the limit it
    /// replaced; or refuses a limit of another kind, changing nothing.
    pub(super) fn retune(&self, limit: Quota, now: Duration) -> Result<Quota, KindMismatch> {
        match self {
            Self::Bucket { bucket, terms } => {
                let mut terms = write(terms);
                let retuned = terms.retuned(limit)?;
                if let Quota::Bucket { rate, burst } = limit {
                    bucket.retune(rate, burst, now);
                }
                Ok(std::mem::replace(&mut *terms, retuned).limit)
            }
            Self::Period { period, terms } => {
                let mut terms = write(terms);
                let retuned = terms.retuned(limit)?;
                if let Quota::Period {
                    quota,
                    period: span,
                    ..
                } = limit
                {
                    period.retune(quota, span, now);
                }
                Ok(std::mem::replace(&mut *terms, retuned).limit)
            }
            Self::Locked(budget) => {
                let mut budget = lock(budget);
                let terms = budget.terms().retuned(limit)?;
                let was = budget.terms().limit;
                budget.retune(terms, now);
                Ok(was)
            }
        }
    }
}

/// Reads the terms; a poisoned lock still holds sound terms, since nothing panics while it
/// is held.
fn read(terms: &RwLock<Terms>) -> RwLockReadGuard<'_, Terms> {
    terms.read().unwrap_or_else(PoisonError::into_inner)
}

/// Writes the terms, for a retune, passing over poison as [`read`] does.
fn write(terms: &RwLock<Terms>) -> RwLockWriteGuard<'_, Terms> {
    terms.write().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a take answered, as plain numbers: the headroom's, or the refusal's.
    fn said(taken: Result<Option<Stamp>, Limited>) -> Result<Option<(u64, Duration)>, String> {
        taken
            .map(|stamp| stamp.map(|s| (s.headroom.remaining(), s.headroom.reset())))
            .map_err(|limited| limited.to_string())
    }

    // The lock-free budgets answer as the locked core limiter does, headroom, refusals (their
    // wait, quota and window) and retunes included, on one thread.
    #[test]
    fn each_global_budget_answers_as_the_locked_limiter() {
        let ms = Duration::from_millis;
        for (limit, retuned) in [
            (Quota::bucket(4.0, 3.0), Quota::bucket(2.0, 1.0)),
            (Quota::period(3, ms(1000)), Quota::period(1, ms(500))),
            (Quota::aligned(3, ms(1000)), Quota::aligned(5, ms(2000))),
            (Quota::sliding(3, ms(1000)), Quota::sliding(2, ms(1000))),
        ] {
            let terms = Terms::new(limit, "api");
            let global = Global::new(terms.clone(), ms(0));
            let mut budget = Budget::new(terms.clone(), ms(0));
            for step in 0..40_u64 {
                let now = ms(step * 125);
                if step == 20 {
                    let was = global.retune(retuned, now).expect("the same kind");
                    assert_eq!(was, limit);
                    budget.retune(terms.retuned(retuned).unwrap(), now);
                }
                let headroom = step % 3 == 0;
                assert_eq!(
                    said(global.take(now, headroom, "api")),
                    said(budget.take(now, headroom)),
                    "{limit:?} at {now:?}"
                );
            }
            assert_eq!(global.terms().limit, retuned);
            // A limit of another kind is refused, and changes nothing.
            let other = match limit {
                Quota::Sliding { .. } => Quota::bucket(1.0, 1.0),
                _ => Quota::sliding(1, ms(1)),
            };
            assert!(global.retune(other, ms(9000)).is_err(), "{limit:?}");
            assert_eq!(global.terms().limit, retuned);
        }
    }
}
