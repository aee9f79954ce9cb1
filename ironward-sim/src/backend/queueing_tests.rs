//! The backend models against what queueing theory says of them: processor sharing's
//! ceiling on throughput, M/M/c's mean wait (Erlang C), a capacity that halves, a cache's
//! two latencies, and the queue that times calls out.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::*;
use crate::arrivals::{Steady, Traffic};
use crate::scenario::Variant;

const MS: u64 = 1_000_000;
const SECOND: u64 = 1_000_000_000;

fn constant(ms: u64) -> LatencyModel {
    LatencyModel::Constant {
        value: Duration::from_millis(ms),
    }
}

fn sharing(cores: u32, latency: LatencyModel) -> Backend {
    Backend {
        workers: cores,
        queue: u32::MAX,
        latency,
        discipline: Discipline::Sharing,
        ..Backend::default()
    }
}

/// Keeps `n` calls in flight on `backend` for `seconds`, admitting one as each finishes:
/// the calls finished in each second.
fn closed_loop(backend: &Backend, n: u64, seconds: u64) -> Vec<u64> {
    let mut server = Server::new(backend, Dice::new(1), Dice::new(2));
    let mut ends = BinaryHeap::new();
    for _ in 0..n {
        let (done, _) = server.admit(0).expect("room");
        ends.push(Reverse(done));
    }
    let mut each = vec![0; seconds as usize];
    while let Some(Reverse(at)) = ends.pop() {
        if at >= seconds * SECOND {
            break;
        }
        server.finish(at);
        each[(at / SECOND) as usize] += 1;
        let (done, _) = server.admit(at).expect("room");
        ends.push(Reverse(done));
    }
    each
}

#[test]
fn processor_sharing_serves_at_most_cores_over_latency_whatever_the_concurrency() {
    // Four cores, 10 ms a call: 400 calls a second at most.
    let backend = sharing(4, constant(10));
    for (n, want) in [(1, 100), (2, 200), (4, 400), (16, 400), (500, 400)] {
        let each = closed_loop(&backend, n, 5);
        // The first second holds the start's transient at the highest concurrencies.
        for (second, &done) in each.iter().enumerate().skip(1) {
            assert!(
                done.abs_diff(want) <= want / 50,
                "{n} in flight, second {second}: {done}"
            );
        }
    }
}

#[test]
fn processor_sharing_stretches_a_call_by_the_calls_it_shares_the_cores_with() {
    let mut server = Server::new(&sharing(2, constant(10)), Dice::new(1), Dice::new(2));
    assert_eq!(server.admit(0), Ok((10 * MS, true)));
    assert_eq!(
        server.admit(0),
        Ok((10 * MS, true)),
        "two cores, two calls: no wait"
    );
    assert_eq!(
        server.admit(0),
        Ok((15 * MS, true)),
        "three on two cores: 1.5 ×"
    );
    assert_eq!(server.admit(MS), Ok((21 * MS, true)), "four on two: 2 ×");
    let full = Backend {
        queue: 1,
        ..sharing(2, constant(10))
    };
    let mut server = Server::new(&full, Dice::new(1), Dice::new(2));
    for _ in 0..3 {
        server.admit(0).expect("two cores and one more");
    }
    assert_eq!(server.admit(0), Err(Unserved::Full));
}

#[test]
fn a_capacity_that_halves_halves_what_a_sharing_backend_serves() {
    let backend = Backend {
        schedule: vec![Phase {
            start: Duration::from_secs(4),
            end: Duration::from_secs(8),
            capacity: Some(Change { from: 0.5, to: 0.5 }),
            ..Phase::default()
        }],
        ..sharing(4, constant(10))
    };
    let each = closed_loop(&backend, 40, 12);
    for (second, &done) in each.iter().enumerate() {
        let want = if (5..8).contains(&second) { 200 } else { 400 };
        if second == 0 || second == 4 || second == 8 {
            continue; // the start and each shift spread over a call's latency
        }
        assert!(done.abs_diff(want) <= want / 25, "second {second}: {done}");
    }
}

/// Erlang C: the probability that a call to `c` servers offered `a` erlangs waits.
fn erlang_c(c: u32, a: f64) -> f64 {
    let (mut term, mut sum) = (1.0, 0.0);
    for k in 0..c {
        sum += term;
        term *= a / f64::from(k + 1);
    }
    let top = term * f64::from(c) / (f64::from(c) - a);
    top / (sum + top)
}

#[test]
fn a_fifo_backend_of_poisson_calls_and_exponential_latency_waits_as_erlang_c_says() {
    // M/M/4 at 80 % load: 320 calls a second, 10 ms each on average.
    let (c, rate, mean) = (4, 320.0, 0.010);
    let backend = Backend {
        workers: c,
        queue: u32::MAX,
        latency: LatencyModel::Exponential {
            mean: Duration::from_millis(10),
        },
        ..Backend::default()
    };
    let mut server = Server::new(&backend, Dice::new(7), Dice::new(8));
    let mut gaps = Dice::new(9);
    let (mut now, mut total, calls) = (0.0, 0.0, 400_000);
    for _ in 0..calls {
        now += gaps.exponential(1e9 / rate);
        let at = now as u64;
        let (done, _) = server.admit(at).expect("an unbounded queue");
        total += (done - at) as f64 / 1e9;
    }
    let a = rate * mean;
    let wait = erlang_c(c, a) / (f64::from(c) / mean - rate);
    let (want, got) = (wait + mean, total / f64::from(calls));
    assert!((got - want).abs() / want < 0.03, "{got} s against {want} s");
    // The wait alone, the part Erlang C is about, within 5 %.
    assert!(
        ((got - mean) - wait).abs() / wait < 0.05,
        "{} against {wait}",
        got - mean
    );
}

#[test]
fn a_bimodal_latency_hits_in_its_share_and_means_the_mixture() {
    let model = LatencyModel::Bimodal {
        hit: Duration::from_millis(2),
        miss: Duration::from_millis(50),
        hits: 0.9,
    };
    let mean = model.mean().as_secs_f64();
    assert!(
        (mean - 0.0068).abs() < 1e-8,
        "0.9 × 2 ms + 0.1 × 50 ms, not {mean}"
    );
    let (draw, mut dice) = (model.prepare(), Dice::new(3));
    let hits = (0..100_000).filter(|_| draw.draw(&mut dice) == 2e6).count();
    assert!((89_000..=91_000).contains(&hits), "{hits}");
    let nan = LatencyModel::Bimodal {
        hit: Duration::from_millis(2),
        miss: Duration::from_millis(50),
        hits: f64::NAN,
    };
    assert_eq!(nan.mean(), Duration::from_millis(50), "NaN hits as none");
}

#[test]
fn a_queue_timeout_drops_the_call_that_would_wait_past_it() {
    let backend = Backend {
        workers: 1,
        latency: constant(10),
        queue_timeout: Duration::from_millis(25),
        ..Backend::default()
    };
    let mut server = Server::new(&backend, Dice::new(1), Dice::new(2));
    assert_eq!(server.admit(0), Ok((10 * MS, true)));
    assert_eq!(server.admit(0), Ok((20 * MS, true)));
    assert_eq!(server.admit(0), Ok((30 * MS, true)), "waits 20 ms: in time");
    assert_eq!(server.admit(0), Err(Unserved::Dropped(25 * MS)));
    assert_eq!(server.inside(), 3, "the dropped call was never inside");
}

#[test]
fn calls_dropped_by_the_queue_time_out_and_the_backend_serves_its_capacity() {
    // One worker of 10 ms offered 200 calls a second: half are dropped after 50 ms.
    let variant = Variant {
        duration: Duration::from_secs(10),
        arrivals: vec![Traffic::Constant(Steady {
            rate: 200.0,
            ..Steady::default()
        })],
        backend: Backend {
            workers: 1,
            latency: constant(10),
            queue_timeout: Duration::from_millis(50),
            ..Backend::default()
        },
        ..Variant::default()
    };
    let total = variant.run(|_| {}).total();
    assert!(total.succeeded.abs_diff(1_000) <= 20, "{}", total.succeeded);
    assert!(total.timed_out > 900, "{}", total.timed_out);
}

#[test]
fn the_models_refuse_what_they_cannot_do() {
    let halved = Backend {
        schedule: vec![Phase {
            capacity: Some(Change { from: 0.5, to: 0.5 }),
            ..Phase::default()
        }],
        ..Backend::default()
    };
    assert!(halved.check().unwrap_err().contains("sharing"));
    let waiting = Backend {
        queue_timeout: Duration::from_millis(5),
        ..sharing(2, constant(10))
    };
    assert!(waiting.check().unwrap_err().contains("fifo"));
    let stalled = shared(1e6, 3, 0.0);
    assert!(stalled.is_infinite() && slowed(stalled, 1.0) == u64::MAX);
    assert_eq!(shared(1e6, 3, f64::NAN), f64::INFINITY);
}
