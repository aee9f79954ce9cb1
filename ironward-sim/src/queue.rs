//! The event queue: a timing wheel of small keys over a slab of events.

use std::collections::BinaryHeap;

use core::cmp::Reverse;

/// Each slot of the wheel covers 2¹⁸ ns, about a quarter of a millisecond: few enough
/// events that sorting a slot costs next to nothing.
const SLOT_BITS: u32 = 18;
/// Slots in the wheel: about four seconds ahead of the slot being taken.
const SLOTS: u64 = 16_384;

/// Events ordered by time, ties in the order they were scheduled.
///
/// A simulation never schedules an event before the last one it took, and most events fall
/// a few milliseconds ahead (a call finishing), so the queue is a timing wheel (Varghese and
/// Lauck, "Hashed and hierarchical timing wheels", SOSP 1987): an event goes into the slot of
/// its quarter millisecond, and the slots are taken in turn, each sorted as it comes up. Events
/// further ahead than the wheel reaches wait in a binary heap until it does. A push is a
/// `Vec::push` and a take a `Vec::pop`, where a binary heap over every event cost a seventh
/// of a run at ten thousand calls a second.
///
/// Events wait in a slab whose free slots are reused, and the wheel's vectors keep their
/// capacity, so memory stays at the most events ever waiting at once.
#[derive(Debug)]
pub(crate) struct Queue<T> {
    /// Per slot, the keys of the events due in it, unsorted.
    wheel: Vec<Vec<Key>>,
    /// The slot being taken; every event of an earlier slot has been taken.
    current: u64,
    /// The current slot's keys, sorted latest first, so the next is at the end.
    ready: Vec<Key>,
    /// Keys in the wheel, outside `ready`.
    wheeled: usize,
    /// Keys of events beyond the wheel's reach.
    far: BinaryHeap<Reverse<Key>>,
    slots: Vec<Option<T>>,
    free: Vec<u32>,
    seq: u64,
}

/// When an event is due, the order it was scheduled in, and where it waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Key {
    at: u64,
    seq: u64,
    slot: u32,
}

impl<T> Queue<T> {
    pub(crate) fn new() -> Self {
        Self {
            wheel: (0..SLOTS).map(|_| Vec::new()).collect(),
            current: 0,
            ready: Vec::new(),
            wheeled: 0,
            far: BinaryHeap::new(),
            slots: Vec::new(),
            free: Vec::new(),
            seq: 0,
        }
    }

    /// Schedules `event` at `at`, which must not be before the last event taken (an earlier
    /// time is taken with the current slot's events, after those already due).
    pub(crate) fn push(&mut self, at: u64, event: T) {
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = Some(event);
                slot
            }
            None => {
                self.slots.push(Some(event));
                (self.slots.len() - 1) as u32
            }
        };
        self.seq += 1;
        let key = Key {
            at,
            seq: self.seq,
            slot,
        };
        let s = at >> SLOT_BITS;
        if s <= self.current {
            // Latest first: the new key goes before every key due after it.
            let i = self.ready.partition_point(|k| *k > key);
            self.ready.insert(i, key);
        } else if s < self.current + SLOTS {
            self.wheel[(s % SLOTS) as usize].push(key);
            self.wheeled += 1;
        } else {
            self.far.push(Reverse(key));
        }
    }

    /// When the next event is due.
    pub(crate) fn peek(&mut self) -> Option<u64> {
        self.turn();
        self.ready.last().map(|k| k.at)
    }

    /// Takes the next event.
    pub(crate) fn pop(&mut self) -> Option<T> {
        self.turn();
        let key = self.ready.pop()?;
        self.free.push(key.slot);
        self.slots[key.slot as usize].take()
    }

    /// The events still waiting, in no particular order.
    pub(crate) fn waiting(&self) -> impl Iterator<Item = &T> {
        self.slots.iter().flatten()
    }

    /// Turns the wheel until the current slot has an event, if any is waiting.
    fn turn(&mut self) {
        while self.ready.is_empty() {
            if self.wheeled == 0 {
                // Nothing within reach: jump to the first far event's slot.
                let Some(&Reverse(first)) = self.far.peek() else {
                    return;
                };
                self.current = self.current.max(first.at >> SLOT_BITS);
            } else {
                self.current += 1;
            }
            while let Some(&Reverse(key)) = self.far.peek() {
                let s = key.at >> SLOT_BITS;
                if s >= self.current + SLOTS {
                    break;
                }
                self.far.pop();
                if s <= self.current {
                    self.ready.push(key);
                } else {
                    self.wheel[(s % SLOTS) as usize].push(key);
                    self.wheeled += 1;
                }
            }
            let slot = &mut self.wheel[(self.current % SLOTS) as usize];
            self.wheeled -= slot.len();
            self.ready.append(slot);
            if self.ready.len() > 1 {
                self.ready.sort_unstable_by(|a, b| b.cmp(a));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_come_out_in_time_order_and_ties_in_the_order_scheduled() {
        let mut queue = Queue::new();
        for (at, name) in [(5, "e"), (1, "a"), (3, "c"), (1, "b"), (3, "d")] {
            queue.push(at, name);
        }
        let mut order = Vec::new();
        while let Some(name) = queue.pop() {
            order.push(name);
        }
        assert_eq!(order, ["a", "b", "c", "d", "e"]);
    }

    // The wheel against a sorted list, with pushes interleaved between takes as the
    // simulation makes them: never before the last time taken.
    #[test]
    fn interleaved_pushes_and_takes_agree_with_a_sorted_list() {
        let mut dice = crate::Dice::new(5);
        let mut queue = Queue::new();
        let mut model: Vec<(u64, u64)> = Vec::new();
        let (mut now, mut id) = (0u64, 0u64);
        for _ in 0..20_000 {
            if dice.roll() < 0.55 {
                // Ties, the next few milliseconds, or up to ten seconds: past the wheel.
                let ahead = match dice.roll() {
                    r if r < 0.4 => 0.0,
                    r if r < 0.9 => 5e6,
                    _ => 1e10,
                };
                let at = now + (dice.roll() * ahead) as u64;
                queue.push(at, id);
                model.push((at, id));
                id += 1;
            } else {
                model.sort();
                let expected = (!model.is_empty()).then(|| model.remove(0));
                assert_eq!(queue.peek(), expected.map(|(at, _)| at));
                assert_eq!(queue.pop(), expected.map(|(_, id)| id));
                now = expected.map_or(now, |(at, _)| at);
            }
        }
    }

    #[test]
    fn slots_are_reused() {
        let mut queue = Queue::new();
        for round in 0..100 {
            queue.push(round, round);
            queue.push(round, round);
            queue.pop();
            queue.pop();
        }
        assert_eq!(queue.slots.len(), 2);
        assert_eq!(queue.waiting().count(), 0);
        assert_eq!(queue.peek(), None);
    }
}
