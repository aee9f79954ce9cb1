//! Every integration test of ironward-pool in one binary, a module for each file of tests/: the
//! test build links once instead of once a file. Cargo.toml turns `autotests` off, so
//! a new file here runs once it is declared below (scripts/test checks that each one is).
//! `events` stays a binary of its own: `tracing` caches whether a callsite is wanted when it
//! is first hit, and a test here without a subscriber could have it cached as wanted by none.

mod common;

#[cfg(all(feature = "deadpool", feature = "bb8"))]
pub mod adapters;
#[cfg(feature = "bb8")]
pub mod bb8_outage;
#[cfg(feature = "deadpool")]
pub mod flapping;
#[cfg(feature = "deadpool")]
pub mod outage;
#[cfg(feature = "deadpool")]
pub mod outage_classic;
