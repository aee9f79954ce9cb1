//! What every call of a layer's services reads.

use std::fmt;
use std::sync::Arc;

use ironward::SharedBudget;
use ironward::grpc::{Halt, ServiceConfig};
use ironward_tokio::Knobs;
use ironward_tokio::meter::Retries;

/// What every call of a layer's services reads.
#[derive(Clone)]
pub(super) struct Config {
    pub(super) service_config: ServiceConfig,
    pub(super) budget: Option<Arc<SharedBudget>>,
    /// The name (also the meter's), the clock every wait and deadline reads, and the dice of
    /// the jitter; a retry has no shadow mode.
    pub(super) knobs: Knobs,
    pub(super) buffer: usize,
    /// The handles it reports through, registered when the layer makes a service.
    pub(super) meter: Arc<Retries<Halt>>,
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GrpcRetryLayer")
            .field("service_config", &self.service_config)
            .field("budget", &self.budget.as_ref().map(|b| b.tokens()))
            .field("clock", &self.knobs.clock)
            .field("dice", &self.knobs.dice)
            .field("buffer", &self.buffer)
            .field("name", &self.meter.name())
            .finish()
    }
}
