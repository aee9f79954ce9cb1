//! How the thread benches run: every thread started together on its own state, the wall time
//! from the first start to the last end, and the decisions each allowed.

use std::hint::black_box;
use std::sync::{Barrier, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use criterion::{BenchmarkGroup, measurement::WallTime};
use failsafe::CircuitBreaker as _;

/// Makes `iters` decisions over as many threads as `states` has entries, one state each (a
/// reference to the shared handle, or a clone of a service sharing it), started together.
/// Returns the wall time from the first start to the last end, and how many decisions
/// `decide` allowed.
pub(crate) fn run<T: Send>(
    iters: u64,
    states: Vec<T>,
    decide: impl Fn(&mut T) -> bool + Sync,
) -> (Duration, u64) {
    let threads = states.len() as u64;
    let barrier = Barrier::new(states.len());
    let spans: Vec<(Instant, Instant, u64)> = thread::scope(|s| {
        let workers: Vec<_> = (0u64..)
            .zip(states)
            .map(|(i, mut state)| {
                let count = iters / threads + u64::from(i < iters % threads);
                let (barrier, decide) = (&barrier, &decide);
                s.spawn(move || {
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
