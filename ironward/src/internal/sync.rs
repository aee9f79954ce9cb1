//! The atomics the shared forms are built on: `core`'s, or under `--cfg loom` the model
//! checker's, so that what [loom](https://docs.rs/loom) explores is the code that ships.
//!
//! `scripts/test` runs the models in `sync/models.rs` with `RUSTFLAGS="--cfg loom" cargo test
//! -p ironward --lib --profile loom -- internal::sync::models::`: every
//! interleaving of two or three threads on one shared form (with at most three preemptions),
//! each checked against what the form promises under overlap.

#[cfg(not(loom))]
pub(crate) use core::hint::spin_loop;
#[cfg(not(loom))]
pub(crate) use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

#[cfg(loom)]
pub(crate) use core::sync::atomic::Ordering;
#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicU64};

/// A spinning thread yields to the model, which would otherwise explore it spinning for
/// ever.
#[cfg(loom)]
pub(crate) fn spin_loop() {
    loom::thread::yield_now();
}

/// A `const fn`, or under `--cfg loom` a plain one: loom records every atomic a run of a
/// model makes, so none can be made in a constant.
macro_rules! const_fn {
    ($(#[$attr:meta])* $vis:vis fn $($item:tt)*) => {
        #[cfg(not(loom))]
        $(#[$attr])* $vis const fn $($item)*
        #[cfg(loom)]
        $(#[$attr])* $vis fn $($item)*
    };
}
pub(crate) use const_fn;

#[cfg(all(test, loom))]
mod models;
