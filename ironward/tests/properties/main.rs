//! Property tests of the core: invariants over random operations, random times and hostile
//! values (NaN, infinities, zero and `Duration::MAX` spans, `u32::MAX` quotas), each checked
//! against a naive model where one exists.

mod backoff;
mod breaker;
mod bucket;
mod budget;
mod classic;
mod deadline;
mod gate;
mod partitions;
mod period;
mod shared_bucket;
mod shared_budget;
mod shared_gate;
mod shared_period;
mod shedder;
mod sliding;
mod strategies;
mod ward;
mod window;
