//! The guide: the built-in scenarios and what each comparison shows, and the command's options.
//!
//! - [`scenarios`]: what each built-in scenario compares, and what to look for in its run.
//! - [`command`]: the command's subcommands and options, and how to read a picture.
//!
//! The model and the library are in the crate root's docs; the scenario file's fields are
//! [`Scenario`](crate::Scenario)'s and [`Variant`](crate::Variant)'s.

pub mod command;
pub mod scenarios;
