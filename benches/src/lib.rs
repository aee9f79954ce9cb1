//! Benchmarks of ironward against its Rust peers; the code is in the bench targets
//! `benches/decisions.rs` (the core's decisions), `peers.rs` (throttle-net and
//! tower-resilience), `layers.rs` (the tower layers) and `threads.rs` (handles shared by two
//! threads). `scripts/bench` runs them all and writes `BENCHMARKS.md`.
