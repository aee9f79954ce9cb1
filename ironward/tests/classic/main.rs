//! The classic breaker through its public API: the progressive half-open, the changes of
//! state a retune makes, out-of-range input, and the reference implementations' test
//! vectors (resilience4j, failsafe-go, Polly), each case citing the test it ports.

use core::time::Duration;

use ironward::ClassicBreaker;
use ironward::classic::State;

mod extremes;
mod failsafe;
mod polly;
mod progressive;
mod resilience4j;
mod transitions;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

/// One call let through at `at` and settled after `took`, failed or not.
fn call(breaker: &mut ClassicBreaker, at: Duration, took: Duration, failed: bool) {
    let permit = breaker.check(at).expect("let through");
    settle(breaker, permit, at + took, failed);
}

/// Settles `permit` at `at`, failed or not: the breaker made it.
fn settle(
    breaker: &mut ClassicBreaker,
    permit: ironward::ClassicPermit,
    at: Duration,
    failed: bool,
) {
    let back = if failed {
        breaker.fail(permit, at)
    } else {
        breaker.pass(permit, at)
    };
    assert!(back.is_none(), "the breaker made the permit");
}

/// Fails calls at `at` until the breaker opens.
fn open(breaker: &mut ClassicBreaker, at: Duration) {
    for _ in 0..10_000 {
        if breaker.state(at) != State::Closed {
            break;
        }
        call(breaker, at, Duration::ZERO, true);
    }
    assert_eq!(breaker.state(at), State::Open);
}
