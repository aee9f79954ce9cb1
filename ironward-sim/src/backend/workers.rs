//! When each of the backend's workers next becomes free: a wheel of free times in place of
//! a heap.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A bucket of [`Workers`]' wheel: 2²⁰ ns, about a millisecond.
const BUCKET_BITS: u32 = 20;
/// Buckets in the wheel: about a quarter of a second ahead.
const BUCKETS: u64 = 256;

/// When each worker next becomes free: the multiset a first-come-first-served server takes
/// its earliest from and hands each call's end to.
///
/// A binary heap of the workers' free times cost a sift through every level for each call,
/// the new end sinking past all the workers long idle. But an idle worker's free time no
/// longer matters, only that it has passed; so workers whose time has passed are a count,
/// and the busy ones' times wait in a wheel of millisecond buckets (a service time is mostly
/// a few milliseconds), with a heap for the few beyond its reach. Handing a call to an idle
/// worker is a decrement and a push; only a call that finds every worker busy looks for the
/// earliest time, in the first bucket that holds one. Workers are alike, so which of two
/// workers free at the same time takes a call changes nothing: this is the heap's multiset,
/// and every start time is the heap's.
#[derive(Debug)]
pub(super) struct Workers {
    /// Workers free at or before the start of bucket `cursor`.
    idle: u64,
    /// Bucket `b` (kept at `b % BUCKETS`) holds the free times in `[b, b + 1)` buckets, for
    /// `b` from `cursor` to `cursor + BUCKETS`, unsorted.
    wheel: Box<[Vec<u64>; BUCKETS as usize]>,
    /// The bucket of the latest `now` seen.
    cursor: u64,
    /// Free times in the wheel.
    wheeled: usize,
    /// Free times beyond the wheel's reach.
    far: BinaryHeap<Reverse<u64>>,
}

/// Which worker [`Workers::earliest`] found.
#[derive(Debug, Clone, Copy)]
pub(super) enum Worker {
    Idle,
    Wheel { bucket: usize, index: usize },
    Far,
}

impl Workers {
    /// `count` workers, all idle.
    pub(super) fn new(count: u64) -> Self {
        Self {
            idle: count,
            wheel: Box::new(core::array::from_fn(|_| Vec::new())),
            cursor: 0,
            wheeled: 0,
            far: BinaryHeap::new(),
        }
    }

    /// When the earliest worker is free from `now` on (`now` itself if one is idle), and
    /// which it is, for [`hand`](Workers::hand). `now` never goes back.
    pub(super) fn earliest(&mut self, now: u64) -> (u64, Worker) {
        self.advance(now >> BUCKET_BITS);
        if self.idle > 0 {
            return (now, Worker::Idle);
        }
        if self.wheeled > 0 {
            for b in self.cursor..self.cursor + BUCKETS {
                let bucket = (b % BUCKETS) as usize;
                let times = &self.wheel[bucket];
                if let Some((index, &at)) = times.iter().enumerate().min_by_key(|(_, t)| **t) {
                    return (at.max(now), Worker::Wheel { bucket, index });
                }
            }
        }
        match self.far.peek() {
            Some(&Reverse(at)) => (at.max(now), Worker::Far),
            // Every worker is counted somewhere; an empty server has only idle ones.
            None => (now, Worker::Idle),
        }
    }

    /// Gives `worker`, found by the last [`earliest`](Workers::earliest), a call that ends
    /// at `done`.
    pub(super) fn hand(&mut self, worker: Worker, done: u64) {
        match worker {
            Worker::Idle => self.idle = self.idle.saturating_sub(1),
            Worker::Wheel { bucket, index } => {
                self.wheel[bucket].swap_remove(index);
                self.wheeled -= 1;
            }
            Worker::Far => {
                self.far.pop();
            }
        }
        self.put(done);
    }

    /// Files a busy worker's free time.
    fn put(&mut self, at: u64) {
        let b = at >> BUCKET_BITS;
        if b < self.cursor {
            self.idle += 1;
        } else if b < self.cursor + BUCKETS {
            self.wheel[(b % BUCKETS) as usize].push(at);
            self.wheeled += 1;
        } else {
            self.far.push(Reverse(at));
        }
    }

    /// Moves the cursor to bucket `to`, counting every worker free before it as idle.
    fn advance(&mut self, to: u64) {
        while self.cursor < to {
            if self.wheeled == 0 {
                // Nothing in the wheel: jump, up to the first far time's bucket at most.
                let first = self.far.peek().map_or(to, |&Reverse(at)| at >> BUCKET_BITS);
                self.cursor = self.cursor.max(first.min(to));
            } else {
                let times = &mut self.wheel[(self.cursor % BUCKETS) as usize];
                self.idle += times.len() as u64;
                self.wheeled -= times.len();
                times.clear();
                self.cursor += 1;
            }
            while let Some(&Reverse(at)) = self.far.peek() {
                if at >> BUCKET_BITS >= self.cursor + BUCKETS {
                    break;
                }
                self.far.pop();
                self.put(at);
            }
        }
    }
}
