//! The guide: the long form of what the crate root summarises.
//!
//! - [`differences`]: where the layer departs from grpc-go, and why.
//! - [`metrics`]: the series the layer records, and its `tracing` events.
//! - [`chaos`]: faults injected on purpose, on a client or a server, and how to replay them.
//!
//! The [`retry`](crate::retry) module says what one call does, step by step; the decisions are
//! the core's (`ironward::grpc`, and `ironward::_guide::grpc`).

pub mod chaos;
pub mod differences;
pub mod metrics;
