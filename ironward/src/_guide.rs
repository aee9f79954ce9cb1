//! The guide: the long form of what the crate root summarises.
//!
//! Read it in any order; each page stands alone and links to the types it speaks of.
//!
//! - [`inputs`]: time, chance and load are passed in, and why.
//! - [`pieces`]: the breaker, the shedder, the adaptive limiter, backoff, the ward, deadlines
//!   and the rolling window, each with an example.
//! - [`breakers`]: the SRE breaker or the classic one, argued with the simulator's figures;
//!   their costs, the resilience4j, Polly and failsafe-go names, and how to switch.
//! - [`quotas`]: the bucket, the sliding log, the fixed period and the gate; costs per request,
//!   reservations and several limits at once.
//! - [`shared`]: the forms many threads decide on by `&`, and the one rule for where each
//!   lives.
//! - [`http_retry`]: HTTP retry decisions by RFC 9110, and the retry loop.
//! - [`grpc`]: gRPC retries and hedging by proposal A6.
//! - [`refusals`]: why a call was refused, in the numbers that decided it.
//! - [`retune`]: changing a policy live without losing history.
//! - [`edge_cases`]: how every out-of-range input is read.
//! - [`references`]: what each piece reproduces, and where it differs.
//!
//! The tower layers, the HTTP and gRPC clients, the Redis quotas, the pool ward and the
//! simulator are in their own crates, each with a guide of its own.

pub mod breakers;
pub mod edge_cases;
pub mod grpc;
pub mod http_retry;
pub mod inputs;
pub mod pieces;
pub mod quotas;
pub mod references;
pub mod refusals;
pub mod retune;
pub mod shared;
