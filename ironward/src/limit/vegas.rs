//! The Vegas algorithm's constants.

/// The constants of Vegas.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Vegas {
    /// The limit before any sample.
    pub initial: u32,
}

/// Netflix concurrency-limits' defaults.
pub const VEGAS: Vegas = Vegas { initial: 20 };
