//! The concurrency Little's law asks of a backend: what a limiter should converge to.
//!
//! A backend that completes `capacity` calls a second, each taking `latency` unloaded, is
//! kept busy without a queue by `capacity × latency` calls in flight: fewer leaves it idle,
//! more only wait. For `workers` first-come-first-served workers that product is `workers`
//! whatever the latency (a slowdown lowers the capacity as much as it raises the latency),
//! and for a processor-sharing backend it is its cores in force.

use core::time::Duration;

use crate::backend::{Backend, Discipline};
use ironward::clock::nanos;

/// The optimum limit of `backend` at `t`: its workers, times the share of its cores in
/// force for a processor-sharing backend.
pub(crate) fn optimum(backend: &Backend, t: Duration) -> f64 {
    let workers = f64::from(backend.workers.max(1));
    match backend.discipline {
        Discipline::Fifo => workers,
        Discipline::Sharing => workers * backend.capacity(nanos(t)).max(0.0),
    }
}

/// The calls a second `backend` completes at most at `t`: its [`optimum`] over its mean
/// latency, slowed by the schedule in force.
pub(crate) fn capacity(backend: &Backend, t: Duration) -> f64 {
    let (_, slowdown) = backend.conditions(nanos(t));
    let latency = backend.latency.mean().as_secs_f64() * slowdown;
    if latency > 0.0 {
        optimum(backend, t) / latency
    } else {
        f64::INFINITY
    }
}

/// The instants inside `[0, end)` where the optimum changes (a processor-sharing backend's
/// capacity phases starting and ending), in order, with 0 first.
pub(crate) fn shifts(backend: &Backend, end: Duration) -> Vec<Duration> {
    let mut at = vec![Duration::ZERO];
    if backend.discipline == Discipline::Sharing {
        let phases = backend.schedule.iter().filter(|p| p.capacity.is_some());
        at.extend(phases.flat_map(|p| [p.start, p.end]).filter(|&t| t < end));
    }
    at.sort();
    at.dedup();
    at
}
