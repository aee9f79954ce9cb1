//! Benchmarks of ironward against its Rust peers; the code is in the bench targets
//! `benches/decisions.rs` (the core's decisions), `classic.rs` (the classic breaker, alone and
//! shared by threads), `peers.rs` (throttle-net and tower-resilience), `layers.rs` (the tower
//! layers), `stack.rs` (the server stack as one layer, beside the layers stacked and tower's),
//! `threads.rs` (handles shared by two threads), `ward.rs` (the pool's ward), `metered.rs`
//! (the tower layers with their metrics off, and on with the `metrics` feature) and `e2e.rs`
//! (a real axum server under an open-loop load and a per-IP quota, beside tower_governor and
//! beside no limiter). `scripts/bench` runs them all and writes `BENCHMARKS.md`.
//!
//! It is also where the workspace's README is tested, since it is the one crate that is never
//! packaged and so may read files outside its own folder: the README's Rust examples run as
//! doc tests here (`cargo test --workspace --doc`), and its scenario must be the one
//! `ironward-sim`'s README holds, which that crate's tests run.

/// The workspace README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeDoctests;

#[cfg(test)]
mod tests {
    /// The first TOML block of a README.
    fn scenario(readme: &str) -> &str {
        let start = readme.find("```toml\n").expect("a TOML block") + "```toml\n".len();
        let end = start + readme[start..].find("```").expect("its end");
        &readme[start..end]
    }

    #[test]
    fn the_workspace_readme_shows_the_simulators_tested_scenario() {
        assert_eq!(
            scenario(include_str!("../../README.md")),
            scenario(include_str!("../../ironward-sim/README.md")),
        );
    }
}
