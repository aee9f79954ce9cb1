//! The guide: the long form of what the crate root summarises.
//!
//! - [`shared_state`]: one core value per layer, and the locks it takes.
//! - [`retuning`]: changing a policy live, for every clone at once.
//! - [`metrics`]: the series each layer records, their labels, and the `tracing` events.
//! - [`shadow`]: trying a tighter policy on real traffic before it refuses anyone.
//! - [`clocks`]: the clock each layer reads, the coarse clock, and time in tests.
//! - [`limiter`]: the adaptive concurrency limit, its queue and criticality.
//! - [`wire`]: each refusal's HTTP response.
//!
//! In what order a server's layers go, and why, is said once, in
//! [`protect`](crate::protect#the-order), whose [`ProtectLayer`](crate::ProtectLayer) puts
//! them in it (with the `axum` feature).
//!
//! The core's own guide, `ironward::_guide`, says how each policy decides.

pub mod clocks;
pub mod limiter;
pub mod metrics;
pub mod retuning;
pub mod shadow;
pub mod shared_state;
pub mod wire;
