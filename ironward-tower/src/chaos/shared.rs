//! The state one [`ChaosLayer`](super::ChaosLayer) shares with every service it makes: the
//! checked policy, where each request's draw comes from, and the counts.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use ironward::chaos::{self, Chaos, ChaosError, Injected, Injector};

use crate::Dice;
use crate::lock::lock;

/// Where the draw of each request comes from.
#[derive(Debug, Clone)]
pub(super) enum Draws {
    /// Request `i` draws [`chaos::draw`]`(seed, i)`: the same faults on the same requests in
    /// every run, and in the core and the simulator.
    Seeded(u64),
    /// Each request rolls the dice.
    Dice(Dice),
}

/// The policy, the draws and the counts of one layer.
#[derive(Debug)]
pub(super) struct Shared {
    injector: Mutex<Injector>,
    draws: Draws,
    /// Requests that reached the layer's services: the next one's index.
    arrived: AtomicU64,
    injected: AtomicU64,
    shadowed: AtomicU64,
}

impl Shared {
    pub(super) fn new(injector: Injector, draws: Draws) -> Self {
        Self {
            injector: Mutex::new(injector),
            draws,
            arrived: AtomicU64::new(0),
            injected: AtomicU64::new(0),
            shadowed: AtomicU64::new(0),
        }
    }

    /// The same policy and draws from the start: no request counted yet.
    pub(super) fn afresh(&self, draws: Draws) -> Self {
        Self::new(lock(&self.injector).clone(), draws)
    }

    /// Numbers the request that has just arrived and decides its fault, if any: the core's
    /// [`Injector::decide`] on the request's draw. The request is counted as injected or
    /// shadowed here, when it is decided.
    pub(super) fn decide(&self) -> (u64, Option<Injected>) {
        let index = self.arrived.fetch_add(1, Ordering::Relaxed);
        let draw = match &self.draws {
            Draws::Seeded(seed) => chaos::draw(*seed, index),
            Draws::Dice(dice) => dice.roll(),
        };
        let injected = lock(&self.injector).decide(draw);
        if let Some(injected) = &injected {
            let count = if injected.shadow {
                &self.shadowed
            } else {
                &self.injected
            };
            count.fetch_add(1, Ordering::Relaxed);
        }
        (index, injected)
    }

    /// Checks `policy` and puts it in force for the next request; a refused one leaves the
    /// policy in force.
    pub(super) fn retune(&self, policy: Chaos) -> Result<(), ChaosError> {
        let mut injector = lock(&self.injector);
        let was = injector.policy().clone();
        injector.retune(policy)?;
        tracing::debug!(from = ?was, to = ?injector.policy(), "chaos retuned");
        Ok(())
    }

    pub(super) fn policy(&self) -> Chaos {
        lock(&self.injector).policy().clone()
    }

    pub(super) fn draws(&self) -> &Draws {
        &self.draws
    }

    pub(super) fn arrived(&self) -> u64 {
        self.arrived.load(Ordering::Relaxed)
    }

    pub(super) fn injected(&self) -> u64 {
        self.injected.load(Ordering::Relaxed)
    }

    pub(super) fn shadowed(&self) -> u64 {
        self.shadowed.load(Ordering::Relaxed)
    }
}
