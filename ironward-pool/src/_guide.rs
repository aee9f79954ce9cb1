//! The guide: the long form of what the crate root summarises.
//!
//! - [`ward`]: what each connect asks, the default policy, and how it differs from the pools'
//!   own retry.
//! - [`testing`]: a manual clock and fixed draws in tests.
//! - [`metrics`]: the series a ward records, and its `tracing` events.

pub mod metrics;
pub mod testing;
pub mod ward;
