//! How the thread benches run: every thread pinned to a core of its own where the machine
//! allows it, started together on its own state, the wall time from the first start to the
//! last end, and the decisions each allowed.
//!
//! Pinning: worker `i` of a measurement is pinned to core `i mod n` of the `n` cores this
//! process may run on (its affinity mask, read once before any worker is pinned), so that the
//! two workers of a two-thread row run on two cores rather than wherever the scheduler moves
//! them, and a one-thread row's worker always on the same one. Where the machine will not
//! say which cores the process may use, or refuses to pin a thread, the workers run unpinned,
//! as they would without this harness: the bench goes on. The process states which it did in
//! one line on standard error, the first time it needs to know (`threads harness: workers
//! pinned ...` or `threads harness: ... workers unpinned`), which `scripts/bench` reads.

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Barrier, Mutex, MutexGuard, OnceLock, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use core_affinity::CoreId;
use criterion::{BenchmarkGroup, measurement::WallTime};
use failsafe::CircuitBreaker as _;

/// The cores this process may run on, read on first use (from the main thread, which is never
/// pinned, so the whole mask), or `None` where the machine will not say.
fn cores() -> Option<&'static [CoreId]> {
    static CORES: OnceLock<Option<Vec<CoreId>>> = OnceLock::new();
    CORES
        .get_or_init(|| {
            let cores = core_affinity::get_core_ids().filter(|cores| !cores.is_empty());
            match &cores {
                Some(cores) => eprintln!(
                    "threads harness: workers pinned one to a core, worker i to core i mod {} \
                     of cores {:?}",
                    cores.len(),
                    cores.iter().map(|core| core.id).collect::<Vec<_>>()
                ),
                None => eprintln!(
                    "threads harness: the cores this process may use are unknown; workers unpinned"
                ),
            }
            cores
        })
        .as_deref()
}

/// Pins the calling thread, worker `worker` of its measurement, to its core; leaves it
/// unpinned where the machine does not allow it, saying so once.
fn pin(worker: usize) {
    static REFUSED: AtomicBool = AtomicBool::new(false);
    if let Some(cores) = cores()
        && !core_affinity::set_for_current(cores[worker % cores.len()])
        && !REFUSED.swap(true, Ordering::Relaxed)
    {
        eprintln!("threads harness: pinning refused by the machine; workers unpinned");
    }
}

/// Makes `iters` decisions over as many threads as `states` has entries, one state each (a
/// reference to the shared handle, or a clone of a service sharing it), each thread pinned to
/// its core (see the module's doc) and started together. Returns the wall time from the
/// first start to the last end, and how many decisions `decide` allowed.
pub(crate) fn run<T: Send>(
    iters: u64,
    states: Vec<T>,
    decide: impl Fn(&mut T) -> bool + Sync,
) -> (Duration, u64) {
    let threads = states.len() as u64;
    let barrier = Barrier::new(states.len());
    // Read the cores here, on the calling thread, before any worker pins itself.
    cores();
    let spans: Vec<(Instant, Instant, u64)> = thread::scope(|s| {
        let workers: Vec<_> = (0u64..)
            .zip(states)
            .map(|(i, mut state)| {
                let count = iters / threads + u64::from(i < iters % threads);
                let (barrier, decide) = (&barrier, &decide);
                let worker = usize::try_from(i).expect("fewer workers than a usize holds");
                s.spawn(move || {
                    pin(worker);
                    barrier.wait();
                    let start = Instant::now();
                    let mut allowed = 0u64;
                    for _ in 0..count {
                        allowed += u64::from(black_box(decide(&mut state)));
                    }
                    (start, Instant::now(), allowed)
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|worker| worker.join().expect("a bench thread panicked"))
            .collect()
    });
    let start = spans
        .iter()
        .map(|span| span.0)
        .min()
        .expect("at least one thread");
    let end = spans
        .iter()
        .map(|span| span.1)
        .max()
        .expect("at least one thread");
    (end - start, spans.iter().map(|span| span.2).sum())
}

/// Benches `decide` on `threads` threads sharing what `states` makes, checking that every
/// decision was allowed (`allowed`) or that none was.
pub(crate) fn shared<'a, T: Send>(
    g: &mut BenchmarkGroup<'a, WallTime>,
    id: &str,
    threads: usize,
    allowed: bool,
    states: impl Fn(usize) -> Vec<T>,
    decide: impl Fn(&mut T) -> bool + Sync,
) {
    g.bench_function(id, |b| {
        b.iter_custom(|iters| {
            let (elapsed, passed) = run(iters, states(threads), &decide);
            assert_eq!(passed, if allowed { iters } else { 0 }, "{id}");
            elapsed
        });
    });
}

/// Benches failsafe's breaker (`common::failsafe_breaker`, opened first unless `healthy`)
/// shared by `threads` threads as `failsafe/<case>`: each call its `call` of a closure that
/// succeeds, which takes its lock to ask and, closed, again to record.
pub(crate) fn failsafe<'a>(
    g: &mut BenchmarkGroup<'a, WallTime>,
    case: &str,
    threads: usize,
    healthy: bool,
) {
    let failsafe = crate::common::failsafe_breaker(!healthy);
    let breaker = &failsafe;
    shared(
        g,
        &format!("failsafe/{case}"),
        threads,
        healthy,
        |n| vec![breaker; n],
        |breaker| breaker.call(|| Ok::<_, ()>(black_box(1u8))).is_ok(),
    );
    assert_eq!(failsafe.is_call_permitted(), healthy);
}

/// Locks a shared core value; nothing here panics under the lock, but a poisoned lock would
/// still hold a sound value, as ironward-tower reads it.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
