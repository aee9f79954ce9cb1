//! The event queue: a timing wheel of buckets that hold the events' times and places.

use std::collections::BinaryHeap;

use core::cmp::{Ordering, Reverse};
use core::hint::select_unpredictable;

/// Each bucket of the wheel covers 2¹⁸ ns, about a quarter of a millisecond: a few events
/// at ten thousand calls a second, which a sorting network orders without a branch. At that
/// load a run of three minutes took 23 million instructions more with buckets half as wide
/// (and twice as many), 70 million more at a quarter, and about as many at twice as wide
/// (half as many; 1 million fewer of 1.5 billion).
const SLOT_BITS: u32 = 18;
/// Buckets in the wheel: about an eighth of a second ahead of the bucket being taken, which
/// holds nearly every call's end. The buckets' headers then fit a core's first-level cache
/// (12 KB; with four times as many, reading the header a push goes to missed it).
const SLOTS: u64 = 512;
/// The part of a time within its bucket.
const WITHIN: u64 = (1 << SLOT_BITS) - 1;
/// The bits of an entry above its place in the slab: the time within its bucket.
const HIGH: u64 = !0 << 32;

/// Events ordered by time, ties in the order they were scheduled.
///
/// A simulation never schedules an event before the last one it took, and most events fall
/// a few milliseconds ahead (a call finishing), so the queue is a timing wheel (Varghese and
/// Lauck, "Hashed and hierarchical timing wheels", SOSP 1987): an event goes into the bucket
/// of its quarter millisecond, and the buckets are taken in turn, each ordered as it comes
/// up. Events further ahead than the wheel reaches wait in a binary heap until it does. A
/// push is a `Vec::push` and a take reads the next entry of the bucket being taken, where a
/// binary heap over every event cost a seventh of a run at ten thousand calls a second.
///
/// A bucket holds eight-byte entries, the time within the bucket above a place in a slab
/// beside the wheel where the event itself waits: an event of the simulation is about a
/// hundred bytes, and four of them in each of 512 buckets is 200 KB, past the first-level
/// cache, so writing an event into its bucket missed it on most pushes (a third of a push's
/// time on that one store). The slab's places are reused last freed first, so the few
/// hundred events under way stay in a few hot lines. A bucket's entries are in the order
/// they were scheduled (those that waited in the heap come in first, in order, before
/// anything else can be pushed into the bucket), so a stable sort by the time within the
/// bucket orders its events, ties in the order scheduled, and the bucket is then taken from
/// the front in place. The two to six entries a bucket usually holds are sorted by a
/// network of compare-exchanges of neighbours, without a branch (a neighbour is moved only
/// past a later time, which keeps ties in order): sorted by insertion, the compares of
/// random times mispredicted about once a bucket, which cost more than the network's
/// instructions. Sorting the entries where they lie, where each bucket's entries used to
/// become sixteen-byte keys of the time, a rank and the place, sorted apart, took a turn of
/// the wheel from 188 instructions to 79 at ten thousand calls a second.
///
/// The bucket being taken is usually ahead of the simulation's clock (finding the next
/// event turned the wheel past empty buckets while arrivals were still due), so an event
/// can be scheduled before the bucket being taken; such events, few, wait in a binary heap
/// of their own, taken first. Memory stays at the most events ever waiting.
#[derive(Debug)]
pub(crate) struct Queue<T> {
    /// Per bucket, the entries of the events due in it, in the order scheduled.
    wheel: Box<[Vec<u64>; SLOTS as usize]>,
    /// The bucket being taken; every event of an earlier bucket has been taken, except
    /// those in `early`.
    current: u64,
    /// The current bucket's entries, sorted; those before `next` have been taken.
    now: Vec<u64>,
    /// The current bucket's next entry to take.
    next: usize,
    /// When the next event of `early` or the current bucket is due, or `u64::MAX` when
    /// neither holds one (or the next is due then), so that a look at the next event,
    /// which the simulation makes twice an event, is one load and one compare.
    head: u64,
    /// Events in the wheel, outside `now`.
    wheeled: usize,
    /// Events scheduled before the current bucket, and the order they were scheduled in.
    early: BinaryHeap<Reverse<Far>>,
    /// Events beyond the wheel's reach, and the order they were scheduled in.
    far: BinaryHeap<Reverse<Far>>,
    /// The bucket of the first far event, `u64::MAX` if none: checked at every turn.
    far_first: u64,
    seq: u64,
    /// The events themselves, at the places the entries name; `None` where none waits.
    slab: Vec<Option<T>>,
    /// The slab's places free, the last freed at the end.
    free: Vec<u32>,
}

/// An entry of a bucket: the time within the bucket above a place in the slab.
fn entry(at: u64, place: u32) -> u64 {
    ((at & WITHIN) << 32) | u64::from(place)
}

/// An event beyond the wheel or before the bucket being taken, with the count that breaks
/// its ties.
#[derive(Debug)]
struct Far {
    at: u64,
    seq: u64,
    place: u32,
}

impl Far {
    fn rank(&self) -> (u64, u64) {
        (self.at, self.seq)
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
            wheel: Box::new(core::array::from_fn(|_| Vec::new())),
            current: 0,
            now: Vec::new(),
            next: 0,
            head: u64::MAX,
            wheeled: 0,
            early: BinaryHeap::new(),
            far: BinaryHeap::new(),
            far_first: u64::MAX,
            seq: 0,
            slab: Vec::new(),
            free: Vec::new(),
        }
    }

    /// Schedules `event` at `at`, which must not be before the last event taken (an earlier
    /// time is taken before the events not yet taken, in time order).
    #[inline(always)]
    pub(crate) fn push(&mut self, at: u64, event: T) {
        let place = match self.free.pop() {
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
        if s.wrapping_sub(self.current + 1) < SLOTS - 1 {
            self.wheel[(s % SLOTS) as usize].push(entry(at, place));
            self.wheeled += 1;
        } else {
            self.aside(at, place);
        }
    }

    /// Schedules an event outside the wheel's buckets ahead: into the bucket being taken,
    /// before it, or beyond the wheel's reach.
    #[inline(always)]
    fn aside(&mut self, at: u64, place: u32) {
        let s = at >> SLOT_BITS;
        if s == self.current {
            // After every event not yet taken due at the same time or before.
            let e = entry(at, place);
            let after = self.now[self.next..].partition_point(|&o| o & HIGH <= e & HIGH);
            self.now.insert(self.next + after, e);
            self.head = self.head.min(at);
        } else if s < self.current {
            // Before every event in the wheel: taken first, in time order, ties in the
            // order scheduled.
            self.seq += 1;
            let seq = self.seq;
            self.early.push(Reverse(Far { at, seq, place }));
            self.head = self.head.min(at);
        } else {
            self.seq += 1;
            let seq = self.seq;
            self.far_first = self.far_first.min(s);
            self.far.push(Reverse(Far { at, seq, place }));
        }
    }

    /// When the next event is due: `head`, unless the wheel must turn to find it.
    #[inline]
    pub(crate) fn peek(&mut self) -> Option<u64> {
        if self.head != u64::MAX {
            return Some(self.head);
        }
        self.find()
    }

    /// Takes the next event, and keeps `head` the time of the one after it.
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<T> {
        let place = match self.early.pop() {
            Some(Reverse(Far { place, .. })) => {
                self.head = self.first();
                place
            }
            None => {
                if self.next == self.now.len() && !self.turn() {
                    return None;
                }
                let e = *self.now.get(self.next)?;
                self.next += 1;
                self.head = self.bucket_head();
                e as u32
            }
        };
        self.free.push(place);
        self.slab.get_mut(place as usize)?.take()
    }

    /// When the next event of `early` or the current bucket is due, `u64::MAX` if neither
    /// holds one.
    fn first(&self) -> u64 {
        if let Some(Reverse(first)) = self.early.peek() {
            return first.at;
        }
        self.bucket_head()
    }

    /// When the current bucket's next event is due, `u64::MAX` if it has none left.
    #[inline(always)]
    fn bucket_head(&self) -> u64 {
        match self.now.get(self.next) {
            Some(&e) => (self.current << SLOT_BITS) | (e >> 32),
            None => u64::MAX,
        }
    }

    /// When the next event is due, turning the wheel to it if need be.
    #[inline]
    fn find(&mut self) -> Option<u64> {
        if self.early.is_empty() && self.next == self.now.len() && !self.turn() {
            return None;
        }
        // An event due at `u64::MAX` is no different from none to `head`, which is then
        // found again at the next look.
        let head = self.first();
        self.head = head;
        Some(head)
    }

    /// The events still waiting, in no particular order.
    pub(crate) fn waiting(&self) -> impl Iterator<Item = &T> {
        self.slab.iter().flatten()
    }

    /// Turns the wheel until the current bucket has an event; false if none is waiting. Kept
    /// out of line: once in two or three events, and inlined into both takes it cost more.
    #[inline(never)]
    fn turn(&mut self) -> bool {
        // The drained bucket's vector goes back into the wheel, so each keeps its capacity.
        self.now.clear();
        self.next = 0;
        loop {
            if self.wheeled == 0 {
                // Nothing within reach: jump to the first far event's bucket.
                if self.far_first == u64::MAX {
                    return false;
                }
                self.current = self.current.max(self.far_first);
            } else {
                self.current += 1;
            }
            let bucket = &mut self.wheel[(self.current % SLOTS) as usize];
            self.wheeled -= bucket.len();
            core::mem::swap(&mut self.now, bucket);
            if self.far_first < self.current + SLOTS {
                self.reach();
            }
            if !self.now.is_empty() {
                order(&mut self.now);
                return true;
            }
        }
    }

    /// Moves the far events the wheel now reaches into their buckets.
    #[cold]
    fn reach(&mut self) {
        while let Some(Reverse(first)) = self.far.peek() {
            let s = first.at >> SLOT_BITS;
            if s >= self.current + SLOTS {
                self.far_first = s;
                return;
            }
            let Some(Reverse(far)) = self.far.pop() else {
                break;
            };
            let e = entry(far.at, far.place);
            // Only after a jump can a far event be due in the current bucket, which was
            // then empty: the heap's order is the order scheduled.
            if s <= self.current {
                self.now.push(e);
            } else {
                self.wheel[(s % SLOTS) as usize].push(e);
                self.wheeled += 1;
            }
        }
        self.far_first = u64::MAX;
    }
}

/// Sorts a bucket's entries by their time within the bucket, ties kept in order: by a network
/// of compare-exchanges of neighbours, which need no branch, for the two to six entries a
/// bucket usually holds, and by a stable sort beyond that.
#[inline]
fn order(entries: &mut [u64]) {
    match entries.len() {
        0 | 1 => {}
        2 => transpose::<2>(entries),
        3 => transpose::<3>(entries),
        4 => transpose::<4>(entries),
        5 => transpose::<5>(entries),
        6 => transpose::<6>(entries),
        _ => entries.sort_by_key(|&e| e >> 32),
    }
}

/// Sorts the `N` entries by odd-even transposition: `N` rounds, each a compare-exchange of
/// every other pair of neighbours, sort `N` entries, and moving an entry only past a later
/// time keeps ties in order. Past four entries a bucket was sorted by the standard library's
/// insertion sort, whose compares of random times mispredicted: the network costs no more
/// instructions up to six. The exchange's choices are `select_unpredictable`: written as
/// plain `if`s, the compiler turned some into branches.
#[inline(always)]
fn transpose<const N: usize>(entries: &mut [u64]) {
    let Ok(entries) = <&mut [u64; N]>::try_from(entries) else {
        return;
    };
    for round in 0..N {
        let mut i = round % 2;
        while i + 1 < N {
            let (a, b) = (entries[i], entries[i + 1]);
            // `b` is due earlier exactly when it is below `a`'s time with no place.
            let early = b < (a & HIGH);
            entries[i] = select_unpredictable(early, b, a);
            entries[i + 1] = select_unpredictable(early, a, b);
            i += 2;
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
    // simulation makes them: never before the last time taken. Looking at the next event
    // without taking it turns the wheel ahead of the clock, as the simulation's arrivals
    // do, so pushes also land in the bucket being taken and before it.
    #[test]
    fn interleaved_pushes_and_takes_agree_with_a_sorted_list() {
        for (run, spread) in [(5u64, 1.0f64), (6, 0.01), (7, 30.0)] {
            let mut dice = crate::Dice::new(run);
            let mut queue = Queue::new();
            let mut model: Vec<(u64, u64)> = Vec::new();
            let (mut now, mut id) = (0u64, 0u64);
            for _ in 0..40_000 {
                let roll = dice.roll();
                if roll < 0.5 {
                    // Ties, within a bucket, the next few milliseconds, or up to ten
                    // seconds: past the wheel. A tie is at the time last taken or at a time
                    // already waiting.
                    let at = match dice.roll() {
                        r if r < 0.2 => now,
                        r if r < 0.3 => model
                            .get(id as usize % model.len().max(1))
                            .map_or(now, |e| e.0),
                        r if r < 0.5 => now + (dice.roll() * 3e5 * spread) as u64,
                        r if r < 0.9 => now + (dice.roll() * 5e6 * spread) as u64,
                        _ => now + (dice.roll() * 1e10 * spread) as u64,
                    };
                    queue.push(at, id);
                    model.push((at, id));
                    id += 1;
                } else {
                    model.sort();
                    let expected = model.first().copied();
                    assert_eq!(queue.peek(), expected.map(|(at, _)| at));
                    if roll < 0.6 {
                        continue;
                    }
                    if !model.is_empty() {
                        model.remove(0);
                    }
                    assert_eq!(queue.pop(), expected.map(|(_, id)| id));
                    now = expected.map_or(now, |(at, _)| at);
                }
            }
            let mut waiting: Vec<u64> = queue.waiting().copied().collect();
            waiting.sort();
            let mut left: Vec<u64> = model.iter().map(|e| e.1).collect();
            left.sort();
            assert_eq!(waiting, left);
            model.sort();
            for (at, id) in model {
                assert_eq!((queue.peek(), queue.pop()), (Some(at), Some(id)));
            }
            assert_eq!((queue.peek(), queue.pop()), (None, None));
        }
    }

    #[test]
    fn a_burst_at_one_instant_comes_out_in_the_order_scheduled() {
        let mut queue = Queue::new();
        let at = 3 << SLOT_BITS | 7;
        queue.push(1, usize::MAX);
        for i in 0..5_000 {
            queue.push(at + (i % 3 == 0) as u64, i);
        }
        assert_eq!(queue.pop(), Some(usize::MAX));
        // Into the bucket being taken, at the burst's instant, after those already there.
        assert_eq!(queue.peek(), Some(at));
        queue.push(at, 5_000);
        let order: Vec<usize> = core::iter::from_fn(|| queue.pop()).collect();
        let mut expected: Vec<usize> = (0..5_000).filter(|i| i % 3 != 0).collect();
        expected.push(5_000);
        expected.extend((0..5_000).filter(|i| i % 3 == 0));
        assert_eq!(order, expected);
    }

    #[test]
    fn an_event_at_the_end_of_time_is_still_an_event() {
        let mut queue = Queue::new();
        queue.push(u64::MAX, 1);
        queue.push(u64::MAX - 1, 0);
        assert_eq!((queue.peek(), queue.pop()), (Some(u64::MAX - 1), Some(0)));
        assert_eq!(
            (queue.peek(), queue.peek()),
            (Some(u64::MAX), Some(u64::MAX))
        );
        queue.push(u64::MAX, 2);
        assert_eq!(
            (queue.pop(), queue.pop(), queue.pop()),
            (Some(1), Some(2), None)
        );
    }

    #[test]
    fn the_sorting_network_orders_every_arrangement_of_up_to_six_entries() {
        // Entries tie on time, as events due at the same instant do; the order they are in
        // must be kept.
        let entries: [u64; 6] = [
            entry(1, 9),
            entry(1, 3),
            entry(2, 5),
            entry(3, 1),
            entry(3, 0),
            entry(3, 7),
        ];
        for n in 0..=6u32 {
            // Every n-digit numeral in base n whose digits are all different is an arrangement.
            for code in 0..n.pow(n).max(1) {
                let picks: Vec<usize> = (0..n).map(|d| (code / n.pow(d) % n) as usize).collect();
                let mut seen = picks.clone();
                seen.sort();
                seen.dedup();
                if seen.len() != picks.len() {
                    continue;
                }
                let mut arranged: Vec<u64> = picks.iter().map(|&p| entries[p]).collect();
                let mut expected = arranged.clone();
                expected.sort_by_key(|&e| e >> 32);
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
