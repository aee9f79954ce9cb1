//! The event queue: a timing wheel of buckets that hold the events themselves.

use std::collections::BinaryHeap;

use core::cmp::{Ordering, Reverse};

/// Each bucket of the wheel covers 2¹⁸ ns, about a quarter of a millisecond: a few events
/// at ten thousand calls a second, which a sorting network orders without a branch.
const SLOT_BITS: u32 = 18;
/// Buckets in the wheel: about an eighth of a second ahead of the bucket being taken, which
/// holds nearly every call's end. The buckets' headers then fit a core's first-level cache
/// (12 KB; with four times as many, reading the header a push goes to missed it).
const SLOTS: u64 = 512;

/// Events ordered by time, ties in the order they were scheduled.
///
/// A simulation never schedules an event before the last one it took, and most events fall
/// a few milliseconds ahead (a call finishing), so the queue is a timing wheel (Varghese and
/// Lauck, "Hashed and hierarchical timing wheels", SOSP 1987): an event goes into the bucket
/// of its quarter millisecond, and the buckets are taken in turn, each ordered as it comes
/// up. Events further ahead than the wheel reaches wait in a binary heap until it does. A
/// push is a `Vec::push` and a take a `Vec::pop`, where a binary heap over every event cost
/// a seventh of a run at ten thousand calls a second.
///
/// The buckets hold sixteen-byte entries, a time and a place in a slab beside the wheel
/// where the event itself waits: an event of the simulation is about a hundred bytes, and
/// four of them in each of 512 buckets is 200 KB, past the first-level cache, so writing an
/// event into its bucket missed it on most pushes (a third of a push's time on that one
/// store). The slab's places are reused last freed first, so the few hundred events under
/// way stay in a few hot lines. A bucket's entries are in the order they were scheduled
/// (those that waited in the heap come in first, in order, before anything else can be
/// pushed into the bucket), so as a bucket comes up each entry becomes a key of its time,
/// its rank in the bucket and its place in the slab, and ordering the keys orders the
/// events, ties in the order scheduled. The two to four keys a bucket usually holds are
/// ordered by a sorting network, without a branch: sorted by insertion, the compares of
/// random times mispredicted about once a bucket, which cost more than the network's
/// instructions. Memory stays at the most events ever waiting.
#[derive(Debug)]
pub(crate) struct Queue<T> {
    /// Per bucket, the events due in it, in the order scheduled.
    wheel: Vec<Vec<Entry>>,
    /// The bucket being taken; every event of an earlier bucket has been taken.
    current: u64,
    /// The keys of the current bucket's events not yet taken, latest first, so the next is
    /// at the end.
    order: Vec<Key>,
    /// The rank the next event pushed into the current bucket takes: after every other.
    rank: u32,
    /// A drained bucket, to swap for the next one to come up, so each keeps its capacity.
    spare: Vec<Entry>,
    /// Events in the wheel, outside `order`.
    wheeled: usize,
    /// Events beyond the wheel's reach, and the order they were scheduled in.
    far: BinaryHeap<Reverse<Far>>,
    seq: u64,
    /// The events themselves, at the places the entries name; `None` where none waits.
    slab: Vec<Option<T>>,
    /// The slab's places free, the last freed at the end.
    free: Vec<u32>,
}

/// When an event is due, and its place in the slab.
#[derive(Debug, Clone, Copy)]
struct Entry {
    at: u64,
    slot: u32,
}

/// An event's time, above its rank in its bucket, above its place in the slab: ordering
/// keys orders the events, ties in the order they were scheduled.
type Key = u128;

fn key(at: u64, rank: u32, slot: u32) -> Key {
    (u128::from(at) << 64) | (u128::from(rank) << 32) | u128::from(slot)
}

/// An event beyond the wheel, with the count that breaks its ties.
#[derive(Debug)]
struct Far {
    seq: u64,
    entry: Entry,
}

impl Far {
    fn rank(&self) -> (u64, u64) {
        (self.entry.at, self.seq)
    }
}

impl PartialEq for Far {
    fn eq(&self, other: &Self) -> bool {
        self.rank() == other.rank()
    }
}

impl Eq for Far {}

impl PartialOrd for Far {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Far {
    fn cmp(&self, other: &Self) -> Ordering {
        self.rank().cmp(&other.rank())
    }
}

impl<T> Queue<T> {
    pub(crate) fn new() -> Self {
        Self {
            wheel: (0..SLOTS).map(|_| Vec::new()).collect(),
            current: 0,
            order: Vec::new(),
            rank: 0,
            spare: Vec::new(),
            wheeled: 0,
            far: BinaryHeap::new(),
            seq: 0,
            slab: Vec::new(),
            free: Vec::new(),
        }
    }

    /// Schedules `event` at `at`, which must not be before the last event taken (an earlier
    /// time is taken with the current bucket's events, after those already due).
    #[inline(always)]
    pub(crate) fn push(&mut self, at: u64, event: T) {
        let slot = match self.free.pop() {
            Some(place) => {
                self.slab[place as usize] = Some(event);
                place
            }
            None => {
                self.slab.push(Some(event));
                (self.slab.len() - 1) as u32
            }
        };
        let s = at >> SLOT_BITS;
        if s <= self.current {
            // Latest first: the new event goes before every event due after it, and after
            // (taken later than) those due at the same time.
            let k = key(at, self.rank, slot);
            self.rank += 1;
            let i = self.order.partition_point(|&o| o > k);
            self.order.insert(i, k);
        } else if s < self.current + SLOTS {
            self.wheel[(s % SLOTS) as usize].push(Entry { at, slot });
            self.wheeled += 1;
        } else {
            self.seq += 1;
            let seq = self.seq;
            let entry = Entry { at, slot };
            self.far.push(Reverse(Far { seq, entry }));
        }
    }

    /// When the next event is due.
    #[inline]
    pub(crate) fn peek(&mut self) -> Option<u64> {
        if self.order.is_empty() {
            self.turn();
        }
        self.order.last().map(|&k| (k >> 64) as u64)
    }

    /// Takes the next event.
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<T> {
        if self.order.is_empty() {
            self.turn();
        }
        let slot = self.order.pop()? as u32;
        self.free.push(slot);
        self.slab.get_mut(slot as usize)?.take()
    }

    /// The events still waiting, in no particular order.
    pub(crate) fn waiting(&self) -> impl Iterator<Item = &T> {
        self.slab.iter().flatten()
    }

    /// Turns the wheel until the current bucket has an event, if any is waiting.
    #[inline(never)]
    fn turn(&mut self) {
        while self.order.is_empty() {
            if self.wheeled == 0 {
                // Nothing within reach: jump to the first far event's bucket.
                let Some(Reverse(first)) = self.far.peek() else {
                    return;
                };
                self.current = self.current.max(first.entry.at >> SLOT_BITS);
            } else {
                self.current += 1;
            }
            // The current bucket's entries become keys; its drained vector stays for the
            // next bucket to come up.
            let bucket = (self.current % SLOTS) as usize;
            core::mem::swap(&mut self.spare, &mut self.wheel[bucket]);
            self.wheeled -= self.spare.len();
            while let Some(Reverse(first)) = self.far.peek() {
                let s = first.entry.at >> SLOT_BITS;
                if s >= self.current + SLOTS {
                    break;
                }
                let Some(Reverse(far)) = self.far.pop() else {
                    break;
                };
                // Only after a jump can a far event be due in the current bucket, which was
                // then empty: the heap's order is the order scheduled.
                if s <= self.current {
                    self.spare.push(far.entry);
                } else {
                    self.wheel[(s % SLOTS) as usize].push(far.entry);
                    self.wheeled += 1;
                }
            }
            let ranked = self.spare.drain(..).zip(0..);
            self.order
                .extend(ranked.map(|(e, rank)| key(e.at, rank, e.slot)));
            self.rank = self.order.len() as u32;
            order(&mut self.order);
        }
    }
}

/// Sorts `keys` latest first: by a sorting network of compare-exchanges, which need no
/// branch, for the two to four keys a bucket usually holds, and by a sort beyond that.
#[inline]
fn order(keys: &mut [Key]) {
    /// Puts the later of `keys[i]` and `keys[j]` first.
    #[inline(always)]
    fn exchange(keys: &mut [Key], i: usize, j: usize) {
        let (a, b) = (keys[i], keys[j]);
        keys[i] = a.max(b);
        keys[j] = a.min(b);
    }
    match keys.len() {
        0 | 1 => {}
        2 => exchange(keys, 0, 1),
        3 => {
            exchange(keys, 0, 1);
            exchange(keys, 1, 2);
            exchange(keys, 0, 1);
        }
        4 => {
            exchange(keys, 0, 1);
            exchange(keys, 2, 3);
            exchange(keys, 0, 2);
            exchange(keys, 1, 3);
            exchange(keys, 1, 2);
        }
        _ => keys.sort_unstable_by(|a, b| b.cmp(a)),
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
    fn the_sorting_network_orders_every_arrangement_of_up_to_four_keys() {
        // Two keys tie on time, as events due at the same instant do; their ranks differ.
        let keys: [Key; 4] = [key(1, 0, 9), key(1, 1, 3), key(2, 0, 5), key(3, 2, 1)];
        for n in 0..=4u32 {
            // Every n-digit numeral in base n whose digits are all different is an arrangement.
            for code in 0..n.pow(n).max(1) {
                let picks: Vec<usize> = (0..n).map(|d| (code / n.pow(d) % n) as usize).collect();
                let mut seen = picks.clone();
                seen.sort();
                seen.dedup();
                if seen.len() != picks.len() {
                    continue;
                }
                let mut arranged: Vec<Key> = picks.iter().map(|&p| keys[p]).collect();
                let mut expected = arranged.clone();
                expected.sort_by(|a, b| b.cmp(a));
                order(&mut arranged);
                assert_eq!(arranged, expected, "{picks:?}");
            }
        }
    }

    #[test]
    fn what_is_waiting_is_every_event_pushed_and_not_taken() {
        let mut queue = Queue::new();
        // Now, within the wheel's reach, and past it.
        for (i, at) in [0, 1 << 20, 1 << 40, 5, 1 << 40].into_iter().enumerate() {
            queue.push(at, i);
        }
        assert_eq!(queue.pop(), Some(0));
        let mut waiting: Vec<usize> = queue.waiting().copied().collect();
        waiting.sort();
        assert_eq!(waiting, [1, 2, 3, 4]);
        let order: Vec<usize> = core::iter::from_fn(|| queue.pop()).collect();
        assert_eq!(order, [3, 1, 2, 4]);
        assert_eq!((queue.waiting().count(), queue.peek()), (0, None));
    }
}
