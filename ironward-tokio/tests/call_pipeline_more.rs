//! `call::Pipeline` with a hedge and a rate limit: the order holds whichever order the
//! builder had them in, a rate refusal is named with its numbers and retried after the wait
//! it names, a rate wait makes each attempt wait for its slot, each hedged copy passes the
//! rate limit, the gate, the breaker and the timeout and the losers are dropped, a call
//! dropped mid-race or mid-wait keeps nothing, both retune through the tuner, and `call_as`
//! reaches the limiter with its class. Races run on tokio's paused clock
//! (`Clock::monotonic` under `start_paused`), where copies overlap, each taking a known time;
//! the rest on a manual clock.

use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use ironward::classic::State;
use ironward::grpc::MAX_ATTEMPTS;
use ironward::retry::Cause;
use ironward::{Criticality, Jitter, SharedBudget};
use ironward_tokio::call::hedge::Tuning;
use ironward_tokio::call::retry::{After, When};
use ironward_tokio::call::{
    Breaker, CallError, Gate, Hedge, HedgeDelay, HedgeReason, Limiter, Pipeline, RateCause,
    RateLimit, RateReason, Refusal, RefusalWait, Retry, Retryable, Timeout, TimeoutReason,
};
use ironward_tokio::call::{Deadline, pipeline::RefusalHalts};
use ironward_tokio::{Clock, Quota, SharedLimiter};

use crate::call_breaker::{poll_once, secs};
use crate::call_hedge::{Act, Script, now};
use crate::call_pipeline::fixed;
use crate::call_retry::{ms, rules};

/// A classic breaker on [`consecutive`].
fn breaker(failures: u32) -> Breaker<ironward_tokio::SharedClassicBreaker> {
    Breaker::new(consecutive(failures))
}

/// A classic breaker's policy opening after `failures` in a row, for 30 s.
fn consecutive(failures: u32) -> ironward::Classic {
    use ironward::classic::{OpenWait, Record};
    ironward::Classic {
        record: Record::Consecutive { failures },
        open: OpenWait::Fixed(secs(30)),
        probes: 1,
        ..ironward::CLASSIC
    }
}

fn rate_refused(error: &CallError<&str, Refusal>) -> RateReason {
    match error {
        CallError::Refused(Refusal::RateLimit(reason)) => *reason,
        other => panic!("not a rate refusal: {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn the_order_holds_with_a_hedge_and_a_rate_limit_in_any_builder_order() {
    for reversed in [false, true] {
        let clock = Clock::monotonic();
        // Every copy hangs: each is cut by the timeout at 25 ms.
        let script = Script::new(&clock, &[]);
        let retry = Retry::new(rules(2, Jitter::Rigid));
        let hedge = Hedge::new(ms(10), 3);
        let rate = RateLimit::new(Quota::sliding(4, secs(60)));
        let gate = Gate::new(8);
        let timeout = Timeout::new(ms(25));
        let pipeline = if reversed {
            Pipeline::builder()
                .timeout(timeout)
                .breaker(breaker(5))
                .gate(gate)
                .rate_limit(rate)
                .hedge(hedge)
                .retry(retry)
                .with_clock(clock.clone())
                .build()
        } else {
            Pipeline::builder()
                .with_clock(clock.clone())
                .retry(retry)
                .hedge(hedge)
                .rate_limit(rate)
                .gate(gate)
                .breaker(breaker(5))
                .timeout(timeout)
                .build()
        };
        assert_eq!(
            format!("{pipeline:?}"),
            r#"Pipeline { pieces: ["retry", "hedge", "rate", "gate", "breaker", "timeout"] }"#
        );
        let (answer, retried) = pipeline.recorded(script.op()).await;
        // Round one: copies at 0, 10 and 20 ms, each spending a token and cut at 25 ms;
        // the last cut, at 45 ms, is the round's error. The retry waits 100 ms. Round two:
        // a copy at 145 ms takes the fourth token; the next, at 155 ms, is refused by the
        // rate limit, which stops the hedging; the copy in flight is cut at 170 ms.
        assert_eq!(
            answer,
            Err(CallError::Refused(Refusal::Timeout(
                TimeoutReason::Elapsed { budget: ms(25) }
            )))
        );
        assert_eq!(script.starts(), [ms(0), ms(10), ms(20), ms(145)]);
        assert_eq!(clock.now(), ms(170));
        let retried = retried.expect("a retry");
        assert_eq!((retried.attempts, retried.waited), (2, ms(100)));
        // Four cut copies, each counted by the breaker (five would open it); the refused
        // copy never reached it.
        assert_eq!(pipeline.breaker().state(), Some(State::Closed));
        let one_more = Script::new(&clock, &[]);
        let cut = pipeline.call(one_more.op()).await.unwrap_err();
        assert_eq!(
            rate_refused(&cut).cause,
            RateCause::Over,
            "no token left in the minute"
        );
        assert_eq!(
            (
                one_more.calls(),
                script.alive(),
                pipeline.concurrency().held()
            ),
            (0, 0, 0)
        );
    }
}

#[tokio::test]
async fn a_rate_refusal_is_named_with_its_numbers_and_retried_after_its_wait() {
    let (clock, hand) = Clock::manual(Duration::ZERO);
    let limit = Quota::sliding(1, secs(60));
    let pipeline = Pipeline::builder()
        .rate_limit(RateLimit::new(limit))
        .with_clock(clock.clone())
        .build();
    let ok = Script::new(&clock, &[now(Ok(1))]);
    assert_eq!(pipeline.call(ok.op()).await, Ok(1));
    hand.advance(secs(10));
    let refused = pipeline.call(ok.op()).await.unwrap_err();
    let reason = RateReason {
        cause: RateCause::Over,
        limit,
        cost: 1,
        wait: secs(50),
        bound: Duration::ZERO,
    };
    assert_eq!(refused, CallError::Refused(Refusal::RateLimit(reason)));
    let refusal = refused.refusal().unwrap();
    assert_eq!(
        (refusal.piece(), refusal.retry_after()),
        ("rate", Some(secs(50)))
    );
    assert_eq!(refusal.to_string(), reason.to_string());
    assert_eq!(ok.calls(), 1, "a refused call never runs");

    // The default rule retries it, by the rule for every refusal that names a wait ...
    assert!(Retryable.retryable(&refused));
    assert_eq!(RefusalWait.named(&refused), Some(secs(50)));

    // ... waiting that wait when it fits the backoff's cap (10 s): admitted at 1 s.
    let (clock, _hand) = Clock::manual(Duration::ZERO);
    let pipeline = Pipeline::builder()
        .retry(Retry::new(rules(3, Jitter::Rigid)))
        .rate_limit(RateLimit::new(Quota::sliding(1, secs(1))))
        .with_clock(clock.clone())
        .build();
    let script = Script::new(&clock, &[now(Ok(1)); 2]);
    assert_eq!(pipeline.call(script.op()).await, Ok(1));
    let (answer, retried) = pipeline.recorded(script.op()).await;
    assert_eq!((answer, clock.now()), (Ok(1), secs(1)));
    let retried = retried.unwrap();
    assert_eq!((retried.attempts, retried.waited), (2, secs(1)));
    assert_eq!(script.starts(), [Duration::ZERO, secs(1)]);

    // ... and not when it is above the cap, nor when room never comes: the refusal, at once.
    let (clock, _hand) = Clock::manual(Duration::ZERO);
    for (limit, wait) in [
        (Quota::sliding(1, secs(60)), secs(60)),
        (Quota::sliding(0, secs(1)), Duration::MAX),
    ] {
        let pipeline = Pipeline::builder()
            .retry(Retry::new(rules(3, Jitter::Rigid)))
            .rate_limit(RateLimit::new(limit))
            .with_clock(clock.clone())
            .build();
        let script = Script::new(&clock, &[now(Ok(1))]);
        if wait != Duration::MAX {
            assert_eq!(pipeline.call(script.op()).await, Ok(1));
        }
        let (answer, retried) = pipeline.recorded(script.op()).await;
        assert_eq!(rate_refused(&answer.unwrap_err()).wait, wait);
        let retried = retried.unwrap();
        assert_eq!(
            (retried.attempts, retried.stop),
            (1, Some(Cause::ServerDelayExceedsCap))
        );
        assert_eq!(clock.now(), Duration::ZERO);
    }
}

#[tokio::test]
async fn a_rate_wait_inside_the_retry_makes_each_attempt_wait_for_its_slot() {
    let (clock, _hand) = Clock::manual(Duration::ZERO);
    let pipeline = Pipeline::builder()
        .rate_limit(RateLimit::new(Quota::sliding(1, secs(1))).wait_up_to(secs(2)))
        .retry(Retry::new(rules(3, Jitter::Rigid)))
        .gate(Gate::new(1))
        .with_clock(clock.clone())
        .build();
    let script = Script::new(&clock, &[now(Err("down")), now(Err("down")), now(Ok(7))]);
    let (answer, retried) = pipeline.recorded(script.op()).await;
    assert_eq!(answer, Ok(7));
    // Failed at 0, the retry waits 100 ms, and the attempt then waits in the rate limit for
    // the window's slot at 1 s; failed there, 200 ms, and the slot at 2 s.
    assert_eq!(script.starts(), [Duration::ZERO, secs(1), secs(2)]);
    let retried = retried.unwrap();
    assert_eq!((retried.attempts, retried.waited), (3, ms(300)));
    assert_eq!(pipeline.concurrency().held(), 0);
}

#[tokio::test(start_paused = true)]
async fn hedged_copies_each_pass_the_breaker_and_the_timeout_and_the_losers_are_dropped() {
    let clock = Clock::monotonic();
    // Copy 0 hangs, cut at 100 ms; copy 1 hangs; copy 2 answers 5 ms after its start.
    let script = Script::new(&clock, &[Act::Hang, Act::Hang, Act::Take(ms(5), Ok(3))]);
    let pipeline = Pipeline::builder()
        .hedge(Hedge::new(ms(10), 3))
        .gate(Gate::new(3))
        .breaker(breaker(3))
        .timeout(Timeout::new(ms(100)))
        .with_clock(clock.clone())
        .build();
    assert_eq!(pipeline.call(script.op()).await, Ok(3));
    assert_eq!(
        (script.starts(), clock.now()),
        (vec![ms(0), ms(10), ms(20)], ms(25))
    );
    assert_eq!(
        (script.alive(), pipeline.concurrency().held()),
        (0, 0),
        "the two losers dropped, their room given back"
    );

    // Three copies failing, each counted by the breaker: it opens on the third.
    let down = |at| Act::Take(ms(at), Err("down"));
    let script = Script::new(&clock, &[down(30), down(30), down(30)]);
    let start = clock.now();
    let answer = pipeline.call(script.op()).await;
    assert_eq!(answer, Err(CallError::Failed("down")));
    assert_eq!(
        clock.now() - start,
        ms(50),
        "the last copy, sent at 20 ms, fails at 50"
    );
    assert_eq!(pipeline.breaker().state(), Some(State::Open));

    // Open, it refuses the first copy; the refusal stops the hedging, and the round
    // answers it.
    let script = Script::new(&clock, &[]);
    let refused = pipeline.call(script.op()).await.unwrap_err();
    assert_eq!(refused.refusal().map(Refusal::piece), Some("breaker"));
    assert_eq!(script.calls(), 0);
    assert_eq!(
        RefusalHalts.named(&refused),
        Some(Duration::MAX),
        "no copy after a refusal"
    );
}

#[tokio::test(start_paused = true)]
async fn a_copy_the_gate_refuses_stops_the_hedging_and_the_copy_in_flight_races_on() {
    let clock = Clock::monotonic();
    // Copy 0 answers at 30 ms; copy 1, at 10 ms, finds the gate full.
    let script = Script::new(&clock, &[Act::Take(ms(30), Ok(1))]);
    let pipeline = Pipeline::builder()
        .hedge(Hedge::new(ms(10), 5))
        .gate(Gate::new(1))
        .with_clock(clock.clone())
        .build();
    assert_eq!(pipeline.call(script.op()).await, Ok(1));
    assert_eq!((script.calls(), clock.now()), (1, ms(30)));

    // Made fatal by the hedge's `when`, the gate's refusal ends the round at 10 ms and
    // drops copy 0.
    let fatal = Pipeline::builder()
        .hedge(Hedge::new(ms(10), 5))
        .gate(Gate::new(1))
        .hedge_when(|error: &CallError<&str, Refusal>| error.refusal().is_none())
        .with_clock(clock.clone())
        .build();
    let script = Script::new(&clock, &[Act::Take(ms(30), Ok(1))]);
    let start = clock.now();
    let refused = fatal.call(script.op()).await.unwrap_err();
    assert_eq!(refused.refusal().map(Refusal::piece), Some("gate"));
    assert_eq!((clock.now() - start, script.alive()), (ms(10), 0));
    assert_eq!(fatal.concurrency().held(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_call_dropped_while_hedges_race_keeps_no_room_and_loses_no_token() {
    let clock = Clock::monotonic();
    let budget = Arc::new(SharedBudget::new(10, 0.1));
    let script = Script::new(&clock, &[]);
    let pipeline = Pipeline::builder()
        .retry(Retry::new(rules(3, Jitter::Rigid)).with_budget(Arc::clone(&budget)))
        .hedge(Hedge::new(ms(10), 3).with_budget(Arc::clone(&budget)))
        .rate_limit(RateLimit::new(Quota::sliding(10, secs(60))))
        .gate(Gate::new(8))
        .breaker(breaker(1))
        .timeout(Timeout::new(secs(1)))
        .with_clock(clock.clone())
        .build();
    {
        let mut call = pin!(pipeline.call(script.op()));
        let raced = tokio::time::timeout(ms(25), call.as_mut()).await;
        assert!(raced.is_err(), "still racing");
        assert_eq!((script.alive(), pipeline.concurrency().held()), (3, 3));
    }
    assert_eq!((script.alive(), pipeline.concurrency().held()), (0, 0));
    assert_eq!(budget.tokens(), 10.0, "no copy ended: nothing told");
    // No copy was settled: the breaker, opening on one failure, is closed.
    assert_eq!(pipeline.breaker().state(), Some(State::Closed));
}

#[tokio::test(start_paused = true)]
async fn a_call_dropped_while_it_waits_for_the_rate_holds_no_room_and_gives_its_slot_back() {
    let clock = Clock::monotonic();
    let pipeline = Pipeline::builder()
        .rate_limit(RateLimit::new(Quota::sliding(1, secs(1))).wait_up_to(secs(5)))
        .gate(Gate::new(1))
        .with_clock(clock.clone())
        .build();
    let script = Script::new(&clock, &[now(Ok(1)); 3]);
    assert_eq!(pipeline.call(script.op()).await, Ok(1));
    {
        let mut waiting = pin!(pipeline.call(script.op()));
        assert!(poll_once(waiting.as_mut()).is_pending());
        assert_eq!(
            (script.calls(), pipeline.concurrency().held()),
            (1, 0),
            "a call waiting for its slot holds no room"
        );
    }
    // The slot at 1 s, given back, goes to the next call: not lost, nor pushed to 2 s.
    assert_eq!(pipeline.call(script.op()).await, Ok(1));
    assert_eq!(
        (script.starts(), clock.now()),
        (vec![ms(0), secs(1)], secs(1))
    );
}

#[tokio::test]
async fn the_tuner_retunes_the_hedge_and_the_rate_limit() {
    let (clock, _hand) = Clock::manual(Duration::ZERO);
    let pipeline = Pipeline::builder()
        .hedge(Hedge::new(ms(10), 2))
        .rate_limit(RateLimit::new(Quota::bucket(1.0, 1.0)))
        .with_clock(clock.clone())
        .build();
    let tuner = pipeline.clone().tuner();
    let tuning = Tuning {
        delay: HedgeDelay::Fixed(ms(20)),
        max_attempts: 9,
    };
    let before = tuner.retune_hedge(tuning);
    assert_eq!(
        before,
        Some(Tuning {
            delay: HedgeDelay::Fixed(ms(10)),
            max_attempts: 2
        })
    );
    let hedge = pipeline.hedge().hedge();
    assert_eq!(
        (hedge.delay(), hedge.max_attempts()),
        (ms(20), MAX_ATTEMPTS)
    );

    let wider = Quota::bucket(10.0, 2.0);
    assert_eq!(tuner.retune_rate(wider), Some(Ok(Quota::bucket(1.0, 1.0))));
    assert_eq!(pipeline.rate().limit(), wider);
    let window = Quota::sliding(5, secs(1));
    assert_eq!(tuner.retune_rate(window), Some(Err(window)));
    assert_eq!(pipeline.rate().limit(), wider, "another kind: unchanged");
    // The bucket kept its one token; the next comes at the new rate, 100 ms on.
    let script = Script::new(&clock, &[now(Ok(1)); 3]);
    assert_eq!(pipeline.call(script.op()).await, Ok(1));
    let refused = pipeline.call(script.op()).await.unwrap_err();
    assert_eq!(rate_refused(&refused).wait, ms(100));

    let bare = Pipeline::builder().gate(Gate::new(1)).build().tuner();
    assert_eq!(
        (bare.retune_hedge(tuning), bare.retune_rate(wider)),
        (None, None)
    );
}

#[tokio::test(start_paused = true)]
async fn call_as_reaches_the_limiter_with_its_class() {
    let one = SharedLimiter::new(fixed(1), Clock::monotonic());
    let pipeline = Pipeline::builder().limiter(Limiter::new(one)).build();
    let script = Script::new(&Clock::monotonic(), &[]);
    let mut running = pin!(pipeline.call(script.op()));
    assert!(poll_once(running.as_mut()).is_pending());
    for class in [Criticality::Sheddable, Criticality::CriticalPlus] {
        let refused = pipeline.call_as(class, script.op()).await.unwrap_err();
        let Some(Refusal::Limiter(full)) = refused.refusal() else {
            panic!("{refused:?}")
        };
        assert_eq!(full.reason.criticality, class);
    }
    assert_eq!(script.calls(), 1);
}

#[tokio::test]
async fn a_pipeline_of_every_piece_is_spawnable() {
    let pipeline = Pipeline::builder()
        .retry(Retry::new(rules(2, Jitter::Rigid)))
        .hedge(Hedge::new(ms(10), 2))
        .rate_limit(RateLimit::new(Quota::bucket(10.0, 10.0)))
        .gate(Gate::new(4))
        .breaker(breaker(3))
        .timeout(Timeout::new(secs(1)))
        .with_name("pricing")
        .build();
    let clone = pipeline.clone();
    let task = tokio::spawn(async move {
        let script = Script::new(&Clock::monotonic(), &[now(Ok(5))]);
        clone.call(script.op()).await
    });
    assert_eq!(task.await.expect("the task ends"), Ok(5));
    let names = [pipeline.hedge().hedge().name(), pipeline.rate().name()];
    assert_eq!(names, ["pricing"; 2]);
}

#[tokio::test]
async fn the_hedge_s_deadline_refusal_is_named() {
    let (clock, _hand) = Clock::manual(Duration::ZERO);
    let pipeline = Pipeline::builder()
        .hedge(Hedge::new(ms(10), 2))
        .with_clock(clock.clone())
        .build();
    let script = Script::new(&clock, &[]);
    let passed = Deadline::after(Duration::ZERO, &clock);
    let refused = passed.scope(pipeline.call(script.op())).await.unwrap_err();
    assert_eq!(
        refused,
        CallError::Refused(Refusal::Hedge(HedgeReason::Exceeded))
    );
    let refusal = refused.refusal().unwrap();
    assert_eq!((refusal.piece(), refusal.retry_after()), ("hedge", None));
    assert!(
        !Retryable.retryable(&refused),
        "a passed deadline does not come back"
    );
    assert_eq!(script.calls(), 0);
}
