//! Every integration test of ironward-tower in one binary, a module for each file of tests/: the
//! test build links once instead of once a file. Cargo.toml turns `autotests` off, so
//! a new file here runs once it is declared below (scripts/test checks that each one is).
//! `scrape` stays a binary of its own: it installs the process-wide metrics recorder, which
//! would count every other test's decisions too.

mod common;
#[cfg(feature = "metrics")]
#[path = "common/seen.rs"]
mod seen;

use std::alloc::System;

use stats_alloc::{INSTRUMENTED_SYSTEM, StatsAlloc};

/// Counts the allocations of the whole binary, for the tests of `breaker` and `shed` that
/// measure what a refusal allocates: each takes the fewest it saw in many windows, which other
/// tests' threads can only add to.
#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

pub mod breaker;
pub mod chaos;
pub mod chaos_http;
pub mod client;
pub mod client_addr;
pub mod client_config;
pub mod client_http;
pub mod config;
pub mod config_chaos;
pub mod config_http;
pub mod deadline;
pub mod gate;
pub mod limit_http;
pub mod limiter;
pub mod metrics;
pub mod protect;
pub mod rate_limit;
pub mod retry;
pub mod retry_metrics;
pub mod shadow;
pub mod shed;
pub mod tune;
