//! Each ironward layer letting every request through to the inner service, as `layer_overhead`
//! (in `layers.rs`) and `metered` (in `metered.rs`) measure it: one setup for both, so that the
//! two groups time the same layers on the same workload.
//!
//! The breaker, the shedder and the rate limit read a fixed clock (`Clock::from_fn`, an
//! indirect call returning a constant), the breaker a fixed draw and the shedder a fixed cool
//! CPU reading (`Cpu::fixed(100)`), so a row is the layer's own work: the locks, the core's
//! decision and record, the `Arc` clone a breaker's or a shedder's response future holds to
//! settle the call. Their default classifiers (`HttpFailures`, `ShedFailures`) read the
//! response's status.

use std::time::Duration;

use criterion::Bencher;
use criterion::measurement::WallTime;
use http::{Request, Response};
use ironward::{SHED, SRE};
use ironward_tower::{BreakerLayer, Clock, Cpu, DeadlineLayer, Dice, GateLayer, Quota};
use ironward_tower::{QuotaLayer, ShedLayer};
use tower::{Layer, Service, service_fn};

use super::{answer, answered, send};

/// One of ironward-tower's layers, as these benchmarks build it.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Piece {
    /// A healthy breaker (nothing but successes): `allow` in `call` and `pass` when the
    /// response future completes, each under the lock.
    Breaker,
    /// A cool server: `allow` then `pass` likewise.
    Shed,
    /// A token bucket with a burst of 10^15, which a fixed clock never refills and a run never
    /// empties.
    RateLimit,
    /// A limit of 8, entered in `call` and left when the response future completes.
    Gate,
    /// A budget of one second. This layer takes no clock of its own: it reads tokio's (here
    /// `std::time::Instant`) to start the `RequestDeadline` and to compute what is left,
    /// inserts that into the request's extensions (which allocates the extension map, its
    /// table and the value, and frees them when the request is dropped: about 65 ns of the
    /// row) and races the inner future, which answers on the first poll, so that no
    /// `tokio::time::Sleep` is made (one is made only by a poll that finds the inner future
    /// pending).
    Deadline,
}

impl Piece {
    /// Every layer, in the order the groups list them.
    pub(crate) const ALL: [Self; 5] = [
        Self::Breaker,
        Self::Shed,
        Self::RateLimit,
        Self::Gate,
        Self::Deadline,
    ];

    /// The case's name in a benchmark id, which is also the `piece` label the layer counts
    /// its decisions under with ironward-tower's `metrics` feature.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Breaker => "breaker",
            Self::Shed => "shed",
            Self::RateLimit => "rate_limit",
            Self::Gate => "gate",
            Self::Deadline => "deadline",
        }
    }
}

/// What sends the measured requests through a layer's service: criterion's timer, or the
/// `instructions` target's count of laps.
pub(crate) trait Laps {
    /// Sends requests through `service` one a lap, each answered by the inner service.
    fn run<S>(&mut self, service: S)
    where
        S: Service<Request<()>, Response = Response<()>>;
}

/// Times one request a lap through `service`, which must answer before and after the run.
impl Laps for Bencher<'_, WallTime> {
    fn run<S>(&mut self, mut service: S)
    where
        S: Service<Request<()>, Response = Response<()>>,
    {
        assert!(answered(&send(&mut service)));
        self.iter(|| send(&mut service));
        assert!(answered(&send(&mut service)));
    }
}

/// Runs `laps` over one request a lap through `piece`'s layer around the inner service,
/// building the layer first (which is when it registers its metrics handles, if any) and
/// checking, after the run, that it let every request through and holds nothing.
pub(crate) fn admitted(laps: &mut impl Laps, piece: Piece) {
    let fixed = || Clock::from_fn(|| Duration::from_secs(1));
    match piece {
        Piece::Breaker => {
            let layer = BreakerLayer::new(SRE)
                .with_clock(fixed())
                .with_dice(Dice::from_fn(|| 0.5));
            laps.run(layer.layer(service_fn(answer)));
            assert_eq!(layer.ratio(), 0.0);
        }
        Piece::Shed => {
            let layer = ShedLayer::new(SHED, Cpu::fixed(100)).with_clock(fixed());
            laps.run(layer.layer(service_fn(answer)));
            assert_eq!(layer.flying(), 0);
        }
        Piece::RateLimit => {
            let layer = QuotaLayer::new(Quota::bucket(1.0, 1e15)).with_clock(fixed());
            laps.run(layer.layer(service_fn(answer)));
        }
        Piece::Gate => {
            let layer = GateLayer::new(8);
            laps.run(layer.layer(service_fn(answer)));
            assert_eq!(layer.held(), 0);
        }
        Piece::Deadline => {
            laps.run(DeadlineLayer::new(Duration::from_secs(1)).layer(service_fn(answer)));
        }
    }
}
