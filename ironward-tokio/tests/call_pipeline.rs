//! `call::Pipeline` on a manual clock: the order it runs its pieces in whatever order the
//! builder had them, each refusal named by its piece, the fallback's choices, the retry
//! around a breaker and a timeout as one value, a breaker's named wait, retunes through one
//! tuner seen by every clone, and calls dropped mid-wait or mid-attempt that keep no room
//! and lose no budget token.

use std::future::{Future, pending};
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use ironward::classic::{Force, OpenWait, Record, State};
use ironward::retry::{Cause, Retried};
use ironward::{CLASSIC, Classic, ClassicReason, GateReason, Jitter, SharedBudget};
use ironward_tokio::call::Breaker;
use ironward_tokio::call::{
    BreakerRefusal, CallError, Deadline, Fallback, Gate, GaveUp, Limiter, Pipeline, PipelineError,
    Protect, Refusal, Retry, Timeout, TimeoutReason,
};
use ironward_tokio::{Clock, Dice, QUEUE, Queued, SharedLimiter};

use crate::call_breaker::{poll_once, secs};
use crate::call_retry::{ms, rules};

type Boxed = Pin<Box<dyn Future<Output = Result<&'static str, &'static str>> + Send>>;

/// A classic breaker's policy that opens after `failures` in a row, for `open`.
fn consecutive(failures: u32, open: Duration) -> Classic {
    Classic {
        record: Record::Consecutive { failures },
        open: OpenWait::Fixed(open),
        probes: 1,
        ..CLASSIC
    }
}

/// An operation that answers `answers` in turn and hangs past their end, and the count of
/// its calls.
fn script(
    answers: Vec<Result<&'static str, &'static str>>,
) -> (impl FnMut() -> Boxed + Clone + Send + use<>, Arc<AtomicU32>) {
    let calls = Arc::new(AtomicU32::new(0));
    let counted = Arc::clone(&calls);
    let op = move || -> Boxed {
        let n = counted.fetch_add(1, Ordering::Relaxed) as usize;
        match answers.get(n).copied() {
            Some(answer) => Box::pin(async move { answer }),
            None => Box::pin(pending()),
        }
    };
    (op, calls)
}

fn retried(attempts: u32, waited: Duration, stop: Option<Cause>) -> Option<Retried> {
    Some(Retried {
        attempts,
        waited,
        stop,
    })
}

#[tokio::test]
async fn the_order_holds_whatever_order_the_builder_was_given() {
    for reversed in [false, true] {
        let (clock, _hand) = Clock::manual(Duration::ZERO);
        let fallback = Fallback::on_failure("stale");
        let retry = Retry::new(rules(3, Jitter::Rigid));
        let gate = Gate::new(0);
        let breaker = Breaker::new(consecutive(3, secs(30)));
        let timeout = Timeout::new(secs(1));
        let pipeline = if reversed {
            Pipeline::builder()
                .timeout(timeout)
                .breaker(breaker)
                .gate(gate)
                .with_clock(clock.clone())
                .retry(retry)
                .fallback(fallback)
                .build()
        } else {
            Pipeline::builder()
                .with_clock(clock.clone())
                .fallback(fallback)
                .retry(retry)
                .gate(gate)
                .breaker(breaker)
                .timeout(timeout)
                .build()
        };
        assert_eq!(
            format!("{pipeline:?}"),
            r#"Pipeline { pieces: ["fallback", "retry", "gate", "breaker", "timeout"] }"#
        );

        // The gate refuses before the breaker sees anything, and its refusal is neither
        // retried nor counted as the backend's failure.
        let (op, calls) = script(vec![]);
        for _ in 0..5 {
            let (answer, record) = pipeline.recorded(op.clone()).await;
            let full = GateReason { held: 0, limit: 0 };
            assert_eq!(answer, Err(CallError::Refused(Refusal::Gate(full))));
            assert_eq!(
                record,
                retried(1, Duration::ZERO, Some(Cause::NotRetryable))
            );
        }
        assert_eq!(
            calls.load(Ordering::Relaxed),
            0,
            "a refused attempt never calls"
        );
        assert_eq!(pipeline.breaker().state(), Some(State::Closed));

        // With room, each attempt is cut by the timeout inside the breaker, which counts it:
        // three cuts, 100 ms and 200 ms apart, open the breaker.
        pipeline.concurrency().retune(1);
        let (answer, record) = pipeline.recorded(op.clone()).await;
        let cut = TimeoutReason::Elapsed { budget: secs(1) };
        assert_eq!(answer, Err(CallError::Refused(Refusal::Timeout(cut))));
        assert_eq!(record, retried(3, ms(300), Some(Cause::AttemptsExhausted)));
        assert_eq!(clock.now(), ms(3_300));
        assert_eq!(pipeline.breaker().state(), Some(State::Open));

        // Open for 30 s, past the backoff's 10 s cap: refused once, not waited on.
        let (answer, record) = pipeline.recorded(op).await;
        let Err(CallError::Refused(Refusal::Breaker(BreakerRefusal::Classic(open)))) = answer
        else {
            panic!("refused by the breaker: {answer:?}");
        };
        assert_eq!((open.state, open.next), (State::Open, secs(30)));
        assert_eq!(
            record,
            retried(1, Duration::ZERO, Some(Cause::ServerDelayExceedsCap))
        );
        assert_eq!(calls.load(Ordering::Relaxed), 3);
        assert_eq!((clock.now(), pipeline.concurrency().held()), (ms(3_300), 0));
    }
}

#[tokio::test]
async fn each_refusal_names_its_piece_and_carries_its_numbers() {
    let (clock, _hand) = Clock::manual(Duration::ZERO);
    let (hung, _) = script(vec![]);

    let forced = Classic {
        force: Force::Open,
        ..CLASSIC
    };
    let breaker = Pipeline::builder().breaker(Breaker::new(forced)).build();
    let refused = breaker.call(hung.clone()).await.unwrap_err();
    let reason = refused.refusal().expect("refused");
    assert_eq!((reason.piece(), reason.retry_after()), ("breaker", None));
    assert_eq!(refused.to_string(), "breaker forced open");
    assert!(matches!(
        reason,
        Refusal::Breaker(BreakerRefusal::Classic(ClassicReason {
            state: State::ForcedOpen,
            ..
        }))
    ));

    let timeout = Pipeline::builder()
        .timeout(Timeout::new(ms(250)))
        .with_clock(clock.clone())
        .build();
    let refused = timeout.call(hung.clone()).await.unwrap_err();
    let cut = Refusal::Timeout(TimeoutReason::Elapsed { budget: ms(250) });
    assert_eq!(refused, CallError::Refused(cut.clone()));
    assert_eq!(
        (cut.piece(), cut.to_string().as_str()),
        ("timeout", "call timed out after 250ms")
    );

    let one = SharedLimiter::new(crate::call_pipeline::fixed(1), clock.clone());
    let limiter = Pipeline::builder().limiter(Limiter::new(one)).build();
    let mut running = pin!(limiter.call(hung.clone()));
    assert!(poll_once(running.as_mut()).is_pending());
    let refused = limiter.call(hung.clone()).await.unwrap_err();
    let Some(Refusal::Limiter(full)) = refused.refusal() else {
        panic!("{refused:?}")
    };
    assert_eq!(
        (full.reason.flying, full.reason.limit, full.queued),
        (1, 1, Queued::Off)
    );
    assert_eq!(refused.refusal().unwrap().piece(), "limiter");

    // A retry whose deadline has passed makes no attempt, and has no error to return.
    let retry = Pipeline::builder()
        .retry(Retry::new(rules(3, Jitter::Rigid)))
        .with_clock(clock.clone())
        .build();
    let passed = Deadline::after(Duration::ZERO, &clock);
    let refused = passed.scope(retry.call(hung)).await.unwrap_err();
    let Some(Refusal::Retry(GaveUp { cause, retried })) = refused.refusal().cloned() else {
        panic!("{refused:?}");
    };
    assert_eq!((cause, retried.attempts), (Cause::BudgetExhausted, 0));
    assert_eq!(
        refused.to_string(),
        "time budget exhausted before any attempt"
    );
    assert_eq!(refused.refusal().unwrap().piece(), "retry");
}

/// An adaptive policy held at `limit`.
pub fn fixed(limit: u32) -> ironward::Adaptive {
    use ironward::limit::{AIMD, Aimd, Algorithm};
    ironward::Adaptive {
        algorithm: Algorithm::Aimd(Aimd {
            initial: limit,
            min: limit,
            max: limit,
            ..AIMD
        }),
        ..ironward::ADAPTIVE
    }
}

#[tokio::test]
async fn the_fallback_answers_what_its_rule_picks_by_piece() {
    let (down, _) = script(vec![Err("down"); 8]);
    let full = Pipeline::builder()
        .fallback(Fallback::on_refusal("cached"))
        .gate(Gate::new(0))
        .build();
    assert_eq!(full.call(down.clone()).await, Ok("cached"));
    let open = Pipeline::builder()
        .fallback(Fallback::on_refusal("cached"))
        .gate(Gate::new(1))
        .build();
    assert_eq!(
        open.call(down.clone()).await,
        Err(CallError::Failed("down"))
    );
    let failed = Pipeline::builder()
        .fallback(Fallback::on_failure("stale"))
        .gate(Gate::new(1))
        .build();
    assert_eq!(failed.call(down.clone()).await, Ok("stale"));

    // A rule that answers the breaker's refusals only: the gate's is handed on.
    let breaker_only = |error: PipelineError<&'static str>| match error {
        CallError::Refused(Refusal::Breaker(_)) => Ok("degraded"),
        other => Err(other),
    };
    let forced = Breaker::new(Classic {
        force: Force::Open,
        ..CLASSIC
    });
    let refused = Pipeline::builder()
        .fallback(Fallback::from_fn(breaker_only))
        .breaker(forced)
        .build();
    assert_eq!(refused.call(down.clone()).await, Ok("degraded"));
    let gated = Pipeline::builder()
        .fallback(Fallback::from_fn(breaker_only))
        .gate(Gate::new(0))
        .build();
    let full = GateReason { held: 0, limit: 0 };
    assert_eq!(
        gated.call(down).await,
        Err(CallError::Refused(Refusal::Gate(full)))
    );
}

#[tokio::test]
async fn the_retry_around_a_breaker_and_a_timeout_is_one_value() {
    let (clock, _hand) = Clock::manual(Duration::ZERO);
    let pipeline = Pipeline::builder()
        .fallback(Fallback::value("cached"))
        .retry(Retry::new(rules(3, Jitter::Rigid)))
        .breaker(Breaker::new(CLASSIC))
        .timeout(Timeout::new(secs(1)))
        .with_clock(clock.clone())
        .build();
    let (hung, calls) = script(vec![]);
    let (answer, record) = pipeline.recorded(hung).await;
    assert_eq!(answer, Ok("cached"));
    assert_eq!(record, retried(3, ms(300), Some(Cause::AttemptsExhausted)));
    assert_eq!((clock.now(), calls.load(Ordering::Relaxed)), (ms(3_300), 3));
}

#[tokio::test]
async fn a_breaker_open_is_waited_out_when_its_wait_fits_the_cap() {
    let (clock, _hand) = Clock::manual(Duration::ZERO);
    let build = |open| {
        Pipeline::builder()
            .retry(Retry::new(rules(3, Jitter::Rigid)))
            .breaker(Breaker::new(consecutive(1, open)))
            .with_clock(clock.clone())
            .build()
    };
    // Failed at 0 s, the breaker opens for 500 ms; refused at 100 ms, the retry waits the
    // 400 ms it names (more than the 200 ms backoff); the probe at 500 ms passes.
    let (op, calls) = script(vec![Err("down"), Ok("up")]);
    let (answer, record) = build(ms(500)).recorded(op).await;
    assert_eq!(answer, Ok("up"));
    assert_eq!(record, retried(3, ms(500), None));
    assert_eq!((clock.now(), calls.load(Ordering::Relaxed)), (ms(500), 2));

    // Open for a minute: past the cap, the refusal is the answer at 100 ms.
    let start = clock.now();
    let (op, calls) = script(vec![Err("down"), Ok("up")]);
    let (answer, record) = build(secs(60)).recorded(op).await;
    assert_eq!(
        answer.unwrap_err().refusal().map(Refusal::piece),
        Some("breaker")
    );
    assert_eq!(
        record,
        retried(2, ms(100), Some(Cause::ServerDelayExceedsCap))
    );
    assert_eq!(
        (clock.now() - start, calls.load(Ordering::Relaxed)),
        (ms(100), 1)
    );

    // A `when` of the caller's own replaces the default: no refusal retried.
    let strict = Pipeline::builder()
        .retry(Retry::new(rules(3, Jitter::Rigid)))
        .when(|error: &PipelineError<&str>| !error.is_refused())
        .breaker(Breaker::new(consecutive(1, ms(500))))
        .with_clock(clock.clone())
        .build();
    let (op, _) = script(vec![Err("down"), Ok("up")]);
    let (_, record) = strict.recorded(op).await;
    assert_eq!(record, retried(2, ms(100), Some(Cause::NotRetryable)));
}

#[tokio::test]
async fn one_tuner_retunes_every_piece_for_every_clone() {
    let (clock, _hand) = Clock::manual(Duration::ZERO);
    let pipeline = Pipeline::builder()
        .retry(Retry::new(rules(3, Jitter::Rigid)))
        .gate(Gate::new(4))
        .breaker(Breaker::new(consecutive(100, secs(30))))
        .timeout(Timeout::new(secs(1)))
        .with_clock(clock.clone())
        .build();
    let clone = pipeline.clone();
    let tuner = pipeline.tuner().clone();
    let (hung, _) = script(vec![]);

    assert_eq!(tuner.retune_timeout(ms(250)), Some(secs(1)));
    let start = clock.now();
    let (_, record) = clone.recorded(hung.clone()).await;
    assert_eq!(
        (record.map(|r| r.attempts), clock.now() - start),
        (Some(3), ms(3 * 250 + 300))
    );

    let was = tuner
        .retune_retry(rules(1, Jitter::Rigid))
        .expect("a retry");
    assert_eq!(was.backoff.attempts, 3);
    let start = clock.now();
    let (_, record) = clone.recorded(hung.clone()).await;
    assert_eq!(
        (record.map(|r| r.attempts), clock.now() - start),
        (Some(1), ms(250))
    );

    assert_eq!(tuner.retune_gate(0), Some(4));
    let full = GateReason { held: 0, limit: 0 };
    assert_eq!(
        clone.call(hung.clone()).await,
        Err(CallError::Refused(Refusal::Gate(full)))
    );
    assert_eq!(tuner.retune_gate(4), Some(0));

    let forced = Classic {
        force: Force::Open,
        ..consecutive(100, secs(30))
    };
    assert_eq!(
        tuner.retune_breaker(forced),
        Some(consecutive(100, secs(30)))
    );
    let refused = clone.call(hung).await.unwrap_err();
    assert_eq!(refused.to_string(), "breaker forced open");
    assert_eq!(pipeline.breaker().state(), Some(State::ForcedOpen));
    assert_eq!(
        (
            tuner.retune_limiter(ironward::ADAPTIVE),
            tuner.retune_queue(None)
        ),
        (None, None)
    );
}

#[tokio::test(start_paused = true)]
async fn a_call_dropped_mid_wait_or_mid_attempt_keeps_no_room_and_loses_no_token() {
    let budget = Arc::new(SharedBudget::new(10, 0.1));
    let pipeline = Pipeline::builder()
        .retry(Retry::new(rules(3, Jitter::Rigid)).with_budget(Arc::clone(&budget)))
        .gate(Gate::new(1))
        .breaker(Breaker::new(CLASSIC))
        .build();
    let gate = pipeline.concurrency();

    // The first attempt fails and is reported; the call is dropped in the wait after it.
    let (op, calls) = script(vec![Err("down")]);
    {
        let mut call = pin!(pipeline.call(op));
        assert!(poll_once(call.as_mut()).is_pending());
        assert_eq!(
            (calls.load(Ordering::Relaxed), gate.held()),
            (1, 0),
            "a wait holds no room"
        );
    }
    let after_one = budget.tokens();
    assert_eq!(after_one, 9.0, "the failure reported, nothing else");
    assert_eq!(gate.held(), 0);

    // Dropped while its attempt runs: the room comes back, the budget hears nothing.
    let (hung, _) = script(vec![]);
    {
        let mut call = pin!(pipeline.call(hung));
        assert!(poll_once(call.as_mut()).is_pending());
        assert_eq!(gate.held(), 1);
    }
    assert_eq!((gate.held(), budget.tokens()), (0, after_one));
}

#[tokio::test(start_paused = true)]
async fn a_call_dropped_in_the_limiter_s_queue_leaves_it() {
    let one =
        SharedLimiter::with_queue(fixed(1), QUEUE, Clock::monotonic(), Dice::from_fn(|| 0.99));
    let pipeline = Pipeline::builder().limiter(Limiter::new(one)).build();
    let limiter = pipeline.concurrency().limiter();
    let (hung, _) = script(vec![]);
    let mut running = pin!(pipeline.call(hung.clone()));
    assert!(poll_once(running.as_mut()).is_pending());
    {
        let mut waiting = pin!(pipeline.call(hung));
        assert!(poll_once(waiting.as_mut()).is_pending());
        assert_eq!((limiter.flying(), limiter.queued()), (1, 1));
    }
    assert_eq!((limiter.flying(), limiter.queued()), (1, 0));
}

#[tokio::test]
async fn clones_share_every_piece_across_tasks() {
    let pipeline = Pipeline::builder()
        .retry(Retry::new(rules(1, Jitter::Rigid)))
        .breaker(Breaker::new(consecutive(2, secs(30))))
        .gate(Gate::new(2))
        .timeout(Timeout::new(secs(1)))
        .build();
    let clone = pipeline.clone();
    let failed = tokio::spawn(async move {
        let (op, _) = script(vec![Err("down"), Err("down")]);
        (clone.call(op.clone()).await, op.protect(&clone).await)
    });
    let (first, second) = failed.await.expect("the task ends");
    assert_eq!(
        (first, second),
        (
            Err(CallError::Failed("down")),
            Err(CallError::Failed("down"))
        )
    );
    assert_eq!(
        pipeline.breaker().state(),
        Some(State::Open),
        "opened through the clone"
    );

    // A plain FnMut closure, through the extension form: refused, it is never called.
    let mut called = 0;
    let refused = (|| {
        called += 1;
        async { Ok::<_, &str>(1) }
    })
    .protect(&pipeline)
    .await;
    assert_eq!(
        refused.unwrap_err().refusal().map(Refusal::piece),
        Some("breaker")
    );
    assert_eq!(called, 0);
}

#[test]
fn a_pipeline_and_its_tuner_are_shared_handles() {
    fn shared<T: Clone + Send + Sync + 'static>(_: &T) {}
    let pipeline = Pipeline::builder()
        .fallback(Fallback::value(0))
        .retry(Retry::default())
        .limiter(Limiter::new(SharedLimiter::new(
            fixed(4),
            Clock::monotonic(),
        )))
        .breaker(Breaker::new(CLASSIC))
        .timeout(Timeout::new(secs(1)))
        .with_name("pricing")
        .build();
    shared(&pipeline);
    shared(&pipeline.tuner());
    let names = [
        pipeline.fallback().name(),
        pipeline.retry().retry().name(),
        pipeline.concurrency().name(),
        pipeline.breaker().name(),
        pipeline.timeout().name(),
    ];
    assert_eq!(names, ["pricing"; 5]);
}
