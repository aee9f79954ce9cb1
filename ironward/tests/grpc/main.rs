//! `ironward::grpc` through its public API, after gRPC proposal A6 and grpc-go.
//!
//! - `retry`: the retry plan against grpc-go's `test/retry_test.go` (`TestRetryUnary`,
//!   `TestRetryThrottling`, `TestRetryStreaming`'s pushback cases, `TestMaxCallAttempts`) and
//!   `stream.go`'s `shouldRetry`, replayed with the clock passed in.
//! - `streaming`: the rest of `TestRetryStreaming`'s cases, as a table.
//! - `hedging`: the hedging plan against A6's "Hedging Policy" and "Summary of Retry and
//!   Hedging Logic" (grpc-go has no hedging to port from).
//! - `config` (feature `serde`): the service config against grpc-go's `service_config_test.go`
//!   and `internal/serviceconfig/duration_test.go`.
//! - `properties`: for random policies, codes, pushbacks, clocks and draws (NaN, infinities
//!   and draws outside `[0, 1)` among them), no input panics, no call makes more than
//!   `min(maxAttempts, 5)` attempts, the budget stays in `[0, maxTokens]`, no attempt is
//!   scheduled at or past the deadline, and no backoff passes its bound.

#[cfg(feature = "serde")]
mod config;
mod hedging;
mod properties;
mod retry;
mod streaming;
