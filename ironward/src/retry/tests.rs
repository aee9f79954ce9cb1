//! Unit tests of the engine's words and of the wait arithmetic the core's loops share.

use alloc::string::ToString;
use core::time::Duration;

use super::room::{Room, Short, fits};
use super::*;
use crate::http_retry::{Stop, StopReason};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[test]
fn a_fit_is_strict_and_saturates() {
    assert!(fits(ms(1), ms(1), ms(3)));
    assert!(
        !fits(ms(1), ms(2), ms(3)),
        "exactly what is left is not enough"
    );
    assert!(!fits(Duration::ZERO, Duration::ZERO, Duration::ZERO));
    assert!(!fits(Duration::MAX, Duration::ZERO, Duration::MAX));
    assert!(!fits(Duration::MAX, Duration::MAX, Duration::MAX));
    let one = Duration::from_nanos(1);
    assert!(fits(Duration::MAX - one - one, one, Duration::MAX));
}

#[test]
fn a_room_checks_the_backoff_then_the_named_wait_then_the_sum() {
    let room = Room {
        left: ms(1_000),
        reserve: ms(100),
        cap: ms(500),
    };
    let none = || Ok::<_, ()>(None);
    assert_eq!(room.settle(ms(899), none), Ok(ms(899)));
    assert_eq!(room.settle(ms(900), none), Err(Short::Budget));
    // The named wait is not read when the backoff alone does not fit.
    let unread = || -> Result<Option<Duration>, ()> { panic!("read") };
    assert_eq!(room.settle(ms(900), unread), Err(Short::Budget));
    assert_eq!(room.settle(ms(10), || Err(7)), Err(Short::Named(7)));
    assert_eq!(
        room.settle(ms(10), || Ok::<_, ()>(Some(ms(501)))),
        Err(Short::Cap)
    );
    assert_eq!(
        room.settle(ms(10), || Ok::<_, ()>(Some(ms(500)))),
        Ok(ms(500))
    );
    let tight = Room {
        left: ms(600),
        ..room
    };
    assert_eq!(
        tight.settle(ms(10), || Ok::<_, ()>(Some(ms(500)))),
        Err(Short::Budget)
    );
}

#[test]
fn every_cause_keeps_its_label_as_an_http_stop() {
    for cause in Cause::ALL {
        let stop = Stop::from(cause);
        assert_eq!(stop.as_str(), cause.as_str(), "{cause:?}");
        assert_eq!(
            stop.to_string(),
            cause.to_string().replace("failure", "status")
        );
        let retried = Retried {
            stop: Some(cause),
            ..Retried::default()
        };
        assert_eq!(retried.outcome(), cause.as_str());
    }
    assert_eq!(
        Stop::from(Cause::NotRetryable),
        Stop::Decided(StopReason::NotRetryable)
    );
    let mut labels: alloc::vec::Vec<&str> = Cause::ALL.iter().map(Cause::as_str).collect();
    labels.push(Retried::<Cause>::default().outcome());
    labels.sort_unstable();
    labels.dedup();
    assert_eq!(labels.len(), Cause::ALL.len() + 1, "every label its own");
}

#[test]
fn the_constructors_say_what_they_build() {
    let failure: Failure = Failure::retryable(ms(3), 0.25).naming(ms(40));
    assert_eq!(
        failure,
        Failure {
            class: Class::Retryable,
            named: Ok(Some(ms(40))),
            now: ms(3),
            roll: 0.25
        }
    );
    let fatal = Failure::fatal(StopReason::InvalidInput, ms(9));
    assert_eq!(fatal.class, Class::Final(StopReason::InvalidInput));
    assert_eq!(fatal.named, Ok(None));
    assert_eq!(Rules::default(), Rules::new(crate::BACKOFF));
    assert_eq!(Rules::default().request_reserve, Duration::ZERO);
    let record: Retried = Retried::default();
    assert_eq!(
        (record.attempts, record.retries(), record.is_success()),
        (0, 0, true)
    );
    assert_eq!(Timeout::Attempt(ms(2)).duration(), ms(2));
}
