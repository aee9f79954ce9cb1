//! Benchmarks of ironward's decisions against its Rust peers; the code is in `benches/decisions.rs`.
