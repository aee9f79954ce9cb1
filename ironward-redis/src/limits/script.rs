//! What `lua/limits.lua` is sent for a [`Limits`] and what it answers: each limit as the
//! script reads it, the call, and the decoding of the reply into the core's `peek`.

use std::time::Duration;

use ironward_tokio::Quota;

use super::Limits;
use crate::group::{self, Decision, is_cost, units};
use crate::wire::{self, Reading};

/// One limit as `lua/limits.lua` reads it.
#[derive(Debug, Clone, Copy)]
pub(super) enum Shape {
    /// A bucket of finite burst.
    Bucket { rate: f64, burst: f64 },
    /// A bucket of infinite burst, which keeps no state.
    Free,
    /// A log, its window in whole microseconds.
    Sliding { quota: u32, micros: u64 },
    /// A period, its length in whole microseconds.
    Period {
        quota: u32,
        micros: u64,
        align: bool,
    },
}

impl Limits {
    /// The call of `lua/limits.lua` for `key` at `reading`, taking the costs or not.
    pub(super) fn call(
        &self,
        key: &[u8],
        reading: &Reading,
        costs: &[f64],
        take: bool,
    ) -> crate::batch::Call {
        let this = &self.0;
        let mut call = crate::script::LIMITS.call();
        for part in &this.parts {
            call.key(wire::key(&this.name, Some(key), part));
        }
        call.arg(reading.arg()).arg(u8::from(take)).arg(this.ttl_ms);
        for (shape, &cost) in this.shapes.iter().zip(costs) {
            // A cost the core refuses: -1 for a bucket, which it refuses after the refill
            // (as the core refuses it), and for a log or a period 2^32, above any quota.
            let tokens = || {
                if is_cost(cost) {
                    wire::float(cost)
                } else {
                    String::from("-1")
                }
            };
            let units = units(cost).map_or(1 << 32, u64::from);
            match *shape {
                Shape::Bucket { rate, burst } => call
                    .arg("b")
                    .arg(wire::float(rate))
                    .arg(wire::float(burst))
                    .arg(0)
                    .arg(tokens()),
                Shape::Free => call.arg("f").arg(0).arg(0).arg(0).arg(tokens()),
                Shape::Sliding { quota, micros } => {
                    call.arg("l").arg(quota).arg(micros).arg(0).arg(units)
                }
                Shape::Period {
                    quota,
                    micros,
                    align,
                } => call
                    .arg("p")
                    .arg(quota)
                    .arg(micros)
                    .arg(u8::from(align))
                    .arg(units),
            };
        }
        call
    }

    /// The script's reply: whether every limit admitted, and the core's `peek` after it,
    /// each wait counted from `now`. `None` for a reply the script never gives.
    pub(super) fn decode(
        &self,
        reply: &redis::Value,
        reading: &Reading,
        costs: &[f64],
    ) -> Option<(bool, Decision)> {
        let redis::Value::Array(items) = reply else {
            return None;
        };
        let (admitted, limits) = items.split_first()?;
        let shapes = &self.0.shapes;
        if limits.len() != 3 * shapes.len() {
            return None;
        }
        let admitted = match wire::int(admitted)? {
            0 => false,
            1 => true,
            _ => return None,
        };
        let mut waits = Vec::with_capacity(shapes.len());
        for ((limit, shape), &cost) in limits.chunks_exact(3).zip(shapes.iter()).zip(costs) {
            let t = wire::micros(&limit[0])?;
            let wait = match *shape {
                // The core's `next`, asked of a core bucket holding the tokens the script
                // returned at the reading they were counted at, refilled to `t`, as a
                // `Bucket` works its wait out.
                Shape::Bucket { rate, burst } => {
                    let tokens = wire::finite(&limit[1])?;
                    let counted = wire::micros(&limit[2])?;
                    let elapsed = t.checked_sub(counted)?;
                    let counted = Duration::from_micros(counted);
                    let bucket = ironward::Bucket::with_tokens(rate, burst, tokens, counted);
                    let at = counted + Duration::from_micros(elapsed);
                    reading.wait_nanos(t, bucket.next(at, cost))
                }
                _ => reading.wait(t, wire::wait(&limit[1])?),
            };
            waits.push(wait);
        }
        Some((admitted, group::longest(waits)))
    }
}

/// `limit` as the core reads it, as the script reads it, and how long it takes to be as
/// good as new (for its keys' TTL).
pub(super) fn read(limit: &Quota) -> (Quota, Shape, Duration) {
    match *limit {
        Quota::Bucket { rate, burst } => {
            let core = ironward::Bucket::new(rate, burst, Duration::ZERO);
            let (rate, burst) = (core.rate(), core.burst());
            let shape = if burst.is_infinite() {
                Shape::Free
            } else {
                Shape::Bucket { rate, burst }
            };
            (Quota::Bucket { rate, burst }, shape, core.idle())
        }
        Quota::Sliding { quota, window } => {
            let window = ironward::Sliding::new(0, window).window();
            let micros = wire::span_micros(window);
            let shape = Shape::Sliding { quota, micros };
            (
                Quota::Sliding { quota, window },
                shape,
                Duration::from_micros(micros),
            )
        }
        Quota::Period {
            quota,
            period,
            align,
        } => {
            let period = ironward::Period::new(quota, period).period();
            let micros = wire::span_micros(period);
            let shape = Shape::Period {
                quota,
                micros,
                align,
            };
            let limit = Quota::Period {
                quota,
                period,
                align,
            };
            (limit, shape, Duration::from_micros(micros))
        }
    }
}
