//! The client's chaos point: where an attempt the client's limiter and breaker let through
//! meets the faults injected on purpose, before it leaves for the server.
//!
//! The fault is the core's to decide ([`Injector::decide`] on [`chaos::draw`]); this only
//! numbers the attempts and applies what was decided.

use ironward::Settle;
use ironward::chaos::{self, Fault, Injected, Injector};

use crate::policy::ChaosPolicy;

use super::Engine;
use super::call::{Call, Guard, What};

/// A run's chaos policy at work: the checked policy, its seed, and the next attempt's number.
#[derive(Debug)]
pub(super) struct Chaos {
    injector: Injector,
    seed: u64,
    /// The number the next attempt to reach the chaos point gets: 0 for the first.
    next: u64,
    /// Aborted attempts with no timeout or deadline to end them: under way for good.
    pub(super) hung: u64,
    /// Every attempt's number and what was decided for it, in order.
    #[cfg(test)]
    pub(super) log: Vec<(u64, Option<Injected>)>,
}

impl Chaos {
    /// The policy at work, or `None` when it is off: then it decides, numbers and counts
    /// nothing. A policy the core refuses (which [`Scenario::from_toml`] reports as an error,
    /// but a [`Variant`] built in code may hold) injects nothing either.
    ///
    /// [`Scenario::from_toml`]: crate::Scenario::from_toml
    /// [`Variant`]: crate::Variant
    pub(super) fn new(policy: &ChaosPolicy) -> Option<Self> {
        if !policy.chaos.enabled {
            return None;
        }
        Some(Self {
            injector: policy.injector().ok()?,
            seed: policy.seed,
            next: 0,
            hung: 0,
            #[cfg(test)]
            log: Vec::new(),
        })
    }

    /// The next attempt's number and its fault, if any.
    fn decide(&mut self) -> Option<Injected> {
        let index = self.next;
        self.next += 1;
        let injected = self.injector.decide(chaos::draw(self.seed, index));
        #[cfg(test)]
        self.log.push((index, injected));
        injected
    }
}

/// What the chaos point leaves of an attempt: it goes on to the server, its answer to be
/// replaced by a failure or not, or the fault has taken it.
pub(super) enum Onward {
    Send { guard: Guard, replace: bool },
    Taken,
}

impl Engine {
    /// Applies the fault decided for the attempt `call` holding `guard`, if any.
    #[inline(never)]
    pub(super) fn chaos_point(&mut self, call: Call, guard: Guard) -> Onward {
        let Some(injected) = self.chaos.as_mut().and_then(Chaos::decide) else {
            return Onward::Send {
                guard,
                replace: false,
            };
        };
        let counts = &mut self.row.injected;
        if injected.shadow {
            counts.shadowed += 1;
            return Onward::Send {
                guard,
                replace: false,
            };
        }
        match injected.fault {
            Fault::Error => {
                counts.error += 1;
                // An error says nothing of the backend's load: the limiter ignores it.
                self.failed(call, guard, Settle::Ignored);
            }
            Fault::Latency(_) => {
                counts.latency += 1;
                let since = self.now;
                let at = since
                    .saturating_add(ironward::clock::nanos(injected.delay.unwrap_or_default()));
                match self.limit(&call, since) {
                    // The client gives up before the delay ends: the attempt is never sent.
                    Some(limit) if limit <= at => self.push(limit, What::Timeout { call, guard }),
                    _ => self.push(at, What::Delayed { call, guard, since }),
                }
            }
            Fault::Abort => {
                counts.abort += 1;
                match self.limit(&call, self.now) {
                    Some(limit) => self.push(limit, What::Timeout { call, guard }),
                    None => {
                        if let Some(chaos) = &mut self.chaos {
                            chaos.hung += 1;
                        }
                    }
                }
            }
            Fault::Replace => {
                counts.replace += 1;
                return Onward::Send {
                    guard,
                    replace: true,
                };
            }
        }
        Onward::Taken
    }
}

#[cfg(test)]
#[path = "chaos_tests.rs"]
mod tests;
