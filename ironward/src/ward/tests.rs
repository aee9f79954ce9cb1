extern crate std;

use std::string::ToString;
use std::vec::Vec;

use super::*;
use crate::backoff::{Backoff, Jitter};
use crate::breaker::{SRE, Sre};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// The preset without the breaker's throttle, for the tests of the other pieces.
const NO_BREAKER: Reconnect = Reconnect {
    breaker: Sre {
        k: f64::INFINITY,
        ..SRE
    },
    ..RECONNECT
};

/// A backoff without jitter: 100 ms doubling to 1 s.
const RIGID: Backoff = Backoff {
    base: Duration::from_millis(100),
    factor: 2.0,
    cap: Duration::from_secs(1),
    attempts: u32::MAX,
    jitter: Jitter::Rigid,
};

fn rigid() -> Reconnect {
    Reconnect {
        backoff: RIGID,
        rate: 1_000.0,
        burst: 1_000.0,
        ..NO_BREAKER
    }
}

fn fail_at(ward: &mut Ward, at: Duration) {
    let permit = ward.connect(at, 0.5).expect("let through");
    ward.failed(permit, at, 0.5);
}

#[test]
fn refuses_inside_the_wait_after_a_failure_and_lets_through_after_it() {
    let mut ward = Ward::new(rigid(), ms(0));
    fail_at(&mut ward, ms(10));
    let refusal = ward
        .connect(ms(50), 0.5)
        .expect_err("40 ms into a 100 ms wait");
    assert_eq!(refusal.piece(), WardPiece::Backoff);
    assert_eq!(refusal.next(), ms(60));
    assert!(ward.connect(ms(109), 0.5).is_err());
    assert!(ward.connect(ms(110), 0.5).is_ok());
}

#[test]
fn the_wait_grows_with_failures_in_a_row_and_a_success_forgets_them() {
    let mut ward = Ward::new(rigid(), ms(0));
    let mut at = ms(0);
    let mut waits = Vec::new();
    for _ in 0..6 {
        fail_at(&mut ward, at);
        at += ward.next(at);
        waits.push(ward.wait.unwrap());
    }
    assert_eq!(
        waits,
        [ms(100), ms(200), ms(400), ms(800), ms(1000), ms(1000)]
    );
    assert_eq!(ward.failures(), 6);
    let permit = ward.connect(at, 0.5).expect("the wait has passed");
    ward.connected(permit, at);
    assert_eq!((ward.failures(), ward.is_failing()), (0, false));
    fail_at(&mut ward, at);
    assert_eq!(ward.wait, Some(ms(100)));
}

#[test]
fn connects_in_flight_together_that_fail_together_wait_as_one() {
    let mut ward = Ward::new(rigid(), ms(0));
    let permits: Vec<_> = (0..4).map(|_| ward.connect(ms(0), 0.5).unwrap()).collect();
    for (i, permit) in permits.into_iter().enumerate() {
        ward.failed(permit, ms(i as u64), 0.5);
    }
    assert_eq!((ward.failures(), ward.wait), (1, Some(ms(100))));
    // The wait runs from the latest failure.
    assert_eq!(ward.next(ms(3)), ms(100));
}

#[test]
fn lets_one_trial_through_at_a_time_while_failing() {
    let mut ward = Ward::new(rigid(), ms(0));
    fail_at(&mut ward, ms(0));
    let trial = ward.connect(ms(100), 0.5).expect("the wait has passed");
    let Err(Refusal::Backoff(reason)) = ward.connect(ms(150), 0.5) else {
        panic!("a trial is in flight");
    };
    assert!(reason.trying);
    // Should the trial fail now, the next connect waits at least the wait in force.
    assert_eq!(reason.next, ms(100));
    // With nothing settled, the trial holds the others back until the cap has passed.
    assert_eq!(ward.next(ms(150)), ms(950));
    assert_eq!(
        reason.to_string(),
        "backoff after 1 failed connect: waiting 100ms, a trial connect in flight"
    );
    ward.connected(trial, ms(160));
    // Back: connects are paced by the bucket alone.
    let again: Vec<_> = (0..3)
        .map(|_| ward.connect(ms(160), 0.5).unwrap())
        .collect();
    assert_eq!(again.len(), 3);
    drop(again);
}

#[test]
fn a_trial_dropped_unsettled_stops_blocking_after_the_backoffs_cap() {
    let mut ward = Ward::new(rigid(), ms(0));
    fail_at(&mut ward, ms(0));
    drop(ward.connect(ms(100), 0.5).expect("the trial"));
    assert!(ward.connect(ms(1_099), 0.5).is_err());
    assert!(ward.connect(ms(1_100), 0.5).is_ok());
}

#[test]
fn the_bucket_bounds_connects_at_once_and_a_second() {
    let policy = Reconnect {
        rate: 2.0,
        burst: 3.0,
        ..NO_BREAKER
    };
    let mut ward = Ward::new(policy, ms(0));
    let permits: Vec<_> = (0..3).map(|_| ward.connect(ms(0), 0.5).unwrap()).collect();
    let refusal = ward.connect(ms(0), 0.5).expect_err("the burst is spent");
    assert_eq!(refusal.piece(), WardPiece::Bucket);
    assert_eq!(refusal.next(), ms(500));
    assert!(ward.connect(ms(499), 0.5).is_err());
    assert!(ward.connect(ms(500), 0.5).is_ok());
    for permit in permits {
        ward.connected(permit, ms(500));
    }
}

#[test]
fn the_breaker_refuses_a_backend_whose_connections_keep_failing_and_holds_for_the_base() {
    let mut ward = Ward::new(RECONNECT, ms(0));
    for _ in 0..100 {
        ward.record(Outcome::Failure, ms(0));
    }
    assert!(ward.ratio(ms(0)) > 0.9);
    let refusal = ward
        .connect(ms(10), 0.1)
        .expect_err("under the drop fraction");
    let Refusal::Breaker { reason, next } = refusal else {
        panic!("the breaker refused");
    };
    assert_eq!((reason.total, reason.accepts), (100, 0));
    assert_eq!(next, RECONNECT.backoff.base);
    // Inside the hold even a draw over the drop fraction is refused, without a draw.
    let held = ward.connect(ms(259), 0.99).expect_err("held");
    assert_eq!((held.piece(), held.next()), (WardPiece::Breaker, ms(1)));
    assert!(matches!(held, Refusal::Breaker { reason: again, .. } if again == reason));
    assert!(ward.connect(ms(260), 0.99).is_ok());
}

#[test]
fn checks_that_pass_clear_the_breaker() {
    let mut ward = Ward::new(RECONNECT, ms(0));
    for _ in 0..20 {
        ward.record(Outcome::Failure, ms(0));
    }
    assert!(ward.ratio(ms(0)) > 0.0);
    for _ in 0..40 {
        ward.record(Outcome::Success, ms(1));
    }
    assert_eq!(ward.ratio(ms(1)), 0.0);
}

#[test]
fn nan_and_wild_draws_never_panic() {
    let mut ward = Ward::new(RECONNECT, ms(0));
    let mut at = ms(0);
    for roll in [f64::NAN, -1.0, 1.0, f64::INFINITY, f64::NEG_INFINITY] {
        let permit = ward.connect(at, roll).expect("no failures");
        ward.failed(permit, at, roll);
        at += ms(10_000);
        let permit = ward.connect(at, roll).expect("the wait has passed");
        ward.connected(permit, at);
    }
    // A NaN draw waits as a draw of 0: the low end of the spread.
    fail_at(&mut ward, ms(60_000));
    let mut twin = ward.clone();
    let permit = twin.connect(ms(70_000), 0.5).unwrap();
    twin.failed(permit, ms(70_000), f64::NAN);
    let mut zero = ward.clone();
    let permit = zero.connect(ms(70_000), 0.5).unwrap();
    zero.failed(permit, ms(70_000), 0.0);
    assert_eq!(twin.wait, zero.wait);
}

#[test]
fn a_clock_going_backwards_is_read_as_the_latest_seen() {
    let mut ward = Ward::new(rigid(), ms(0));
    fail_at(&mut ward, ms(1_000));
    // Stepping back cannot end the wait early.
    assert!(ward.connect(ms(0), 0.5).is_err());
    assert_eq!(ward.next(ms(0)), ms(100));
    let permit = ward.connect(ms(1_100), 0.5).unwrap();
    ward.failed(permit, ms(5), 0.5);
    assert_eq!(ward.next(ms(0)), ms(200));
}

#[test]
fn zero_and_huge_rates_never_panic() {
    let zero = Reconnect {
        rate: 0.0,
        burst: 0.0,
        ..NO_BREAKER
    };
    let mut ward = Ward::new(zero, ms(0));
    let permit = ward.connect(ms(0), 0.5).expect("the burst of 1");
    ward.connected(permit, ms(0));
    let refusal = ward.connect(Duration::MAX, 0.5).expect_err("never refills");
    assert_eq!(refusal.next(), Duration::MAX);
    assert_eq!(ward.next(Duration::MAX), Duration::MAX);
    for rate in [f64::NAN, f64::INFINITY, -1.0, f64::MAX] {
        let policy = Reconnect {
            rate,
            burst: f64::INFINITY,
            ..NO_BREAKER
        };
        let mut ward = Ward::new(policy, ms(0));
        for _ in 0..100 {
            let permit = ward.connect(ms(0), 0.5).expect("an infinite burst");
            ward.connected(permit, ms(0));
        }
    }
}

#[test]
fn failures_saturate_at_u32_max() {
    let mut ward = Ward::new(rigid(), ms(0));
    fail_at(&mut ward, ms(0));
    ward.failures = u32::MAX - 1;
    for at in [ms(10_000), ms(20_000), ms(30_000)] {
        fail_at(&mut ward, at);
    }
    assert_eq!(ward.failures(), u32::MAX);
    assert_eq!(ward.wait, Some(RIGID.cap));
    // A huge wait and a clock near its end saturate rather than wrap.
    let huge = Reconnect {
        backoff: Backoff {
            cap: Duration::MAX,
            base: Duration::MAX,
            ..RIGID
        },
        ..rigid()
    };
    let mut ward = Ward::new(huge, ms(0));
    fail_at(&mut ward, ms(1));
    assert_eq!(ward.next(ms(1)), Duration::from_nanos(u64::MAX - 1_000_000));
    assert!(ward.connect(Duration::from_secs(1 << 30), 0.5).is_err());
}

#[test]
fn a_gate_refuses_checkouts_past_its_limit() {
    let policy = Reconnect {
        checkouts: Checkouts::Gate(2),
        ..RECONNECT
    };
    let mut ward = Ward::new(policy, ms(0));
    let (a, b) = (
        ward.checkout(ms(0), 0).unwrap(),
        ward.checkout(ms(0), 0).unwrap(),
    );
    let refusal = ward.checkout(ms(0), 0).expect_err("full");
    assert_eq!(
        refusal.to_string(),
        "gate full: 2 held against a limit of 2"
    );
    assert_eq!(ward.checkouts(), 2);
    ward.checkin(a, ms(1));
    ward.abandon(b);
    assert_eq!(ward.checkouts(), 0);
}

#[test]
fn a_shedder_refuses_checkouts_when_hot_and_full() {
    let policy = Reconnect {
        checkouts: Checkouts::Shed(crate::shedder::SHED),
        ..RECONNECT
    };
    let mut ward = Ward::new(policy, ms(0));
    let mut slots: Vec<_> = (0..100)
        .map(|_| ward.checkout(ms(0), 950).unwrap())
        .collect();
    for slot in slots.drain(..50) {
        ward.checkin(slot, ms(50));
    }
    assert!(matches!(
        ward.checkout(ms(60), 950),
        Err(CheckoutRefusal::Shed(_))
    ));
    for slot in slots {
        ward.abandon(slot);
    }
    assert_eq!(ward.checkouts(), 0);
}

#[test]
fn open_checkouts_refuse_nothing() {
    let mut ward = Ward::new(RECONNECT, ms(0));
    for _ in 0..1_000 {
        let slot = ward.checkout(ms(0), 1_000).unwrap();
        ward.checkin(slot, ms(0));
    }
    assert_eq!(ward.checkouts(), 0);
}

#[test]
fn retuning_keeps_the_failures_and_the_tokens() {
    let mut ward = Ward::new(rigid(), ms(0));
    fail_at(&mut ward, ms(0));
    let slower = Reconnect {
        rate: 1.0,
        burst: 2.0,
        checkouts: Checkouts::Gate(1),
        ..rigid()
    };
    ward.retune(slower, ms(10));
    assert_eq!((ward.failures(), ward.next(ms(10))), (1, ms(90)));
    assert_eq!(ward.tokens(ms(10)), 2.0);
    let slot = ward.checkout(ms(10), 0).unwrap();
    assert!(ward.checkout(ms(10), 0).is_err());
    // A new kind of checkout piece starts empty; the old slot settles nothing.
    ward.retune(rigid(), ms(20));
    ward.abandon(slot);
    assert_eq!(ward.policy(), &rigid());
    // Retuning to the policy in force changes nothing.
    let twin = ward.clone();
    ward.retune(rigid(), ms(20));
    assert_eq!(ward.next(ms(20)), twin.next(ms(20)));
}

#[test]
fn the_preset_spaces_the_first_failures_by_the_spread_backoff() {
    // gRPC's spread of a fifth: the first wait lies in [200 ms, 300 ms].
    for roll in [0.0, 0.5, 0.999_999] {
        let mut ward = Ward::new(RECONNECT, ms(0));
        let permit = ward.connect(ms(0), 0.5).unwrap();
        ward.failed(permit, ms(0), roll);
        let wait = ward.next(ms(0));
        assert!(wait >= ms(200) && wait <= ms(300), "{wait:?}");
    }
}

#[test]
fn refusals_print_what_decided_them() {
    let mut ward = Ward::new(rigid(), ms(0));
    fail_at(&mut ward, ms(0));
    let refusal = ward.connect(ms(40), 0.5).unwrap_err();
    assert_eq!(
        refusal.to_string(),
        "backoff after 1 failed connect: waiting 100ms, next in 60ms"
    );
    assert_eq!(WardPiece::Bucket.to_string(), "bucket");
}

#[cfg(feature = "serde")]
#[test]
fn the_policy_reads_from_humane_strings() {
    let policy: Reconnect = serde_json::from_str(
        r#"{"rate": 2.0, "backoff": {"base": "1s", "factor": 1.6, "cap": "30s", "attempts": 1, "jitter": "Full"}, "checkouts": {"Gate": 64}}"#,
    )
    .unwrap();
    assert_eq!(policy.rate, 2.0);
    assert_eq!(policy.backoff.cap, Duration::from_secs(30));
    assert_eq!(policy.checkouts, Checkouts::Gate(64));
    assert_eq!(policy.burst, RECONNECT.burst);
}

/// A family of the test's own that refuses every call once `open` is set, and counts the
/// checks of held connections it heard: it stands for any breaker the core may gain.
#[derive(Debug, Clone)]
struct Switch {
    open: bool,
    heard: u32,
}

impl CircuitBreaker for Switch {
    type Policy = bool;
    type Permit = ();
    type Reason = &'static str;

    const REFUSALS: &'static [&'static str] = &["open"];

    fn new(open: bool, _: Duration) -> Self {
        Self { open, heard: 0 }
    }

    fn check(&mut self, _: Duration, _: f64) -> Result<(), &'static str> {
        if self.open {
            Err("switched open")
        } else {
            Ok(())
        }
    }

    fn pass(&mut self, (): (), _: Duration) -> Option<()> {
        None
    }

    fn fail(&mut self, (): (), _: Duration) -> Option<()> {
        None
    }

    fn record(&mut self, _: Outcome, _: Duration) {
        self.heard += 1;
    }

    fn owns(&self, (): &()) -> bool {
        true
    }

    fn foreign(&self) -> u64 {
        0
    }

    fn ratio(&self, _: Duration) -> f64 {
        if self.open { 1.0 } else { 0.0 }
    }

    fn policy(&self) -> &bool {
        &self.open
    }

    fn retune(&mut self, open: bool, _: Duration) {
        self.open = open;
    }

    fn refusal(_: &&'static str) -> usize {
        0
    }

    fn ratio_of(_: &&'static str) -> f64 {
        1.0
    }
}

// The ward asks whatever family it runs, holds its refusal for the backoff's base as it
// does the SRE breaker's, and hands it the pool's checks and the retuned policy.
#[test]
fn a_ward_runs_any_breaker_family() {
    let policy = Reconnect {
        breaker: false,
        ..Reconnect::default()
    };
    let mut ward = Ward::for_breaker::<Switch>(
        Reconnect {
            backoff: RIGID,
            ..policy
        },
        ms(0),
    );
    let permit = ward.connect(ms(0), 0.5).expect("closed");
    assert!(ward.connected(permit, ms(1)).is_none());
    ward.record(Outcome::Success, ms(2));
    ward.retune(
        Reconnect {
            breaker: true,
            backoff: RIGID,
            ..policy
        },
        ms(3),
    );
    assert!(ward.policy().breaker);
    let refusal = ward.connect(ms(4), 0.5).expect_err("switched open");
    assert_eq!(
        refusal,
        Refusal::Breaker {
            reason: "switched open",
            next: ms(100),
        }
    );
    assert_eq!(refusal.to_string(), "switched open; asked again in 100ms");
    // Held: the ward answers the same refusal without asking until the base has passed.
    assert_eq!(ward.next(ms(50)), ms(54));
    assert_eq!(ward.ratio(ms(50)), 1.0);
    assert_eq!(ward.breaker.heard, 1);
}
