//! What the policies are built from and no user names: float helpers for a `no_std` crate,
//! the rule for reading a policy's constants, the rank a percentile reads, the owner marks on tokens, and the atomics and
//! cache lines the shared forms stand on.
//!
//! A policy's own folder holds its decision, its reason, its shared form and its tests; a
//! helper lives here once two policies need it.

pub(crate) mod constant;
pub(crate) mod extremes;
pub(crate) mod float;
#[cfg(feature = "serde")]
pub mod humane;
#[cfg(target_has_atomic = "64")]
pub(crate) mod line;
#[cfg(doctest)]
mod must_use;
pub(crate) mod owner;
pub(crate) mod rank;
#[cfg(target_has_atomic = "64")]
pub(crate) mod sync;
#[cfg(test)]
pub(crate) mod walk;
