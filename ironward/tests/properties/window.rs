//! Properties of `Window`: what it shows matches a naive log of every write.

use core::time::Duration;
use std::collections::BTreeMap;

use ironward::Window;
use proptest::prelude::*;

/// A write of `value` at `at`, or a read at `at`.
#[derive(Debug, Clone)]
enum Op {
    Add { at: u64, value: u64 },
    Read { at: u64, current: bool },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0..2_000u64, 1..100u64).prop_map(|(at, value)| Op::Add { at, value }),
        (0..2_000u64, any::<bool>()).prop_map(|(at, current)| Op::Read { at, current }),
    ]
}

/// Every write kept with the start of the bucket it landed in.
struct Log {
    origin: u64,
    width: u64,
    size: u64,
    latest: u64,
    writes: Vec<(u64, u64)>,
}

impl Log {
    fn grid(&self, t: u64) -> u64 {
        self.origin + (t.saturating_sub(self.origin) / self.width) * self.width
    }

    fn add(&mut self, at: u64, value: u64) {
        self.latest = self.latest.max(at);
        // A write earlier than the newest bucket lands in the newest bucket.
        let start = self.grid(self.latest);
        self.writes.push((start, value));
    }

    /// Sums per bucket, oldest first, of the buckets visible at `at`.
    fn visible(&self, at: u64, current: bool) -> Vec<u64> {
        let at = at.max(self.grid(self.latest));
        let mut buckets = BTreeMap::new();
        for &(start, value) in &self.writes {
            let alive = start + self.size * self.width > at;
            let whole = current || start < self.grid(at);
            if alive && whole {
                *buckets.entry(start).or_insert(0) += value;
            }
        }
        buckets.into_values().collect()
    }
}

proptest! {
    /// A window shows exactly the writes of the last `size` widths, in the buckets the grid
    /// fixed at creation puts them in, whatever order the clock readings come in.
    #[test]
    fn shows_what_a_log_of_every_write_shows(
        size in 1..8usize,
        width in 1..60u64,
        origin in 0..100u64,
        ops in prop::collection::vec(op(), 1..120),
    ) {
        let mut window = Window::<u64>::new(size, Duration::from_nanos(width * size as u64), Duration::from_nanos(origin));
        let mut log = Log { origin, width, size: size as u64, latest: origin, writes: Vec::new() };
        for op in ops {
            match op {
                Op::Add { at, value } => {
                    *window.slot(Duration::from_nanos(at)) += value;
                    log.add(at, value);
                }
                Op::Read { at, current } => {
                    let mut seen = Vec::new();
                    let keep = |b: &u64| if *b > 0 { seen.push(*b) };
                    if current {
                        window.each(Duration::from_nanos(at), keep);
                    } else {
                        window.each_past(Duration::from_nanos(at), keep);
                    }
                    prop_assert_eq!(seen, log.visible(at, current));
                }
            }
        }
    }

    /// Two reads at the same instant agree: reading never changes what is there.
    #[test]
    fn reading_changes_nothing(
        size in 1..8usize,
        width in 1..60u64,
        writes in prop::collection::vec((0..1_000u64, 1..10u64), 0..50),
        at in 0..2_000u64,
    ) {
        let mut window = Window::<u64>::new(size, Duration::from_nanos(width * size as u64), Duration::ZERO);
        for (t, v) in writes {
            *window.slot(Duration::from_nanos(t)) += v;
        }
        let read = |w: &Window<u64>| {
            let mut seen = Vec::new();
            w.each(Duration::from_nanos(at), |b| seen.push(*b));
            seen
        };
        let first = read(&window);
        prop_assert!(first.len() <= size);
        prop_assert_eq!(first, read(&window));
    }

    /// No size, span or clock reading panics.
    #[test]
    fn hostile_sizes_and_times_never_panic(
        size in prop_oneof![Just(0usize), Just(1), 2..64usize],
        window in prop_oneof![Just(Duration::ZERO), Just(Duration::MAX), any::<u64>().prop_map(Duration::from_nanos)],
        times in prop::collection::vec(prop_oneof![Just(Duration::ZERO), Just(Duration::MAX), any::<u64>().prop_map(Duration::from_nanos)], 1..20),
    ) {
        let mut w = Window::<u64>::new(size, window, times[0]);
        for &t in &times {
            *w.slot(t) += 1;
            let mut n = 0;
            w.each_past(t, |_| n += 1);
            prop_assert!(n < w.size().max(1));
        }
        prop_assert!(w.width() >= Duration::from_nanos(1));
    }
}
