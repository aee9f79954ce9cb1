//! Clock and dice: the ward's sources, and a test's own.
//!
//! The ward reads tokio's monotonic clock and real randomness by default; a test passes its
//! own with [`Warded::with_clock`] ([`Clock::manual`](ironward_tokio::Clock::manual)) and
//! [`Warded::with_dice`] (a [`Dice::from_fn`](ironward_tokio::Dice::from_fn) of fixed draws).
//!
//! [`Warded::with_clock`]: crate::Warded::with_clock
//! [`Warded::with_dice`]: crate::Warded::with_dice
