//! The simulator through its public API: determinism, the built-in scenarios' comparisons,
//! and the scenario format.

mod builtins;
mod determinism;
mod format;
