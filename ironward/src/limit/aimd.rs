//! The Aimd algorithm's constants.

/// The constants of Aimd.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Aimd {
    /// The limit before any sample.
    pub initial: u32,
}

/// Netflix concurrency-limits' defaults.
pub const AIMD: Aimd = Aimd { initial: 20 };
