//! The guide: the long form of what the crate root summarises.
//!
//! - [`deadlines`]: how the time budget holds, attempt by attempt.
//! - [`testing`]: a manual clock and scripted dice in tests.
//! - [`metrics`]: the series the middleware and the breaker record, and their `tracing` events.
//! - [`edge_cases`]: how unusual requests, responses and clocks are read.
//!
//! The retry rules themselves are the core's: `ironward::http_retry` and `ironward::_guide`.

pub mod deadlines;
pub mod edge_cases;
pub mod metrics;
pub mod testing;
