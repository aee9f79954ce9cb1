//! Adaptive concurrency limits: how many calls may be in flight at once, following the
//! latency the backend shows, with callers' criticality deciding who is refused first.
//!
//! The pieces, after Netflix's concurrency-limits library:
//!
//! - an [`Estimator`] runs one algorithm ([`Aimd`], [`Vegas`], [`Gradient2`], [`Little`] or
//!   [`Failsafe`]) over one [`Sample`] per sampling window and says what the limit is now;
//! - a [`Sampler`] turns the latencies of finished calls into that one sample per window (an
//!   average or a percentile of the window's latencies, allocation-free);
//! - a [`Limiter`] counts the calls in flight against the limit, admits by
//!   [`Criticality`](crate::Criticality), and feeds its sampler and estimator as calls
//!   settle.

mod adaptive;
mod aimd;
mod estimator;
mod failsafe;
mod gradient2;
mod limiter;
mod little;
mod sample;
mod sampler;
mod vegas;

pub use adaptive::{ADAPTIVE, Adaptive};
pub use aimd::{AIMD, Aimd};
pub use estimator::{Algorithm, Estimator};
pub use failsafe::{FAILSAFE, FAILSAFE_SAMPLING, Failsafe};
pub use gradient2::{GRADIENT2, Gradient2};
pub use limiter::{Grant, Limiter, LimiterReason, Partitions, Settle};
pub use little::{LITTLE, Little};
pub use sample::{Sample, Scale};
pub use sampler::{Latency, SAMPLING, Sampler, Sampling};
pub use vegas::{Decrease, VEGAS, Vegas};
