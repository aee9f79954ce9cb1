//! Properties of `Breaker`: its ratio matches a naive log of every outcome, a refusal only
//! ever happens under the ratio, and hostile input never panics.

use core::time::Duration;
use std::collections::BTreeMap;

use ironward::{Breaker, SRE, Sre, Tally};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    /// Ask at `at` with a draw of `roll`; settle at `done` (a success or a failure), if let through.
    Call {
        at: u64,
        roll: f64,
        done: u64,
        ok: bool,
    },
    Ratio {
        at: u64,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..20_000u64, 0.0..1.0f64, 0..300u64, prop::bool::weighted(0.3))
            .prop_map(|(at, roll, took, ok)| Op::Call { at, roll, done: at + took, ok }),
        1 => (0..20_000u64).prop_map(|at| Op::Ratio { at }),
    ]
}

/// The drop ratio computed from scratch from every outcome ever recorded.
struct Log {
    sre: Sre,
    width: u64,
    latest: u64,
    /// (start of the bucket it landed in, the outcome's effect)
    records: Vec<(u64, Tally)>,
}

impl Log {
    fn grid(&self, t: u64) -> u64 {
        t / self.width * self.width
    }

    fn record(&mut self, at: u64, ok: Option<bool>) {
        self.latest = self.latest.max(at);
        let tally = match ok {
            Some(true) => Tally {
                total: 1,
                success: 1,
                failure: 0,
                drop: 0,
            },
            Some(false) => Tally {
                total: 1,
                success: 0,
                failure: 1,
                drop: 0,
            },
            None => Tally {
                total: 1,
                success: 0,
                failure: 0,
                drop: 1,
            },
        };
        let start = self.grid(self.latest);
        self.records.push((start, tally));
    }

    fn ratio(&self, at: u64) -> f64 {
        let at = at.max(self.latest);
        let size = self.sre.size as u64;
        let mut buckets: BTreeMap<u64, Tally> = BTreeMap::new();
        for (start, t) in &self.records {
            if start + size * self.width > at {
                let b = buckets.entry(*start).or_default();
                b.total += t.total;
                b.success += t.success;
                b.failure += t.failure;
                b.drop += t.drop;
            }
        }
        let (mut accepts, mut total, mut working, mut failing) = (0u64, 0u64, 0usize, 0usize);
        for b in buckets.values() {
            accepts += b.success;
            total += b.total;
            if b.success > 0 && b.failure == 0 {
                working += 1;
                failing = 0;
            } else if b.failure > 0 && b.success == 0 {
                failing += 1;
                working = 0;
            } else if b.success > 0 {
                working = 0;
                failing = 0;
            }
        }
        let Sre {
            k,
            floor,
            protection,
            size,
            ..
        } = self.sre;
        let w = (k - (k - floor) * failing as f64 / size as f64).max(floor);
        let drop = (total as f64 - protection - w * accepts as f64) / (total as f64 + 1.0);
        (drop * ((size - working) as f64 / size as f64)).max(0.0)
    }
}

/// A breaker constant: ordinary values around the preset, hostile ones (NaN, both infinities,
/// negatives, the extremes of `f64`) and any `f64` at all.
fn constant(ordinary: f64) -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(-1.0),
        Just(f64::MAX),
        Just(0.0),
        any::<f64>(),
        0.0..ordinary,
    ]
}

proptest! {
    /// The breaker's ratio is the SRE formula over exactly the outcomes of the last window,
    /// a refusal only happens for a draw under the ratio, and a clock that goes backwards
    /// reads as the latest seen.
    #[test]
    fn agrees_with_a_log_of_every_outcome(
        size in 1..12usize,
        ops in prop::collection::vec(op(), 1..150),
    ) {
        let sre = Sre { size, window: Duration::from_millis(250) * size as u32, ..SRE };
        let mut breaker = Breaker::new(sre, Duration::ZERO);
        let mut log = Log { sre, width: 250_000_000, latest: 0, records: Vec::new() };
        let ms = Duration::from_millis;
        for op in ops {
            match op {
                Op::Call { at, roll, done, ok } => {
                    let ratio = breaker.ratio(ms(at));
                    prop_assert_eq!(ratio, log.ratio(at * 1_000_000));
                    match breaker.allow(ms(at), roll) {
                        Some(permit) => {
                            log.latest = log.latest.max(at * 1_000_000);
                            if ok { breaker.pass(permit, ms(done)) } else { breaker.fail(permit, ms(done)) }
                            log.record(done * 1_000_000, Some(ok));
                        }
                        None => {
                            prop_assert!(roll < ratio, "refused a draw of {} over the ratio {}", roll, ratio);
                            log.record(at * 1_000_000, None);
                        }
                    }
                }
                Op::Ratio { at } => {
                    let ratio = breaker.ratio(ms(at));
                    prop_assert!((0.0..1.0).contains(&ratio));
                    prop_assert_eq!(ratio, log.ratio(at * 1_000_000));
                }
            }
        }
    }

    /// No policy, draw or clock reading panics; the ratio always lies in `[0, 1]` and agrees
    /// with `allow`: a refusal only for a draw under it, none at all when it is 0, and none
    /// ever when a constant is NaN or infinite (the crate docs' "Edge cases").
    #[test]
    fn hostile_input_never_panics(
        k in constant(3.0),
        floor in constant(3.0),
        protection in constant(10.0),
        size in prop_oneof![Just(0usize), Just(1), 2..100usize, Just(usize::MAX)],
        window in prop_oneof![Just(Duration::ZERO), Just(Duration::MAX), any::<u64>().prop_map(Duration::from_nanos)],
        probe in prop_oneof![Just(Duration::ZERO), Just(Duration::MAX), any::<u64>().prop_map(Duration::from_nanos)],
        calls in prop::collection::vec((
            prop_oneof![Just(Duration::ZERO), Just(Duration::MAX), any::<u64>().prop_map(Duration::from_nanos)],
            prop_oneof![Just(f64::NAN), Just(f64::INFINITY), Just(f64::NEG_INFINITY), Just(1.0), any::<f64>()],
            any::<bool>(),
        ), 1..60),
    ) {
        let off = [k, floor, protection].iter().any(|c| c.is_nan() || *c == f64::INFINITY);
        let mut breaker = Breaker::new(Sre { k, floor, protection, probe, size, window }, calls[0].0);
        for (now, roll, ok) in calls {
            let ratio = breaker.ratio(now);
            prop_assert!((0.0..=1.0).contains(&ratio), "a ratio of {}", ratio);
            if off {
                prop_assert_eq!(ratio, 0.0);
            }
            match breaker.allow(now, roll) {
                Some(permit) => {
                    if ok { breaker.pass(permit, now) } else { breaker.fail(permit, now) }
                }
                None => {
                    // Draws are clamped into [0, 1): NaN and negatives are 0.
                    let draw = if roll > 0.0 { roll } else { 0.0 };
                    prop_assert!(draw < ratio, "refused a draw of {} at a ratio of {}", roll, ratio);
                }
            }
        }
    }
}
