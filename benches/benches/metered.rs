//! What counting costs a layer: each layer of `layer_overhead` (the same setup, in
//! `common::overhead`) built without ironward-tower's `metrics` feature and with it, where a
//! decision increments a counter on a handle registered with an installed recorder.
//!
//! Cargo builds a crate once per set of features, so the two cannot be one binary: this target
//! is built twice, and names its cases by the build: `metered/<piece>/off` without this
//! crate's `metrics` feature (which turns on ironward-tower's); with it, `metered/<piece>/on`
//! and `metered/<piece>/counted`. `scripts/bench` runs the two builds in turn (off, on, off,
//! on, ...), so that each pair is measured minutes apart at most, and sets them side by side
//! in `BENCHMARKS.md` with the per-pair differences:
//!
//! ```text
//! cargo bench -p ironward-benches --bench metered -- --noplot
//! cargo bench -p ironward-benches --bench metered --features metrics -- --noplot
//! ```
//!
//! Both builds install the same recorder, [`Tally`], before any layer is built (a layer
//! registers its handles when it makes its first service, once its name is final), and it
//! hands out one of two kinds of handle:
//!
//! - `on`: no-op handles, as `metrics::NoopRecorder` gives, so the row is what the layer's own
//!   instrumentation costs (the registered handles read, the increment called on them): the
//!   "metrics on and a no-op recorder" case, held to within 10 ns of `off`;
//! - `counted`: real handles, each counter and gauge an `Arc<AtomicU64>` behind
//!   `metrics::Counter::from_arc`, one per key, which is how the exporters' registries
//!   (`metrics-util`'s `AtomicStorage`) keep them, so the row pays what a decision pays in
//!   production short of the exporter's reads: a call through the handle's `dyn CounterFn`
//!   and an atomic add.
//!
//! After each case, the recorder is read back: in an `on` case the layer must have registered
//! its handles and counted nothing, in a `counted` case its admitted counter must have grown
//! over the run, in the `off` build nothing may have been registered at all (the `off` row
//! really is the layer without metrics, which feature unification could otherwise turn on
//! behind the bench's back).
//!
//! A tokio current-thread runtime (time enabled) is entered, not run, as in `layers.rs`: the
//! deadline makes a `tokio::time::Sleep` per request.

mod common;

use common::group;
use common::overhead::{self, Piece};

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use metrics::{Counter, Gauge, Histogram, Key, KeyName, Metadata, Recorder, SharedString, Unit};

/// The states this build times: `off` without this crate's `metrics` feature; with it, `on`
/// (the layer registers and records, to a recorder whose handles do nothing) and `counted`
/// (to handles that count, as an exporter's do).
const STATES: &[&str] = if cfg!(feature = "metrics") {
    &["on", "counted"]
} else {
    &["off"]
};

/// The handles of one kind, one per key, as a registry keeps them.
type Handles = Mutex<Vec<(Key, Arc<AtomicU64>)>>;

/// A recorder that hands out atomic-backed handles and keeps them, so that increments are paid
/// and can be read back; descriptions are dropped.
#[derive(Debug, Default)]
struct Tally {
    counters: Handles,
    gauges: Handles,
    /// Whether registering hands out counting handles; no-op ones otherwise.
    counting: AtomicBool,
    /// How many handles were asked for, counting or not.
    registered: AtomicUsize,
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
        self.registered.fetch_add(1, Ordering::Relaxed);
        if self.counting.load(Ordering::Relaxed) {
            Counter::from_arc(Self::handle(&self.counters, key))
        } else {
            Counter::noop()
        }
    }

    fn register_gauge(&self, key: &Key, _: &Metadata<'_>) -> Gauge {
        self.registered.fetch_add(1, Ordering::Relaxed);
        if self.counting.load(Ordering::Relaxed) {
            Gauge::from_arc(Self::handle(&self.gauges, key))
        } else {
            Gauge::noop()
        }
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
    let runtime = common::timer();
    let _context = runtime.enter();

    let mut c = common::criterion();
    let mut g = group(&mut c, "metered");
    for piece in Piece::ALL {
        for &state in STATES {
            tally.counting.store(state == "counted", Ordering::Relaxed);
            g.bench_function(format!("{}/{state}", piece.name()), |b| {
                let (admitted, registered) = (
                    tally.admitted(piece),
                    tally.registered.load(Ordering::Relaxed),
                );
                overhead::admitted(b, piece);
                let registered = tally.registered.load(Ordering::Relaxed) > registered;
                let counted = tally.admitted(piece) > admitted;
                match state {
                    "off" => assert!(
                        tally.is_empty() && !registered,
                        "a layer built without metrics registered one"
                    ),
                    "on" => assert!(
                        registered && !counted,
                        "{} registered no handle, or one that counts",
                        piece.name()
                    ),
                    _ => assert!(counted, "{} counted no admitted call", piece.name()),
                }
            });
        }
    }
    g.finish();
    c.final_summary();
}
