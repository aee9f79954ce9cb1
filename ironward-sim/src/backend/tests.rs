use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::*;

const MS: u64 = 1_000_000;

fn server(workers: u32, queue: u32) -> Server {
    let config = Backend {
        workers,
        queue,
        latency: LatencyModel::Constant {
            value: Duration::from_millis(10),
        },
        ..Backend::default()
    };
    Server::new(&config, Dice::new(1), Dice::new(2))
}

#[test]
fn calls_queue_first_come_first_served_and_overflow_is_refused() {
    let mut s = server(2, 1);
    assert_eq!(s.admit(0), Ok((10 * MS, true)));
    assert_eq!(s.admit(MS), Ok((11 * MS, true)));
    // Both workers busy: this one waits for the first to free up at 10 ms.
    assert_eq!(s.admit(2 * MS), Ok((20 * MS, true)));
    // The queue holds one: refused.
    assert_eq!(s.admit(3 * MS), Err(Unserved::Full));
    assert_eq!(s.inside(), 3);
    // At 10 ms the waiting call has started, so the queue has room again.
    assert_eq!(s.admit(10 * MS), Ok((21 * MS, true)));
}

// The workers against the binary heap of free times they replace, over arrivals that
// idle, saturate and leave long gaps, with service times from a microsecond to seconds:
// every start time agrees.
#[test]
fn workers_start_every_call_when_a_heap_of_free_times_would() {
    let mut dice = Dice::new(3);
    let mut workers = Workers::new(7);
    let mut heap: BinaryHeap<Reverse<u64>> = std::iter::repeat_n(Reverse(0), 7).collect();
    let mut now = 0u64;
    for i in 0..200_000u64 {
        now += match dice.roll() {
            r if r < 0.001 => (dice.roll() * 5e9) as u64,
            r if r < 0.3 => 0,
            _ => (dice.roll() * 4e6) as u64,
        };
        let service = match i % 97 {
            0 => (dice.roll() * 2e9) as u64,
            1 => 1_000,
            _ => (dice.roll() * 3e7) as u64,
        };
        let (start, worker) = workers.earliest(now);
        let mut earliest = heap.peek_mut().expect("seven workers");
        assert_eq!(start, earliest.0.max(now), "call {i} at {now}");
        earliest.0 = start + service;
        drop(earliest);
        workers.hand(worker, start + service);
    }
}

#[test]
fn the_cpu_reading_is_the_smoothed_busy_fraction() {
    let mut s = server(2, 0);
    s.admit(0).expect("an idle worker");
    s.sample(250 * MS);
    // One of two workers was busy for 10 ms of 250, but `finish` was never called, so the
    // meter counts it busy throughout: half the workers, smoothed by 0.05.
    assert_eq!(s.cpu, 0.5 * (1.0 - 0.95));
    s.finish(250 * MS);
    s.sample(500 * MS);
    assert_eq!(s.cpu, 0.5 * (1.0 - 0.95) * 0.95);
    assert_eq!(s.cpu(), 24);
}

#[test]
fn the_schedule_sets_failure_and_slowdown_over_time() {
    let backend = Backend {
        failure: 0.01,
        schedule: vec![
            Phase {
                start: Duration::from_secs(10),
                end: Duration::from_secs(20),
                failure: Some(Change { from: 1.0, to: 1.0 }),
                slowdown: None,
                capacity: None,
            },
            Phase {
                start: Duration::from_secs(20),
                end: Duration::from_secs(30),
                failure: None,
                slowdown: Some(Change { from: 5.0, to: 1.0 }),
                capacity: None,
            },
        ],
        ..Backend::default()
    };
    let at = |s: u64| backend.conditions(s * 1_000_000_000);
    assert_eq!(at(5), (0.01, 1.0));
    assert_eq!(at(10), (1.0, 1.0));
    assert_eq!(at(19), (1.0, 1.0));
    assert_eq!(at(20), (0.01, 5.0));
    assert_eq!(at(25), (0.01, 3.0));
}

#[test]
fn a_phase_is_labelled_by_what_it_does() {
    let still = |v| Some(Change { from: v, to: v });
    let moving = |from, to| Some(Change { from, to });
    let label = |failure, slowdown| {
        Phase {
            failure,
            slowdown,
            ..Phase::default()
        }
        .label()
    };
    assert_eq!(label(still(1.0), None).as_deref(), Some("outage"));
    assert_eq!(label(still(0.05), None).as_deref(), Some("5% errors"));
    assert_eq!(
        label(moving(0.0, 0.3), None).as_deref(),
        Some("errors 0→30%")
    );
    assert_eq!(label(None, moving(4.0, 1.0)).as_deref(), Some("cold start"));
    assert_eq!(label(None, still(2.5)).as_deref(), Some("slow ×2.5"));
    assert_eq!(label(None, moving(1.0, 3.0)).as_deref(), Some("slow ×1→×3"));
    assert_eq!(
        label(still(1.0), still(2.0)).as_deref(),
        Some("outage, slow ×2")
    );
    assert_eq!(label(still(0.0), still(1.0)), None);
}

#[test]
fn log_normal_service_times_have_the_median_and_tail_asked_for() {
    let latency = LatencyModel::LogNormal {
        median: Duration::from_millis(20),
        p99: Duration::from_millis(80),
    };
    let mut dice = Dice::new(9);
    let draw = latency.prepare();
    let mut draws: Vec<f64> = (0..100_000).map(|_| draw.draw(&mut dice)).collect();
    draws.sort_by(f64::total_cmp);
    let (median, p99) = (draws[50_000] / 1e6, draws[99_000] / 1e6);
    assert!((median - 20.0).abs() < 0.5, "{median}");
    assert!((p99 - 80.0).abs() < 4.0, "{p99}");
}

/// A backend with the latency `latency`, slowed ×3 from 10 s to 20 s and failing with
/// probability `failure` from 30 s to 40 s.
fn phased(latency: LatencyModel, failure: f64) -> Backend {
    let still = |v| Some(Change { from: v, to: v });
    let phase = |start, end| Phase {
        start: Duration::from_secs(start),
        end: Duration::from_secs(end),
        ..Phase::default()
    };
    Backend {
        latency,
        schedule: vec![
            Phase {
                slowdown: still(3.0),
                ..phase(10, 20)
            },
            Phase {
                failure: still(failure),
                ..phase(30, 40)
            },
        ],
        ..Backend::default()
    }
}

// The sampler and the engine's server draw a service the same way: from the same stream of
// service times, the same latencies, slowed by the same phase.
#[test]
fn a_sampler_draws_the_services_the_engine_s_server_draws() {
    let lognormal = LatencyModel::LogNormal {
        median: Duration::from_millis(20),
        p99: Duration::from_millis(80),
    };
    let backend = Backend {
        workers: 1_000,
        ..phased(lognormal, 0.0)
    };
    let mut server = Server::new(&backend, Dice::new(5), Dice::new(6));
    let (sampler, mut dice) = (backend.sampler(), Dice::new(5));
    for i in 0..2_000u64 {
        let at = i * 10 * MS;
        let (done, ok) = server.admit(at).expect("room");
        let service = sampler.serve(Duration::from_nanos(at), &mut dice);
        assert_eq!(service.latency, Duration::from_nanos(done - at), "at {at}");
        assert_eq!((service.fails, ok), (false, true));
        server.finish(at);
    }
}

#[test]
fn a_sampler_fails_calls_by_the_schedule_and_rolls_only_when_they_may_fail() {
    let ms10 = LatencyModel::Constant {
        value: Duration::from_millis(10),
    };
    let sampler = phased(ms10, 0.25).sampler();
    let mut dice = Dice::new(3);
    let calm = sampler.serve(Duration::from_secs(5), &mut dice);
    let slow = sampler.serve(Duration::from_secs(15), &mut dice);
    assert_eq!(
        (calm.latency, slow.latency),
        (Duration::from_millis(10), Duration::from_millis(30))
    );
    assert!(!calm.fails && !slow.fails);
    // A constant latency and no failure draw nothing at all.
    assert_eq!(dice.next_u64(), Dice::new(3).next_u64());

    // A quarter of the calls fail inside the phase, each after the same 10 ms.
    let failed = (0..10_000)
        .filter(|_| sampler.serve(Duration::from_secs(35), &mut dice).fails)
        .count();
    assert!((2_300..2_700).contains(&failed), "{failed}");
    let outage = phased(ms10, 1.0).sampler();
    assert!((0..100).all(|s| {
        outage
            .serve(Duration::from_millis(30_000 + s), &mut dice)
            .fails
    }));
    assert_eq!(outage.backend().schedule.len(), 2);
}

#[test]
fn a_sampler_answers_bad_numbers_without_a_panic() {
    let ms10 = LatencyModel::Constant {
        value: Duration::from_millis(10),
    };
    let slowed = |slowdown: f64| {
        let phase = Phase {
            end: Duration::MAX,
            slowdown: Some(Change {
                from: slowdown,
                to: slowdown,
            }),
            ..Phase::default()
        };
        let backend = Backend {
            latency: ms10,
            schedule: vec![phase],
            ..Backend::default()
        };
        backend
            .sampler()
            .serve(Duration::from_secs(1), &mut Dice::new(1))
            .latency
    };
    assert_eq!(slowed(f64::NAN), Duration::ZERO);
    assert_eq!(slowed(-2.0), Duration::ZERO);
    assert_eq!(slowed(f64::INFINITY), Duration::from_nanos(u64::MAX));
    assert_eq!(slowed(1e300), Duration::from_nanos(u64::MAX));

    // A phase's NaN is passed over for the base rate; a NaN base rate fails every call.
    let nan = phased(ms10, f64::NAN).sampler();
    assert!(!nan.serve(Duration::from_secs(35), &mut Dice::new(1)).fails);
    let base = Backend {
        failure: f64::NAN,
        ..phased(ms10, 0.0)
    };
    assert!(
        base.sampler()
            .serve(Duration::ZERO, &mut Dice::new(1))
            .fails
    );
    let end = nan.serve(Duration::MAX, &mut Dice::new(1));
    assert_eq!((end.latency, end.fails), (Duration::from_millis(10), false));
}
