//! Time, chance and load are passed in: why nothing here reads a clock or draws a number.
//!
//! Nothing in `ironward` reads a clock or draws a random number. Each decision takes what it
//! needs as an argument:
//!
//! - **`now: Duration`** is what the caller's monotonic clock reads, as time since the caller's
//!   own epoch: `start.elapsed()` for an `Instant` taken at start-up, or `SystemTime::now()`
//!   since `UNIX_EPOCH` where a period must line up with calendar time (a daily quota that
//!   resets at midnight UTC). A reading earlier than one already seen is read as the latest
//!   seen, so a clock that steps backwards never frees capacity and never panics
//!   ([edge cases](super::edge_cases)).
//! - **`roll` / `random: f64`** is a draw from `[0, 1)` the caller makes (`rand::random()`, or a
//!   generator with a fixed start in a test). NaN and values outside the range are clamped into
//!   it.
//! - **`cpu: u32`** is CPU use in thousandths (0 to 1000), however the caller measures it.
//!
//! A breaker that read the clock itself could only be tested by waiting, and one that drew its
//! own numbers could not be tested at all. Here a test, a simulator and a server run the same
//! code:
//!
//! ```rust
//! use std::time::{Duration, Instant};
//! use ironward::{SreBreaker, Sre};
//!
//! // In a server: the real clock and real randomness, read at the edge.
//! let start = Instant::now();
//! let mut breaker = SreBreaker::new(Sre::default(), start.elapsed());
//! let draw = 0.42; // e.g. rand::random::<f64>()
//! if let Some(permit) = breaker.allow(start.elapsed(), draw) {
//!     // ... make the call ...
//!     breaker.pass(permit, start.elapsed());
//! }
//!
//! // In a test: an hour of traffic is a loop over `now`.
//! let mut breaker = SreBreaker::new(Sre::default(), Duration::ZERO);
//! for second in 0..3_600u64 {
//!     let now = Duration::from_secs(second);
//!     if let Some(permit) = breaker.allow(now, 0.5) {
//!         breaker.pass(permit, now + Duration::from_millis(20));
//!     }
//! }
//! assert_eq!(breaker.ratio(Duration::from_secs(3_600)), 0.0);
//! ```
//!
//! The edges (`ironward-tower`, `ironward-reqwest`, `ironward-tonic`, `ironward-pool`) read the
//! real clock and real randomness through `ironward-tokio`'s `Clock` and `Dice`, and a test can
//! hand them a manual clock instead.
//!
//! A policy is a plain record with public fields; `Default` is the reference preset, also
//! available as a constant ([`SRE`], [`SHED`], [`BACKOFF`], [`ADAPTIVE`], [`RECONNECT`]), and a
//! policy is changed the Rust way: `Sre { k: 2.0, ..Sre::default() }`.
//!
//! [`SRE`]: crate::SRE
//! [`SHED`]: crate::SHED
//! [`BACKOFF`]: crate::BACKOFF
//! [`ADAPTIVE`]: crate::ADAPTIVE
//! [`RECONNECT`]: crate::RECONNECT
