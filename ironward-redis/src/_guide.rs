//! The guide: the long form of what the crate root summarises.
//!
//! - [`scripts`]: the Lua scripts, keys, servers, TTLs, and refusals remembered.
//! - [`batches`]: decisions that wait together sent as one call.
//! - [`equivalence`]: how time is read so that every answer is the core's.
//! - [`clocks`]: the caller's clock or Redis's `TIME`.
//! - [`failover`]: the local fallback and the bounds on what it admits.
//! - [`eviction`]: `maxmemory-policy` and the warning at connect.
//! - [`metrics`]: the series a store records, and its `tracing` events.
//! - [`edge_cases`]: how out-of-range input is read.

pub mod batches;
pub mod clocks;
pub mod edge_cases;
pub mod equivalence;
pub mod eviction;
pub mod failover;
pub mod metrics;
pub mod scripts;
