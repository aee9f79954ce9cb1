//! The state behind a [`SharedLimiter`](super::SharedLimiter)'s lock: the core limiter, the
//! queue in front of it, and how a call is let in, queued or refused.

use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::task::Waker;
use std::time::Duration;

use ironward::{Criticality, Grant, Limiter};

use super::{LimiterRefusal, Queue, Queued, queue};
use crate::Dice;
#[cfg(doc)]
use ironward::Adaptive;

/// The state behind the lock: the core limiter and the queue in front of it.
pub(super) struct State {
    pub(super) limiter: Limiter,
    pub(super) queue: Option<Queue>,
    /// The calls waiting, the most critical first, then in order of arrival, each with the
    /// waker of the task that last polled it.
    pub(super) waiting: BTreeMap<Place, Option<Waker>>,
    /// How many of `waiting` are of each class, least critical first.
    pub(super) counts: [usize; 4],
    /// The calls let in from the queue whose waiter has not yet taken its grant, by arrival.
    pub(super) granted: BTreeMap<u64, Grant>,
    /// The arrival number of the next queued call.
    pub(super) next: u64,
}

/// A queued call's place: its class (the most critical sorts first) and its arrival.
pub(super) type Place = (Reverse<Criticality>, u64);

/// Whether the core would admit a call of `class` at `now` ([`Limiter::admits`], which
/// records nothing and counts a due probe as begun). The queue asks this before it asks the
/// core, so that only a call the core admits, or one that is refused for good, reaches
/// `acquire_as`, whose refusals raise the floor.
fn fits(limiter: &Limiter, now: Duration, class: Criticality) -> bool {
    limiter.admits(now, class)
}

/// What [`State::admit`] decided, before it is dressed for the caller.
pub(super) enum Entry {
    Admitted(Grant),
    Queued {
        place: Place,
        wait: Duration,
        cool: Duration,
    },
    Refused(LimiterRefusal),
}

impl State {
    /// The core's decision for one call at `now`, then the queue's if the core refused.
    ///
    /// Without a queue the core decides, and a refusal is its own. With one, the core is
    /// asked only for a call it would admit, or once the queue has turned the call away: a
    /// call that waits is not refused, and must not raise the core's floor (were it to, a
    /// stream of critical-plus calls meeting a full limit would hold every critical call in
    /// the queue below the floor until it expired).
    pub(super) fn admit(&mut self, now: Duration, criticality: Criticality, dice: &Dice) -> Entry {
        let Some(queue) = self.queue else {
            return match self.limiter.acquire_as(now, criticality) {
                Ok(grant) => Entry::Admitted(grant),
                Err(reason) => Entry::Refused(LimiterRefusal {
                    reason,
                    queued: Queued::Off,
                }),
            };
        };
        if fits(&self.limiter, now, criticality)
            && let Ok(grant) = self.limiter.acquire_as(now, criticality)
        {
            return Entry::Admitted(grant);
        }
        // The calls this one would wait behind: a queue full of less critical calls does not
        // turn a more critical one away.
        let waiting = self.counts[criticality.rank()..].iter().sum();
        let rejection = queue.rejection(self.limiter.limit(), waiting);
        if queue::turns_away(rejection, || dice.roll()) {
            // Refused now: the core records it (raising the floor) and says why.
            return match self.limiter.acquire_as(now, criticality) {
                Ok(grant) => Entry::Admitted(grant),
                Err(reason) => Entry::Refused(LimiterRefusal {
                    reason,
                    queued: Queued::Rejected { waiting, rejection },
                }),
            };
        }
        let place = (Reverse(criticality), self.next);
        self.next = self.next.wrapping_add(1);
        self.waiting.insert(place, None);
        self.counts[criticality.rank()] += 1;
        Entry::Queued {
            place,
            wait: queue.wait,
            cool: self.limiter.policy().cool,
        }
    }

    /// Takes the call at `place` out of the queue, if it is there: its waker.
    pub(super) fn leave(&mut self, place: Place) -> Option<Option<Waker>> {
        let waker = self.waiting.remove(&place)?;
        let count = &mut self.counts[place.0.0.rank()];
        *count = count.saturating_sub(1);
        Some(waker)
    }

    /// Lets in, at `now`, the queued calls the core admits, the most critical first, and
    /// collects the wakers of their tasks into `wake`, to be woken once the lock is let go.
    ///
    /// Each class is let in in order of arrival until the core would refuse its next call;
    /// the calls behind it are of its class, with the same floor and room, so they wait too,
    /// and the next class down is asked. Under ceilings a less critical class's floor is no
    /// lower and its room no larger, so it is refused as well and the pump ends at the first
    /// refusal; under partitions ([`Adaptive::partitions`]) a less critical class may still
    /// have its reservation while a more critical one has used up its own. A call is asked
    /// of the core only once its class is at or over the floor and its room has a place, so
    /// that a call still waiting is never counted as a refusal (which would raise the floor).
    pub(super) fn pump(&mut self, now: Duration, wake: &mut Vec<Waker>) {
        for class in Criticality::ALL.into_iter().rev() {
            if self.counts[class.rank()] == 0 {
                continue;
            }
            let of_class = (Reverse(class), 0)..=(Reverse(class), u64::MAX);
            while let Some((&place, _)) = self.waiting.range(of_class.clone()).next() {
                if !fits(&self.limiter, now, class) {
                    break;
                }
                let Ok(grant) = self.limiter.acquire_as(now, class) else {
                    break;
                };
                if let Some(waker) = self.leave(place).flatten() {
                    wake.push(waker);
                }
                self.granted.insert(place.1, grant);
            }
        }
    }
}
