//! Clocks in production and in tests.
//!
//! The default [`Clock`] is tokio's monotonic clock, so `tokio::time::pause` and `advance` drive
//! every layer deterministically; [`Dice::from_fn`] and [`Cpu::scripted`] script the rest.
//!
//! Every layer reads its clock once per decision (the breaker and the shedder once more when the
//! call ends, where the outcome or the response time is measured). `Clock::coarse(resolution)`
//! makes that read one atomic load of what a ticker thread stores, at the price of readings up to
//! a tick late; the default stays the exact, pausable monotonic clock.
//!
//! [`Clock`]: crate::Clock
//! [`Dice::from_fn`]: crate::Dice::from_fn
//! [`Cpu::scripted`]: crate::Cpu::scripted
