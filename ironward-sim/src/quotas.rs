//! The server's quotas behind the shedder: a token bucket, a sliding window, a fixed period
//! and a gate, met in that order.

use core::time::Duration;

use ironward::{Bucket, Gate, Period, Sliding, Usage};

use crate::policy::Policies;

/// The server-side piece that refused an attempt: the shedder, or one of the quotas.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Piece {
    Shedder,
    Bucket,
    Sliding,
    Period,
    Gate,
}

/// The quotas a scenario names, each there when its table is.
///
/// An engine holds them as an `Option`, `None` when the scenario names none (most of them
/// name one at most): an attempt then asks one question of them, not four.
#[derive(Debug)]
pub(crate) struct Quotas {
    bucket: Option<Bucket>,
    sliding: Option<Sliding>,
    period: Option<Period>,
    gate: Option<Gate>,
}

impl Quotas {
    /// The quotas `policies` names, fresh at time zero; `None` when it names none.
    pub(crate) fn new(policies: &Policies) -> Option<Self> {
        let p = policies;
        if p.bucket.is_none() && p.sliding.is_none() && p.period.is_none() && p.gate.is_none() {
            return None;
        }
        Some(Self {
            bucket: p
                .bucket
                .map(|b| Bucket::new(b.rate, b.burst, Duration::ZERO)),
            sliding: p.sliding.map(|s| Sliding::new(s.quota, s.window)),
            period: p.period.map(|q| {
                if q.align {
                    Period::aligned(q.quota, q.period)
                } else {
                    Period::new(q.quota, q.period)
                }
            }),
            gate: p.gate.map(|g| Gate::new(g.limit)),
        })
    }

    /// Lets an attempt in at `now`, or names the first quota that refuses it. Each quota
    /// met before the refusal keeps what it took (a bucket's token, a window's stamp), as a
    /// stack of layers does; the gate is last, so a refused attempt holds no place at it.
    pub(crate) fn enter(&mut self, now: Duration) -> Result<(), Piece> {
        if !self.bucket.as_mut().is_none_or(|b| b.take(now, 1.0)) {
            Err(Piece::Bucket)
        } else if !self.sliding.as_mut().is_none_or(|s| s.take(now)) {
            Err(Piece::Sliding)
        } else if self
            .period
            .as_mut()
            .is_some_and(|p| p.take(now) == Usage::Over)
        {
            Err(Piece::Period)
        } else if !self.gate.as_mut().is_none_or(Gate::enter) {
            Err(Piece::Gate)
        } else {
            Ok(())
        }
    }

    /// Whether an attempt let in holds a place at a gate, to give back as it leaves.
    pub(crate) fn gated(&self) -> bool {
        self.gate.is_some()
    }

    /// An attempt let in leaves the gate.
    pub(crate) fn leave(&mut self) {
        if let Some(gate) = &mut self.gate {
            gate.leave();
        }
    }
}
