//! When each peer's requests reached the server: the span a limiter saw, which the promise
//! is measured over.
//!
//! The span of a client's sends is not it: a request waits in the client's pool, the kernel
//! and the server's queue before the limiter reads its clock, and when the machine falls
//! behind, the last requests of a run reach the server long after they were sent, so a
//! promise over the sends would be short of what the limiter may rightly admit. A layer
//! outside the limiter, in every variant alike, records each peer's first and last arrival:
//! one clock reading and two atomic updates a request, against the server's microseconds.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use http::Request;
use tower::util::MapRequestLayer;

/// The first and last arrival of each client's requests, in nanoseconds from `origin`.
#[derive(Debug)]
pub(crate) struct Arrivals {
    origin: Instant,
    /// Client `i` is the peer at `sources[i]`.
    sources: Vec<IpAddr>,
    first: Vec<AtomicU64>,
    last: Vec<AtomicU64>,
}

impl Arrivals {
    /// No arrival yet from any of `sources`.
    pub(crate) fn new(sources: &[IpAddr]) -> Arc<Self> {
        Arc::new(Self {
            origin: Instant::now(),
            sources: sources.to_vec(),
            first: sources.iter().map(|_| AtomicU64::new(u64::MAX)).collect(),
            last: sources.iter().map(|_| AtomicU64::new(0)).collect(),
        })
    }

    /// `app` with a layer outside all of its own that records each arrival from a client's
    /// peer address; others (the warm-up's) pass unrecorded.
    pub(crate) fn around(self: &Arc<Self>, app: Router) -> Router {
        let arrivals = Arc::clone(self);
        app.layer(MapRequestLayer::new(move |request: Request<Body>| {
            arrivals.record(&request);
            request
        }))
    }

    fn record(&self, request: &Request<Body>) {
        let Some(ConnectInfo(peer)) = request.extensions().get::<ConnectInfo<SocketAddr>>() else {
            return;
        };
        let Some(client) = self.sources.iter().position(|&ip| ip == peer.ip()) else {
            return;
        };
        let now = u64::try_from(self.origin.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.first[client].fetch_min(now, Ordering::Relaxed);
        self.last[client].fetch_max(now, Ordering::Relaxed);
    }

    /// Each client's span from its first arrival to its last; `None` for a client none of
    /// whose requests arrived.
    pub(crate) fn spans(&self) -> Vec<Option<Duration>> {
        self.first
            .iter()
            .zip(&self.last)
            .map(|(first, last)| {
                let (first, last) = (first.load(Ordering::Relaxed), last.load(Ordering::Relaxed));
                (first <= last).then(|| Duration::from_nanos(last - first))
            })
            .collect()
    }
}
