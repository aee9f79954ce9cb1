//! What counting costs a layer: each layer of `layer_overhead` (the same setup, in
//! `common::overhead`) built without ironward-tower's `metrics` feature and with it, where a
//! decision increments a counter on a handle registered with an installed recorder.
//!
//! Cargo builds a crate once per set of features, so the two cannot be one binary: this target
//! is built twice, and names its cases by the build: `metered/<piece>/off` without this
//! crate's `metrics` feature (which turns on ironward-tower's), `metered/<piece>/on` with it.
//! `scripts/bench` runs both builds and sets each pair side by side in `BENCHMARKS.md`:
//!
//! ```text
//! cargo bench -p ironward-benches --bench metered -- --noplot
//! cargo bench -p ironward-benches --bench metered --features metrics -- --noplot
//! ```
//!
//! Both builds install the same recorder, [`Tally`], before any layer is built (a layer
//! registers its handles when it makes its first service, once its name is final). It records
//! nothing anyone reads, but it hands out real handles: each counter and gauge is an
//! `Arc<AtomicU64>` behind `metrics::Counter::from_arc`, one per key, which is how the
//! exporters' registries (`metrics-util`'s `AtomicStorage`) keep them, so an `on` row pays
//! what a decision pays in production short of the exporter's reads: a call through the
//! handle's `dyn CounterFn` and an atomic add. metrics' default with no recorder installed, or
//! `metrics::NoopRecorder` installed, hands out no-op handles whose increment is a test of an
//! empty `Option`; that would time a cheaper path than any application that reads its metrics.
//!
//! After each case, the recorder is read back: in the `on` build the layer's admitted counter
//! must have grown over the run (the increments were paid), in the `off` build nothing may
//! have been registered at all (the `off` row really is the layer without metrics, which
//! feature unification could otherwise turn on behind the bench's back).
//!
//! A tokio current-thread runtime (time enabled) is entered, not run, as in `layers.rs`: the
//! deadline makes a `tokio::time::Sleep` per request.

mod common;

use common::group;
use common::overhead::{self, Piece};

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use metrics::{Counter, Gauge, Histogram, Key, KeyName, Metadata, Recorder, SharedString, Unit};

/// Whether this build counts: `on` with this crate's `metrics` feature, `off` without.
const STATE: &str = if cfg!(feature = "metrics") {
    "on"
} else {
    "off"
};

/// The handles of one kind, one per key, as a registry keeps them.
type Handles = Mutex<Vec<(Key, Arc<AtomicU64>)>>;

/// A recorder that hands out atomic-backed handles and keeps them, so that increments are paid
/// and can be read back; descriptions are dropped.
#[derive(Debug, Default)]
struct Tally {
    counters: Handles,
    gauges: Handles,
}

impl Tally {
    /// The handle of `key` in `handles`, made on first use: registering a key twice (each
    /// sample builds its layer afresh) hands out the same handle, as a registry does.
    fn handle(handles: &Handles, key: &Key) -> Arc<AtomicU64> {
        let mut handles = handles.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, handle)) = handles.iter().find(|(k, _)| k == key) {
            return Arc::clone(handle);
        }
        let handle = Arc::new(AtomicU64::new(0));
        handles.push((key.clone(), Arc::clone(&handle)));
        handle
    }

    /// The calls `piece` has counted as admitted so far, 0 if it registered no counter.
    fn admitted(&self, piece: Piece) -> u64 {
        let counters = self.counters.lock().unwrap_or_else(PoisonError::into_inner);
        counters
            .iter()
            .filter(|(key, _)| {
                let label = |name: &str, value: &str| {
                    key.labels()
                        .any(|label| label.key() == name && label.value() == value)
                };
                key.name() == "ironward.requests"
                    && label("piece", piece.name())
                    && label("outcome", "admitted")
            })
            .map(|(_, handle)| handle.load(Ordering::Acquire))
            .sum()
    }

    /// Whether any handle at all has been registered.
    fn is_empty(&self) -> bool {
        let empty = |handles: &Handles| {
            handles
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .is_empty()
        };
        empty(&self.counters) && empty(&self.gauges)
    }
}

impl Recorder for Tally {
    fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}

    fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}

    fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}

    fn register_counter(&self, key: &Key, _: &Metadata<'_>) -> Counter {
        Counter::from_arc(Self::handle(&self.counters, key))
    }

    fn register_gauge(&self, key: &Key, _: &Metadata<'_>) -> Gauge {
        Gauge::from_arc(Self::handle(&self.gauges, key))
    }

    /// No layer records a histogram.
    fn register_histogram(&self, _: &Key, _: &Metadata<'_>) -> Histogram {
        Histogram::noop()
    }
}

fn main() {
    // Before any layer is built: each registers its handles when it makes its first service.
    let tally: &'static Tally = Box::leak(Box::default());
    metrics::set_global_recorder(tally).expect("the first recorder of the process");
    // Entered, never run: see the module docs.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a tokio runtime");
    let _context = runtime.enter();

    let mut c = common::criterion();
    let mut g = group(&mut c, "metered");
    for piece in Piece::ALL {
        g.bench_function(format!("{}/{STATE}", piece.name()), |b| {
            let before = tally.admitted(piece);
            overhead::admitted(b, piece);
            if cfg!(feature = "metrics") {
                assert!(
                    tally.admitted(piece) > before,
                    "{} counted no admitted call",
                    piece.name()
                );
            } else {
                assert!(
                    tally.is_empty(),
                    "a layer built without metrics registered one"
                );
            }
        });
    }
    g.finish();
    c.final_summary();
}
