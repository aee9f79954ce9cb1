//! What a call reports: its attempts, waits and end counted on the layer's
//! [`Retries`], and a `tracing` event at `DEBUG` for each retry and each stop.

use std::sync::Arc;
use std::time::Duration;

use ironward::grpc::{Code, Halt};
use ironward_tokio::meter::Retries;

/// Reports that attempt `attempt` failed with `code` and is retried after `wait`.
pub(super) fn retrying(meter: &Retries<Halt>, attempt: u32, wait: Duration, code: Code) {
    meter.wait(wait);
    tracing::debug!(
        name = meter.name(),
        attempt,
        wait = ?wait,
        status = code.number(),
        reason = code.name(),
        "retrying request"
    );
}

/// Reports that a hedge, attempt `attempt` (1 for the first), is sent `elapsed` into its
/// call.
pub(super) fn hedging(meter: &Retries<Halt>, attempt: u32, elapsed: Duration) {
    meter.hedge();
    tracing::debug!(
        name = meter.name(),
        attempt,
        elapsed = ?elapsed,
        "hedging request"
    );
}

/// A call's end, counted when it comes: how many attempts it sent and how long it waited.
#[derive(Debug, Clone)]
pub(super) struct Ending {
    pub(super) meter: Arc<Retries<Halt>>,
    pub(super) attempts: u32,
    pub(super) waited: Duration,
}

impl Ending {
    /// Counts the call as a success.
    pub(super) fn success(&self) {
        self.meter.ended(None);
    }

    /// Counts the call as ended for `stop`, its last attempt's code `code`; a refusal to
    /// retry is an answer, not an error.
    pub(super) fn stopped(&self, stop: Halt, code: Code) {
        self.meter.ended(Some(stop));
        tracing::debug!(
            name = self.meter.name(),
            attempts = self.attempts,
            waited = ?self.waited,
            status = code.number(),
            stop = Retries::outcome(Some(stop)),
            reason = %stop,
            "not retrying"
        );
    }

    /// Counts the call as `code` says: a success for `OK`, else ended for `stop`.
    pub(super) fn ended(&self, code: Code, stop: Halt) {
        match code {
            Code::Ok => self.success(),
            _ => self.stopped(stop, code),
        }
    }
}
