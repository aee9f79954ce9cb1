//! The Gradient2 algorithm's constants.

/// The constants of Gradient2.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gradient2 {
    /// The limit before any sample.
    pub initial: u32,
}

/// Netflix concurrency-limits' defaults.
pub const GRADIENT2: Gradient2 = Gradient2 { initial: 20 };
