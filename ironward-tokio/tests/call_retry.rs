//! `call::Retry` on a manual clock: the backoff of each jitter, `when`, a named wait, the
//! attempts spent, the total budget and its reserve, the attempt timeout, an outer deadline,
//! the shared retry budget and `notify`, each at exact instants.

use std::future::pending;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ironward::retry::{Cause, Retried, Rules};
use ironward::{Backoff, Jitter, SharedBudget};
use ironward_tokio::call::{CallError, Deadline, GaveUp, Retry, RetryExt};
use ironward_tokio::{Clock, Dice, Hand};

/// `n` milliseconds.
pub fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// 100 ms doubling to `cap`, `attempts` attempts, jittered by `jitter`; no time budget.
pub fn rules(attempts: u32, jitter: Jitter) -> Rules {
    Rules::new(Backoff {
        base: ms(100),
        factor: 2.0,
        cap: Duration::from_secs(10),
        attempts,
        jitter,
    })
}

/// A policy on a fresh manual clock at zero, drawing `roll` every time.
pub fn manual(rules: Rules, roll: f64) -> (Retry, Clock, Hand) {
    let (clock, hand) = Clock::manual(Duration::ZERO);
    let retry = Retry::new(rules)
        .with_clock(clock.clone())
        .with_dice(Dice::from_fn(move || roll));
    (retry, clock, hand)
}

/// An operation that takes `took` on `clock`, then answers the next of `answers` (an error
/// past their end), and the count of its calls.
#[allow(clippy::type_complexity)]
pub fn script(
    clock: &Clock,
    took: Duration,
    answers: Vec<Result<u32, &'static str>>,
) -> (
    impl FnMut() -> std::pin::Pin<Box<dyn Future<Output = Result<u32, &'static str>> + Send>> + use<>,
    Arc<AtomicU32>,
) {
    let calls = Arc::new(AtomicU32::new(0));
    let counted = Arc::clone(&calls);
    let clock = clock.clone();
    let answers = Arc::new(answers);
    let op = move || {
        let n = counted.fetch_add(1, Ordering::Relaxed) as usize;
        let answer = answers.get(n).copied().unwrap_or(Err("down"));
        let clock = clock.clone();
        Box::pin(async move {
            clock.sleep(took).await;
            answer
        }) as std::pin::Pin<Box<dyn Future<Output = _> + Send>>
    };
    (op, calls)
}

/// A `notify` that records each wait, and the record.
#[allow(clippy::type_complexity)]
fn waits() -> (impl Fn(&&'static str, Duration), Arc<Mutex<Vec<Duration>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let kept = Arc::clone(&seen);
    (
        move |_: &&'static str, wait| kept.lock().unwrap().push(wait),
        seen,
    )
}

fn record(attempts: u32, waited: Duration, stop: Option<Cause>) -> Retried {
    Retried {
        attempts,
        waited,
        stop,
    }
}

#[tokio::test]
async fn each_jitter_draws_its_waits_and_notify_hears_each() {
    // Four failing attempts, each ready at once: three waits, drawn at 0.5 (0.25 for the
    // spread), the clock moved by exactly their sum.
    let cases = [
        (Jitter::Rigid, 0.5, [100, 200, 400]),
        (Jitter::Full, 0.5, [50, 100, 200]),
        (Jitter::Equal, 0.5, [75, 150, 300]),
        // base + u · (max(base, 3 · previous) − base): 100 + ½·200, 100 + ½·500, 100 + ½·950.
        (Jitter::Decorrelated, 0.5, [200, 350, 575]),
        (Jitter::Spread(0.2), 0.25, [90, 180, 360]),
    ];
    for (jitter, roll, expected) in cases {
        let (retry, clock, _hand) = manual(rules(4, jitter), roll);
        let (op, calls) = script(&clock, Duration::ZERO, vec![]);
        let (notify, seen) = waits();
        let (answer, retried) = retry.call(op).notify(notify).recorded().await;
        let expected = expected.map(ms);
        let total: Duration = expected.iter().sum();
        assert_eq!(answer, Err(CallError::Failed("down")), "{jitter:?}");
        assert_eq!(*seen.lock().unwrap(), expected, "{jitter:?}");
        assert_eq!(
            retried,
            record(4, total, Some(Cause::AttemptsExhausted)),
            "{jitter:?}"
        );
        assert_eq!(clock.now(), total, "{jitter:?}");
        assert_eq!(calls.load(Ordering::Relaxed), 4);
    }
}

#[tokio::test]
async fn seeded_dice_give_the_backoff_of_the_same_draws() {
    let backoff = rules(6, Jitter::Full).backoff;
    let (clock, _hand) = Clock::manual(Duration::ZERO);
    let retry = Retry::new(Rules::new(backoff))
        .with_clock(clock.clone())
        .with_dice(Dice::seeded(7));
    let (op, _) = script(&clock, ms(10), vec![]);
    let (notify, seen) = waits();
    let (_, retried) = retry.call(op).notify(notify).recorded().await;
    let draws = Dice::seeded(7);
    let expected: Vec<Duration> = (1..6)
        .map(|n| backoff.delay(n, draws.roll(), None))
        .collect();
    assert_eq!(*seen.lock().unwrap(), expected);
    assert!(
        expected.windows(2).any(|w| w[0] != w[1]),
        "the draws differ"
    );
    let total: Duration = expected.iter().sum();
    assert_eq!(retried, record(6, total, Some(Cause::AttemptsExhausted)));
    assert_eq!(
        clock.now(),
        total + ms(60),
        "six 10 ms attempts and the waits"
    );
}

#[tokio::test]
async fn an_error_when_refuses_stops_at_once_and_tells_the_budget_nothing() {
    let (retry, clock, _hand) = manual(rules(5, Jitter::Rigid), 0.5);
    let budget = Arc::new(SharedBudget::new(10, 0.1));
    let retry = retry.with_budget(Arc::clone(&budget));
    let (op, calls) = script(&clock, ms(5), vec![Err("invalid")]);
    let (answer, retried) = op
        .retry(&retry)
        .when(|error: &&str| *error != "invalid")
        .recorded()
        .await;
    assert_eq!(answer, Err(CallError::Failed("invalid")));
    assert_eq!(retried, record(1, ms(0), Some(Cause::NotRetryable)));
    assert_eq!(calls.load(Ordering::Relaxed), 1);
    assert_eq!(clock.now(), ms(5));
    assert_eq!(budget.tokens(), 10.0);
}

#[tokio::test]
async fn a_named_wait_lengthens_the_backoff_and_one_past_the_cap_stops() {
    let (retry, clock, _hand) = manual(rules(5, Jitter::Rigid), 0.5);
    let (op, calls) = script(&clock, ms(0), vec![Err("slow down"), Err("down"), Ok(7)]);
    let named = |error: &&str| (*error == "slow down").then_some(ms(700));
    let (notify, seen) = waits();
    let (answer, retried) = retry.call(op).after(named).notify(notify).recorded().await;
    assert_eq!(answer, Ok(7));
    // 700 ms in place of the first 100 ms; the second is the backoff's 200 ms.
    assert_eq!(*seen.lock().unwrap(), [ms(700), ms(200)]);
    assert_eq!(retried, record(3, ms(900), None));
    assert_eq!((clock.now(), calls.load(Ordering::Relaxed)), (ms(900), 3));

    let (op, _) = script(&clock, ms(0), vec![]);
    let (answer, retried) = retry
        .call(op)
        .after(|_: &&str| Some(ms(10_001)))
        .recorded()
        .await;
    assert_eq!(answer, Err(CallError::Failed("down")));
    assert_eq!(
        retried,
        record(1, ms(0), Some(Cause::ServerDelayExceedsCap))
    );
}

#[tokio::test]
async fn the_preset_spends_three_attempts() {
    let (retry, clock, _hand) = manual(Rules::default(), 0.5);
    let (op, calls) = script(&clock, ms(20), vec![]);
    let (answer, retried) = retry.call(op).recorded().await;
    assert_eq!(answer, Err(CallError::Failed("down")));
    // The preset's spread at 0.5 is the ceiling: 100 ms, then 200 ms.
    assert_eq!(retried, record(3, ms(300), Some(Cause::AttemptsExhausted)));
    assert_eq!((clock.now(), calls.load(Ordering::Relaxed)), (ms(360), 3));
}

#[tokio::test]
async fn the_total_budget_and_its_reserve_stop_before_a_wait_that_cannot_fit() {
    let budgeted = Rules {
        total_budget: Duration::from_secs(1),
        request_reserve: ms(200),
        ..rules(10, Jitter::Rigid)
    };
    let (retry, clock, _hand) = manual(budgeted, 0.5);
    let (op, calls) = script(&clock, ms(50), vec![]);
    let (answer, retried) = retry.call(op).recorded().await;
    // Attempts end at 50, 200 and 450 ms; at 450 the 550 ms left cannot hold 400 + 200.
    assert_eq!(answer, Err(CallError::Failed("down")));
    assert_eq!(retried, record(3, ms(300), Some(Cause::BudgetExhausted)));
    assert_eq!((clock.now(), calls.load(Ordering::Relaxed)), (ms(450), 3));
}

#[tokio::test]
async fn the_attempt_timeout_cuts_each_attempt_and_the_engine_retries_it() {
    let (retry, clock, _hand) = manual(rules(3, Jitter::Rigid), 0.5);
    let retry = retry.with_attempt_timeout(ms(250));
    assert_eq!(retry.attempt_timeout(), Some(ms(250)));
    let calls = AtomicU32::new(0);
    let hung = || {
        calls.fetch_add(1, Ordering::Relaxed);
        pending::<Result<(), &str>>()
    };
    let (notify, seen) = waits();
    let (answer, retried) = retry.call(hung).notify(notify).recorded().await;
    // Cut at 250, waits 100, cut at 600, waits 200, cut at 1050: three attempts spent.
    let retried_then = record(3, ms(300), Some(Cause::AttemptsExhausted));
    let gave_up = GaveUp {
        cause: Cause::AttemptsExhausted,
        retried: retried_then,
    };
    assert_eq!(answer, Err(CallError::Refused(gave_up)));
    assert_eq!(retried, retried_then);
    assert_eq!((clock.now(), calls.load(Ordering::Relaxed)), (ms(1050), 3));
    assert!(
        seen.lock().unwrap().is_empty(),
        "a timeout has no error to notify"
    );

    // A value in time is the answer.
    let (op, _) = script(&clock, ms(250), vec![Ok(1)]);
    assert_eq!(retry.call(op).await, Ok(1));
    // One ready a nanosecond late is cut, as the timer would have cut it.
    let late = ms(250) + Duration::from_nanos(1);
    let (op, calls) = script(&clock, late, vec![Ok(1), Ok(2), Ok(3)]);
    let answer = retry.call(op).await;
    assert!(matches!(
        answer,
        Err(CallError::Refused(GaveUp {
            cause: Cause::AttemptsExhausted,
            ..
        }))
    ));
    assert_eq!(calls.load(Ordering::Relaxed), 3);
}

#[tokio::test]
async fn an_outer_deadline_is_the_budget_of_an_inner_retry() {
    let (retry, clock, _hand) = manual(rules(10, Jitter::Rigid), 0.5);
    // Failing attempts of 150 ms: they end at 150, 400 and 750 ms; at 750 the 250 ms left
    // cannot hold the 400 ms wait.
    let (op, calls) = script(&clock, ms(150), vec![]);
    let deadline = Deadline::after(Duration::from_secs(1), &clock);
    let (answer, retried) = deadline.scope(retry.call(op).recorded()).await;
    assert_eq!(answer, Err(CallError::Failed("down")));
    assert_eq!(retried, record(3, ms(300), Some(Cause::BudgetExhausted)));
    assert_eq!((clock.now(), calls.load(Ordering::Relaxed)), (ms(750), 3));

    // Hung attempts with a 300 ms timeout: cut at 300 and 700 ms; the third has the 100 ms
    // the deadline leaves, and is cut at it.
    let retry = retry.with_attempt_timeout(ms(300));
    let start = clock.now();
    let deadline = Deadline::after(Duration::from_secs(1), &clock);
    let hung = || pending::<Result<(), &str>>();
    let (answer, retried) = deadline.scope(retry.call(hung).recorded()).await;
    let at_deadline = record(3, ms(300), Some(Cause::BudgetExhausted));
    let gave_up = GaveUp {
        cause: Cause::BudgetExhausted,
        retried: at_deadline,
    };
    assert_eq!(answer, Err(CallError::Refused(gave_up)));
    assert_eq!(retried, at_deadline);
    assert_eq!(clock.now() - start, Duration::from_secs(1));

    // Each attempt sees its own deadline: the sooner of the timeout and the outer one.
    let seen = Arc::new(Mutex::new(Vec::new()));
    let kept = Arc::clone(&seen);
    let reads = move || {
        let kept = Arc::clone(&kept);
        async move {
            kept.lock().unwrap().push(Deadline::left());
            Err::<(), _>("down")
        }
    };
    let start = clock.now();
    let deadline = Deadline::after(ms(350), &clock);
    let _ = deadline.scope(retry.call(reads)).await;
    // At 0 the 300 ms timeout is sooner; at 100 and 300 ms what the deadline leaves.
    assert_eq!(
        *seen.lock().unwrap(),
        [Some(ms(300)), Some(ms(250)), Some(ms(50))]
    );
    assert_eq!(
        clock.now() - start,
        ms(300),
        "at 300 ms, 50 ms left cannot hold 400"
    );
}

#[tokio::test]
async fn a_passed_deadline_makes_no_attempt() {
    let (retry, clock, _hand) = manual(rules(3, Jitter::Rigid), 0.5);
    let (op, calls) = script(&clock, ms(0), vec![Ok(1)]);
    let passed = Deadline::after(Duration::ZERO, &clock);
    let (answer, retried) = passed.scope(retry.call(op).recorded()).await;
    let none = record(0, ms(0), Some(Cause::BudgetExhausted));
    let gave_up = GaveUp {
        cause: Cause::BudgetExhausted,
        retried: none,
    };
    assert_eq!(answer, Err(CallError::Refused(gave_up)));
    assert_eq!(
        gave_up.to_string(),
        "time budget exhausted before any attempt"
    );
    assert_eq!(retried, none);
    assert_eq!(calls.load(Ordering::Relaxed), 0);
}

#[tokio::test]
async fn the_shared_budget_throttles_retries_but_never_a_first_attempt() {
    let (retry, clock, _hand) = manual(rules(10, Jitter::Rigid), 0.5);
    // 4 tokens: a retry needs more than 2.
    let budget = Arc::new(SharedBudget::new(4, 0.5));
    let retry = retry.with_budget(Arc::clone(&budget));
    let (op, calls) = script(&clock, ms(0), vec![]);
    let (answer, retried) = retry.call(op).recorded().await;
    // The first failure leaves 3 (a wait); the second leaves 2 (throttled).
    assert_eq!(answer, Err(CallError::Failed("down")));
    assert_eq!(retried, record(2, ms(100), Some(Cause::Throttled)));
    assert_eq!((budget.tokens(), calls.load(Ordering::Relaxed)), (2.0, 2));

    // Throttled, a call still makes its first attempt, and its success gives half a token.
    let (op, _) = script(&clock, ms(0), vec![Ok(5)]);
    assert_eq!(retry.call(op).await, Ok(5));
    assert_eq!(budget.tokens(), 2.5);
    let (op, calls) = script(&clock, ms(0), vec![]);
    let (_, retried) = retry.call(op).recorded().await;
    assert_eq!(retried, record(1, ms(0), Some(Cause::Throttled)));
    assert_eq!((budget.tokens(), calls.load(Ordering::Relaxed)), (1.5, 1));
}

#[tokio::test]
async fn a_budget_of_none_and_a_zero_attempt_timeout_never_cut_a_slow_attempt() {
    // No time budget and a zero timeout (none): a 10-hour attempt is waited out.
    let (retry, clock, _hand) = manual(
        Rules::new(Backoff {
            attempts: 0,
            ..Backoff::default()
        }),
        0.5,
    );
    let retry = retry.with_attempt_timeout(Duration::ZERO);
    let (op, calls) = script(&clock, Duration::from_secs(36_000), vec![Err("down")]);
    let (answer, retried) = retry.call(op).recorded().await;
    assert_eq!(answer, Err(CallError::Failed("down")));
    assert_eq!(retried, record(1, ms(0), Some(Cause::AttemptsExhausted)));
    assert_eq!(clock.now(), Duration::from_secs(36_000));
    assert_eq!(calls.load(Ordering::Relaxed), 1);
}
