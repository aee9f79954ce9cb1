//! The simulator through its public API: determinism, the built-in scenarios' comparisons,
//! the scenario format, and verdicts that state only what a run measured.

mod builtins;
mod cli;
mod determinism;
mod drive;
mod format;
mod verdicts;
