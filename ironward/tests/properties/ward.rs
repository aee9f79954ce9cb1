//! Properties of `ward`, against a naive model: the list of connects it let through, and the
//! latest failure not yet followed by a success.

use std::time::Duration;

use ironward::{Backoff, Jitter, Outcome, RECONNECT, Reconnect, Sre, Ward};
use proptest::prelude::*;

use crate::properties::strategies::{Clock, step};

/// What the pool does next.
#[derive(Debug, Clone, Copy)]
enum Op {
    /// Asks to connect, with this draw.
    Connect(f64),
    /// Settles the oldest connect in flight: made, or failed with this draw.
    Settle(bool, f64),
    /// Feeds the breaker a check of a held connection.
    Record(bool),
}

fn roll() -> impl Strategy<Value = f64> {
    prop_oneof![
        8 => 0.0..1.0_f64,
        1 => Just(f64::NAN),
        1 => prop_oneof![Just(-1.0), Just(1.0), Just(f64::INFINITY)],
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => roll().prop_map(Op::Connect),
        3 => (any::<bool>(), roll()).prop_map(|(ok, r)| Op::Settle(ok, r)),
        1 => any::<bool>().prop_map(Op::Record),
    ]
}

fn policy() -> impl Strategy<Value = Reconnect> {
    (
        prop_oneof![4 => 0.5..50.0_f64, 1 => Just(0.0), 1 => Just(f64::NAN)],
        prop_oneof![4 => 1.0..8.0_f64, 1 => Just(0.0)],
        1..500_u64,
        prop_oneof![
            Just(Jitter::Spread(0.2)),
            Just(Jitter::Equal),
            Just(Jitter::Rigid)
        ],
        any::<bool>(),
    )
        .prop_map(|(rate, burst, base, jitter, breaker)| Reconnect {
            rate,
            burst,
            backoff: Backoff {
                base: Duration::from_millis(base),
                jitter,
                ..RECONNECT.backoff
            },
            breaker: if breaker {
                RECONNECT.breaker
            } else {
                Sre {
                    k: f64::INFINITY,
                    ..RECONNECT.breaker
                }
            },
            ..RECONNECT
        })
}

/// The least wait after a failure that a jitter allows: the base, shrunk by the jitter.
fn least_wait(backoff: &Backoff) -> f64 {
    let base = backoff.base.as_secs_f64();
    match backoff.jitter {
        Jitter::Spread(f) => base * (1.0 - f),
        Jitter::Equal => base / 2.0,
        _ => base,
    }
}

proptest! {
    // Any run of connects, settles, checks and clock steps (backwards ones included): the
    // connects let through in any stretch of time never exceed the burst plus the rate times
    // the stretch, none is let through before the least wait has passed since the latest
    // failure not followed by a success nor beside a trial in flight while failing, and
    // nothing panics.
    #[test]
    fn never_connects_past_the_bucket_nor_inside_the_wait(
        policy in policy(),
        ops in prop::collection::vec((op(), step(300_000_000)), 0..300),
    ) {
        let mut ward = Ward::new(policy, Duration::ZERO);
        let mut clock = Clock::new(0);
        let mut flying = std::collections::VecDeque::new();
        let mut admitted: Vec<f64> = Vec::new();
        let mut failed_at: Option<f64> = None;
        let burst = if policy.burst >= 1.0 { policy.burst } else { 1.0 };
        let rate = if policy.rate.is_finite() && policy.rate > 0.0 { policy.rate } else { 0.0 };
        let least = least_wait(&policy.backoff);
        let cap = policy.backoff.cap.as_secs_f64();
        for (op, step) in ops {
            let now = clock.read(step);
            if matches!(op, Op::Settle(..)) && flying.is_empty() {
                // Nothing to settle: the ward is not called, so its clock does not move.
                continue;
            }
            let at = clock.change(now);
            if at > u64::MAX / 2 {
                // The end of the clock stops time; the model's float seconds would too.
                break;
            }
            let secs = at as f64 / 1e9;
            match op {
                Op::Connect(roll) => {
                    if let Ok(permit) = ward.connect(now, roll) {
                        if let Some(failed) = failed_at {
                            prop_assert!(secs + 1e-9 >= failed + least,
                                "let through {secs} s, {least} s after a failure at {failed} s");
                            // One trial at a time while failing, until the cap has passed.
                            let trying = flying.iter().any(|(_, trial): &(_, Option<f64>)| {
                                trial.is_some_and(|since| secs - since < cap - 1e-9)
                            });
                            prop_assert!(!trying, "a second connect while a trial is in flight");
                        }
                        admitted.push(secs);
                        for (i, &from) in admitted.iter().enumerate() {
                            let within = (admitted.len() - i) as f64;
                            prop_assert!(within <= burst + rate * (secs - from) + 1e-6,
                                "{within} connects in {} s", secs - from);
                        }
                        flying.push_back((permit, failed_at.map(|_| secs)));
                    } else {
                        prop_assert!(ward.next(now) > Duration::ZERO || policy.breaker.k.is_finite());
                    }
                }
                Op::Settle(ok, roll) => {
                    if let Some((permit, _)) = flying.pop_front() {
                        if ok {
                            ward.connected(permit, now);
                            failed_at = None;
                            // A success ends the run: a connect of it still in flight is no
                            // trial of the next one, as those in flight at its first failure.
                            for (_, trial) in &mut flying {
                                *trial = None;
                            }
                        } else {
                            ward.failed(permit, now, roll);
                            failed_at = Some(secs);
                        }
                    }
                }
                Op::Record(ok) => {
                    ward.record(if ok { Outcome::Success } else { Outcome::Failure }, now);
                }
            }
            prop_assert!(ward.ratio(now) >= 0.0 && ward.ratio(now) <= 1.0);
        }
    }
}
