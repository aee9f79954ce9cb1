//! The cost of one decision of the core's `Ward`, the state a pool's connects and checkouts
//! ask (ironward-pool puts it in front of deadpool and bb8).
//!
//! One group per piece a decision ends in: a connect let through and settled, a connect the
//! backoff refuses, a checkout through the gate. No peer exists for any of them: deadpool and
//! bb8 decide no connect (they connect whenever a checkout finds no idle connection), and no
//! crate puts a backoff, a bucket and a breaker in front of a pool, so every row is
//! ironward's alone. Time is passed in and advanced in criterion's batch setup, outside the
//! measured routine; every result goes through `black_box`. `scripts/bench` turns the
//! estimates into `BENCHMARKS.md`.

mod common;

use common::group;

use std::hint::black_box;
use std::time::Duration;

use criterion::{BatchSize, Bencher, Criterion};
use ironward::{Backoff, Checkouts, RECONNECT, Reconnect, Ward};

/// Runs `f` once per element with a time `step` later than the last, the step being taken in
/// the batch setup so that it is not measured.
fn stepped<O>(b: &mut Bencher<'_>, step: Duration, mut f: impl FnMut(Duration) -> O) {
    let mut t = Duration::ZERO;
    b.iter_batched(
        || {
            t = t.saturating_add(step);
            t
        },
        |now| f(black_box(now)),
        BatchSize::SmallInput,
    );
}

/// `connect` let through, then `connected`, on the preset: a healthy backend, each connect a
/// quarter of a second after the last so that the bucket (4 a second) always has a token.
/// The breaker's window rolls a bucket on every connect. No peer: no pool crate decides its
/// connects.
fn connect(c: &mut Criterion) {
    let mut g = group(c, "ward_connect");
    g.bench_function("ironward/admitted", |b| {
        let mut ward = Ward::new(RECONNECT, Duration::ZERO);
        stepped(b, Duration::from_millis(250), |now| {
            let permit = ward.connect(now, black_box(0.5));
            let admitted = permit.is_ok();
            if let Ok(permit) = permit {
                ward.connected(permit, now);
            }
            black_box(admitted)
        });
    });
    g.finish();
}

/// `connect` refused inside the backoff's wait after a failed connect: the first piece asked,
/// so neither the bucket nor the breaker is read. The wait is an hour, so that every connect
/// of the run falls inside it; time steps by 1 ns. No peer: no pool crate backs off its
/// connects.
fn backoff(c: &mut Criterion) {
    let mut g = group(c, "ward_backoff");
    let policy = Reconnect {
        backoff: Backoff {
            base: Duration::from_secs(3600),
            cap: Duration::from_secs(3600),
            ..RECONNECT.backoff
        },
        ..RECONNECT
    };
    g.bench_function("ironward/refused", |b| {
        let mut ward = Ward::new(policy, Duration::ZERO);
        let permit = ward
            .connect(Duration::ZERO, 0.5)
            .expect("a fresh ward lets a connect through");
        ward.failed(permit, Duration::ZERO, 0.5);
        stepped(b, Duration::from_nanos(1), |now| {
            black_box(ward.connect(now, black_box(0.5))).is_err()
        });
    });
    g.finish();
}

/// `checkout` then `checkin` through `Checkouts::Gate(64)`, nothing else held. No peer: a
/// pool's own checkout waits for a connection and admits no fewer than its size.
fn gate(c: &mut Criterion) {
    let mut g = group(c, "ward_gate");
    let policy = Reconnect {
        checkouts: Checkouts::Gate(64),
        ..RECONNECT
    };
    g.bench_function("ironward/admitted", |b| {
        let mut ward = Ward::new(policy, Duration::ZERO);
        stepped(b, Duration::from_nanos(1), |now| {
            let slot = ward.checkout(now, black_box(0));
            let admitted = slot.is_ok();
            if let Ok(slot) = slot {
                ward.checkin(slot, now);
            }
            black_box(admitted)
        });
    });
    g.finish();
}

fn main() {
    let mut c = common::criterion();
    connect(&mut c);
    backoff(&mut c);
    gate(&mut c);
    c.final_summary();
}
