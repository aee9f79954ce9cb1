//! `call::Fallback` around the other pieces: which errors each rule replaces, and a fallback
//! around a breaker around a timeout on a manual clock.

use std::time::Duration;

use ironward::classic::{OpenWait, Record, State};
use ironward::{CLASSIC, Classic, GateReason};
use ironward_tokio::Clock;
use ironward_tokio::call::{Breaker, CallError, Fallback, Timeout, TimeoutReason};

use crate::call_breaker::secs;

type Gated = CallError<&'static str, GateReason>;

const FULL: GateReason = GateReason { held: 2, limit: 2 };

#[tokio::test]
async fn each_rule_replaces_its_own_errors() {
    let refused = || async { Err::<u32, Gated>(CallError::Refused(FULL)) };
    let failed = || async { Err::<u32, Gated>(CallError::Failed("down")) };
    let fine = || async { Ok::<u32, Gated>(1) };

    let any = Fallback::value(0);
    assert_eq!(any.call(refused).await, Ok(0));
    assert_eq!(any.call(failed).await, Ok(0));
    assert_eq!(any.call(fine).await, Ok(1));

    let on_refusal = Fallback::on_refusal(0);
    assert_eq!(on_refusal.call(refused).await, Ok(0));
    assert_eq!(
        on_refusal.call(failed).await,
        Err(CallError::Failed("down"))
    );

    let on_failure = Fallback::on_failure(0);
    assert_eq!(
        on_failure.call(refused).await,
        Err(CallError::Refused(FULL))
    );
    assert_eq!(on_failure.call(failed).await, Ok(0));

    // A function may hand on another error than the one it was given.
    let held = Fallback::from_fn(|error: Gated| match error {
        CallError::Refused(reason) => Ok(reason.held),
        other => Err(other.map_failure(|_| "replaced")),
    });
    assert_eq!(held.call(refused).await, Ok(2));
    assert_eq!(held.call(failed).await, Err(CallError::Failed("replaced")));

    let later = Fallback::from_async(|_: Gated| async { Ok(9) });
    assert_eq!(later.call(failed).await, Ok(9));
}

#[tokio::test]
async fn a_fallback_answers_for_a_breaker_and_a_timeout_on_a_manual_clock() {
    let (clock, hand) = Clock::manual(Duration::ZERO);
    let policy = Classic {
        record: Record::Consecutive { failures: 2 },
        open: OpenWait::Fixed(secs(10)),
        probes: 1,
        ..CLASSIC
    };
    let breaker = Breaker::new(policy).with_clock(clock.clone());
    let timeout = Timeout::new(secs(2)).with_clock(clock.clone());
    let fallback = Fallback::value("cached");
    let hung = std::future::pending::<Result<&str, std::io::Error>>;

    // Two calls cut at 2 s each: failures the breaker counts, each answered by the value.
    for end in [2, 4] {
        let answer = fallback.call(|| breaker.call(|| timeout.call(hung))).await;
        assert_eq!(answer.unwrap(), "cached");
        assert_eq!(clock.now(), secs(end));
    }
    assert_eq!(breaker.state(), Some(State::Open));
    // Open: refused at once, the clock unmoved, answered alike.
    let answer = fallback.call(|| breaker.call(|| timeout.call(hung))).await;
    assert_eq!((answer.unwrap(), clock.now()), ("cached", secs(4)));

    // Without the fallback, the two layers of error say what happened.
    let refused = breaker.call(|| timeout.call(hung)).await.unwrap_err();
    assert!(refused.is_refused());
    hand.advance(secs(10));
    let cut = breaker.call(|| timeout.call(hung)).await.unwrap_err();
    let elapsed = TimeoutReason::Elapsed { budget: secs(2) };
    assert_eq!(cut.failure().and_then(CallError::refusal), Some(&elapsed));
    assert_eq!(cut.to_string(), "call timed out after 2s");
}

#[tokio::test]
async fn fallback_calls_can_be_spawned() {
    let fallback = Fallback::from_async(|_: std::io::Error| async { Ok(0u8) }).with_name("api");
    assert_eq!(fallback.name(), "api");
    let spawned = tokio::spawn({
        let fallback = fallback.clone();
        async move {
            fallback
                .call(|| async { Err(std::io::Error::other("down")) })
                .await
        }
    });
    assert_eq!(spawned.await.unwrap().unwrap(), 0);
}
