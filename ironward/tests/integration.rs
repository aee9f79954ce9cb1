//! Every integration test of ironward in one binary, a module for each file of tests/: the
//! test build links once instead of once a file. Cargo.toml turns `autotests` off, so a new
//! file here runs once it is declared below (scripts/test checks that each one is). `alloc`
//! stays a binary of its own: it counts every allocation of its process, without the harness.

pub mod bucket_contention;
pub mod budget_contention;
#[path = "classic/main.rs"]
pub mod classic;
pub mod contention;
pub mod foreign;
#[path = "grpc/main.rs"]
pub mod grpc;
#[path = "http_retry/main.rs"]
pub mod http_retry;
pub mod limit_reference;
#[path = "metered/main.rs"]
pub mod metered;
pub mod partitions;
pub mod period_contention;
#[path = "properties/main.rs"]
pub mod properties;
#[path = "retry/main.rs"]
pub mod retry;
pub mod serde;
