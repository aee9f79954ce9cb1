//! Every integration test of ironward-tokio in one binary, a module for each file of tests/: the
//! test build links once instead of once a file. Cargo.toml turns `autotests` off, so
//! a new file here runs once it is declared below (scripts/test checks that each one is).

pub mod breaker_contention;
pub mod call_breaker;
pub mod call_chaos;
pub mod call_concurrency;
pub mod call_fallback;
pub mod call_hedge;
pub mod call_hour;
#[cfg(feature = "metrics")]
pub mod call_metrics;
pub mod call_pipeline;
pub mod call_pipeline_more;
pub mod call_rate;
pub mod call_retry;
pub mod call_retry_more;
pub mod call_timeout;
pub mod classic_contention;
pub mod foreign;
pub mod shared_breaker;
pub mod shared_classic;
pub mod shared_limiter;
pub mod shared_partitions;
pub mod shared_shedder;
