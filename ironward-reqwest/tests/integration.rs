//! Every integration test of ironward-reqwest in one binary, a module for each file of tests/: the
//! test build links once instead of once a file. Cargo.toml turns `autotests` off, so
//! a new file here runs once it is declared below (scripts/test checks that each one is).

#[path = "common/http_date.rs"]
mod http_date;

pub mod chaos;
pub mod edges;
pub mod families;
pub mod front_door;
pub mod metrics;
pub mod scenarios;
