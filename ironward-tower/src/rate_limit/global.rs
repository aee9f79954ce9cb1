//! [`Global`]: the one budget of a layer without keys, shared by every request without a lock
//! where the core has a form that needs none.

use std::sync::{Mutex, RwLock};
use std::time::Duration;

use ironward::SharedBucket;

use super::error::Said;
use super::headroom::Stamp;
use super::limit::{Budget, Terms};
use super::{KindMismatch, Limit, Limited};
use crate::lock::lock;

/// The budget every request of a layer without keys takes from.
///
/// A token bucket is the core's [`SharedBucket`]: a take is one compare-and-swap, a refusal
/// one load, so the tasks of every core decide at once instead of taking turns, and a
/// refusal does not read the terms at all (the bucket's reason holds its burst and rate, which
/// are the policy a refusal reports). The terms are read only when an admission's headroom
/// is sent and by the tuner, behind a `RwLock` that a retune alone writes. A sliding window
/// keeps a log, which no atomic word holds, and a period keeps a count; both stay a core
/// limiter behind a `Mutex`, locked for one take, together with their terms.
#[derive(Debug)]
#[expect(
    clippy::large_enum_variant,
    reason = "a layer has one, inside its `Arc`; boxing the bucket would add a load to every request"
)]
pub(super) enum Global {
    Bucket {
        bucket: SharedBucket,
        terms: RwLock<Terms>,
    },
    Locked(Mutex<Budget>),
}

impl Global {
    /// A fresh budget under `terms`, its clock at `now`.
    pub(super) fn new(terms: Terms, now: Duration) -> Self {
        match terms.limit {
            Limit::Bucket { rate, burst } => Self::Bucket {
                bucket: SharedBucket::new(rate, burst, now),
                terms: RwLock::new(terms),
            },
            Limit::Sliding { .. } | Limit::Period { .. } => {
                Self::Locked(Mutex::new(Budget::new(terms, now)))
            }
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
                read(terms).answer(Ok(Some(left)))
            }
            Self::Locked(budget) => lock(budget).take(now, headroom),
        }
    }

    /// The terms in force.
    pub(super) fn terms(&self) -> Terms {
        match self {
            Self::Bucket { terms, .. } => read(terms).clone(),
            Self::Locked(budget) => lock(budget).terms().clone(),
        }
    }

    /// Moves the budget to `limit` at `now`, keeping its history, and answers the limit it
    /// replaced; or refuses a limit of another kind, changing nothing.
    pub(super) fn retune(&self, limit: Limit, now: Duration) -> Result<Limit, KindMismatch> {
        match self {
            Self::Bucket { bucket, terms } => {
                let mut terms = terms
                    .write()
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
                let retuned = terms.retuned(limit)?;
                if let Limit::Bucket { rate, burst } = limit {
                    bucket.retune(rate, burst, now);
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
fn read(terms: &RwLock<Terms>) -> std::sync::RwLockReadGuard<'_, Terms> {
    terms
        .read()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
