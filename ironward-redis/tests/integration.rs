//! Every integration test of ironward-redis in one binary, a module for each file of tests/: the
//! test build links once instead of once a file. Each test starts its own server, so tests
//! that kill, pause or fill theirs touch no other's. Cargo.toml turns `autotests` off, so
//! a new file here runs once it is declared below (scripts/test checks that each one is).
//! `events` stays a binary of its own: `tracing` caches whether a callsite is wanted when it
//! is first hit, and a test here without a subscriber could have it cached as wanted by none.

mod common;

pub mod batches;
pub mod blocked;
pub mod clock;
pub mod cluster;
pub mod contention;
pub mod equivalence;
pub mod eviction;
pub mod fault;
pub mod front_door;
#[cfg(feature = "tower")]
pub mod layer;
pub mod lazy;
pub mod limits;
pub mod limits_edges;
pub mod limits_processes;
pub mod metered;
pub mod metrics;
pub mod periods;
pub mod periods_contention;
pub mod rate_call;
pub mod reservations;
pub mod settles;
pub mod store;
pub mod valkey;
pub mod valkey_faults;
