//! `call::Retry` beyond its rules: the blocking form, cancellation (dropped mid-wait and
//! mid-attempt), and parity with `http_retry::Run`, the same engine under HTTP's rules.

use std::future::{Future, IntoFuture, pending};
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::task::Poll;
use std::time::{Duration, Instant};

use ironward::SharedBudget;
use ironward::http_retry::{Call, Reading, Run, Settings, Step, retryable_status};
use ironward::retry::Retried;
use ironward_tokio::call::{CallError, Retry, RetryExt};
use ironward_tokio::{Clock, Dice};

use crate::call_breaker::poll_once;
use crate::call_retry::{manual, ms, rules};

#[test]
fn the_blocking_form_moves_a_manual_clock_by_its_waits() {
    let (retry, clock, _hand) = manual(rules(5, ironward::Jitter::Rigid), 0.5);
    let mut left = 2;
    let op = || {
        clock.sleep_blocking(ms(10));
        if left == 0 {
            return Ok("done");
        }
        left -= 1;
        Err(if left == 1 { "busy" } else { "slow down" })
    };
    let seen = std::sync::Mutex::new(Vec::new());
    let (answer, retried) = op
        .retry(&retry)
        .after(|e: &&'static str| (*e == "slow down").then_some(ms(500)))
        .notify(|e: &&'static str, wait| seen.lock().unwrap().push((*e, wait)))
        .blocking_recorded();
    assert_eq!(answer, Ok("done"));
    assert_eq!(
        *seen.lock().unwrap(),
        [("busy", ms(100)), ("slow down", ms(500))]
    );
    let expected = Retried {
        attempts: 3,
        waited: ms(600),
        stop: None,
    };
    assert_eq!(retried, expected);
    assert_eq!(clock.now(), ms(630));

    // `when` refuses in the blocking form too.
    let refused = retry
        .call(|| Err::<(), _>(404))
        .when(|status: &u16| *status >= 500)
        .blocking();
    assert_eq!(refused, Err(CallError::Failed(404)));
}

#[test]
fn the_blocking_form_sleeps_the_thread_on_a_real_clock() {
    let retry = Retry::new(rules(3, ironward::Jitter::Rigid)).with_clock(Clock::unix());
    let start = Instant::now();
    let calls = AtomicU32::new(0);
    let answer = retry
        .call(|| match calls.fetch_add(1, Ordering::Relaxed) {
            0 | 1 => Err("busy"),
            _ => Ok(()),
        })
        .blocking();
    assert_eq!(answer, Ok(()));
    // 100 ms, then 200 ms, slept: at least that long (a loaded machine may take longer).
    assert!(start.elapsed() >= ms(300), "{:?}", start.elapsed());
    assert_eq!(calls.load(Ordering::Relaxed), 3);
}

/// Sets its flag when dropped: the attempt future it lives in is gone.
struct Dropped(Arc<AtomicBool>);

impl Drop for Dropped {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

#[tokio::test(start_paused = true)]
async fn dropped_mid_wait_no_token_is_lost_and_nothing_runs_on() {
    let budget = Arc::new(SharedBudget::new(10, 0.1));
    let retry = Retry::new(rules(5, ironward::Jitter::Rigid)).with_budget(Arc::clone(&budget));
    let calls = AtomicU32::new(0);
    let op = || {
        calls.fetch_add(1, Ordering::Relaxed);
        async { Err::<(), _>("down") }
    };
    {
        let mut future = pin!(retry.call(op).recorded());
        // The first attempt fails at once; the 100 ms wait is a tokio sleep, pending.
        assert!(poll_once(future.as_mut()).is_pending());
        assert_eq!((budget.tokens(), calls.load(Ordering::Relaxed)), (9.0, 1));
    }
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(budget.tokens(), 9.0, "the failure told, no more");
    assert_eq!(
        calls.load(Ordering::Relaxed),
        1,
        "no attempt after the drop"
    );
}

#[tokio::test(start_paused = true)]
async fn dropped_mid_attempt_the_attempt_is_dropped_and_the_budget_untouched() {
    let budget = Arc::new(SharedBudget::new(10, 0.1));
    let retry = Retry::new(rules(5, ironward::Jitter::Rigid))
        .with_budget(Arc::clone(&budget))
        .with_attempt_timeout(Duration::from_secs(1));
    let dropped = Arc::new(AtomicBool::new(false));
    let calls = AtomicU32::new(0);
    let op = || {
        calls.fetch_add(1, Ordering::Relaxed);
        let guard = Dropped(Arc::clone(&dropped));
        async move {
            let _guard = guard;
            pending::<Result<(), &str>>().await
        }
    };
    {
        let mut future = pin!(retry.call(op).recorded());
        assert!(poll_once(future.as_mut()).is_pending());
        assert!(!dropped.load(Ordering::Relaxed));
    }
    assert!(
        dropped.load(Ordering::Relaxed),
        "the attempt went with the call"
    );
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!((budget.tokens(), calls.load(Ordering::Relaxed)), (10.0, 1));
}

/// What each attempt answers in the parity runs: a status, and a `Retry-After` in seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Answer(u16, Option<u64>);

/// How a run went: each wait, the attempts, the stop's label and the clock at the end.
type Run_ = (Vec<Duration>, u32, &'static str, Duration);

/// `answers` through `http_retry::Run`, each attempt taking 30 ms, the draws from `dice`.
fn through_run(settings: Settings, answers: &[Answer], dice: &Dice) -> Run_ {
    let call = Call {
        method: "GET",
        body_replayable: true,
        replay_safe: false,
    };
    let mut now = Duration::ZERO;
    let mut run = Run::new(settings, &call, now);
    let mut waits = Vec::new();
    for &Answer(status, after) in answers.iter().cycle() {
        if run.attempt(now, None).is_err() {
            break;
        }
        now += ms(30);
        let roll = if status >= 400 { dice.roll() } else { 1.0 };
        let reading = Reading {
            now,
            unix: Duration::from_secs(1_700_000_000),
            roll,
        };
        let field = after.map(|s| s.to_string());
        let fields = field.iter().map(|f| f.as_bytes());
        match run.response(status, fields, reading, None) {
            Step::Wait(wait) => {
                waits.push(wait);
                now += wait;
            }
            Step::Done | Step::Stop(_) => break,
        }
    }
    let retried = run.retried();
    let stop = retried.stop.map_or("success", |stop| stop.as_str());
    (waits, retried.attempts, stop, now)
}

/// `answers` through `call::Retry` on the same rules, the status retried as HTTP retries it
/// and its `Retry-After` the wait it names.
async fn through_retry(settings: Settings, answers: &[Answer], dice: Dice) -> Run_ {
    let (clock, _hand) = Clock::manual(Duration::ZERO);
    let retry = Retry::new(settings.rules())
        .with_clock(clock.clone())
        .with_dice(dice);
    let made = AtomicU32::new(0);
    let op = || {
        let n = made.fetch_add(1, Ordering::Relaxed) as usize;
        let answer = answers[n % answers.len()];
        let clock = clock.clone();
        async move {
            clock.sleep(ms(30)).await;
            if answer.0 < 400 {
                Ok(answer.0)
            } else {
                Err(answer)
            }
        }
    };
    let waits = std::sync::Mutex::new(Vec::new());
    let (_, retried) = op
        .retry(&retry)
        .when(|a: &Answer| retryable_status(a.0))
        .after(|a: &Answer| a.1.map(Duration::from_secs))
        .notify(|_: &Answer, wait| waits.lock().unwrap().push(wait))
        .recorded()
        .await;
    let stop = retried.stop.map_or("success", |c| c.as_str());
    (
        waits.into_inner().unwrap(),
        retried.attempts,
        stop,
        clock.now(),
    )
}

#[tokio::test]
async fn the_same_failures_wait_alike_through_retry_and_http_run() {
    let settings = Settings {
        max_retries: 4,
        base_delay: ms(100),
        max_delay: Duration::from_secs(2),
        total_budget: Duration::from_secs(7),
        request_reserve: ms(100),
    };
    let a = Answer;
    let cases: [(&[Answer], &str, u32); 5] = [
        // Transient failures, two naming a second, then a success.
        (
            &[
                a(503, None),
                a(503, Some(1)),
                a(500, None),
                a(429, Some(1)),
                a(200, None),
            ],
            "success",
            5,
        ),
        // Failing throughout: five attempts.
        (&[a(503, None)], "attempts_exhausted", 5),
        // A 404 is not retried.
        (&[a(502, None), a(404, None)], "not_retryable", 2),
        // A wait of 3 s, above the 2 s cap.
        (&[a(503, Some(3))], "server_delay_exceeds_cap", 1),
        // Waits of 2 s each: at 6.12 s the 0.88 s left of the 7 s cannot hold another.
        (&[a(503, Some(2)), a(504, Some(2))], "budget_exhausted", 4),
    ];
    for (seed, (answers, stop, attempts)) in cases.into_iter().enumerate() {
        let by_run = through_run(settings, answers, &Dice::seeded(seed as u64));
        let by_retry = through_retry(settings, answers, Dice::seeded(seed as u64)).await;
        assert_eq!(by_retry, by_run, "{answers:?}");
        assert_eq!((by_retry.1, by_retry.2), (attempts, stop), "{answers:?}");
    }
}

#[test]
fn poll_once_is_ready_for_a_value_at_once() {
    let (retry, _clock, _hand) = manual(rules(3, ironward::Jitter::Rigid), 0.5);
    let mut future = pin!(retry.call(|| async { Ok::<_, ()>(1) }).recorded());
    assert!(matches!(
        poll_once(future.as_mut()),
        Poll::Ready((Ok(1), _))
    ));
}

/// Rules of `attempts` attempts whose every wait is zero.
fn zero_waits(attempts: u32) -> ironward::retry::Rules {
    ironward::retry::Rules::new(ironward::Backoff {
        base: Duration::ZERO,
        ..rules(attempts, ironward::Jitter::Rigid).backoff
    })
}

#[tokio::test(flavor = "current_thread")]
async fn a_zero_wait_on_the_real_clock_is_no_sleep() {
    // Three failures and a success with waits of zero: all four attempts in the first poll,
    // where a zero sleep on tokio's timer would wait for its next tick.
    let retry = Retry::new(zero_waits(4));
    let calls = AtomicU32::new(0);
    let op = || async {
        match calls.fetch_add(1, Ordering::Relaxed) {
            0..=2 => Err("busy"),
            n => Ok(n + 1),
        }
    };
    let mut call = pin!(op.retry(&retry).recorded());
    let Poll::Ready((answer, retried)) = poll_once(call.as_mut()) else {
        panic!("a zero wait slept");
    };
    assert_eq!(answer, Ok(4));
    assert_eq!((retried.attempts, retried.waited), (4, Duration::ZERO));
}

#[tokio::test(flavor = "current_thread")]
async fn a_long_run_of_zero_waits_still_yields_to_the_runtime() {
    // A thousand failed attempts with zero waits, never pending themselves: the retry takes a
    // unit of the task's cooperative budget per zero wait, so it is pending (and woken) now
    // and then instead of holding the thread for the whole run.
    let retry = Retry::new(zero_waits(1_000));
    let mut call = pin!(retry.call(|| async { Err::<(), _>("busy") }).into_future());
    let mut polls = 0;
    let answer = std::future::poll_fn(|cx| {
        polls += 1;
        call.as_mut().poll(cx)
    })
    .await;
    assert_eq!(answer, Err(CallError::Failed("busy")));
    assert!(polls > 1, "a thousand zero waits in one poll");
}

#[tokio::test(flavor = "current_thread")]
async fn a_first_try_success_reads_the_clock_once() {
    // The start of the call (its engine's time budget) reads the clock; the success decides
    // nothing that takes the time, so it reads none. A failure reads it for the engine.
    let reads = Arc::new(AtomicU32::new(0));
    let counted = Arc::clone(&reads);
    let clock = Clock::from_fn(move || {
        counted.fetch_add(1, Ordering::Relaxed);
        Duration::ZERO
    });
    let retry = Retry::new(zero_waits(2)).with_clock(clock);
    let answer = retry.call(|| async { Ok::<_, ()>(1) }).await;
    assert_eq!((answer, reads.load(Ordering::Relaxed)), (Ok(1), 1));
    reads.store(0, Ordering::Relaxed);
    let mut failed = false;
    let op = || {
        let first = !std::mem::replace(&mut failed, true);
        async move { if first { Err(()) } else { Ok(2) } }
    };
    let answer = retry.call(op).await;
    // Each attempt's start, and the failure's end.
    assert_eq!((answer, reads.load(Ordering::Relaxed)), (Ok(2), 3));
}

#[tokio::test]
async fn a_call_made_before_a_retune_keeps_the_rules_it_was_made_with() {
    let (retry, _clock, _hand) = manual(rules(3, ironward::Jitter::Rigid), 0.5);
    let made = AtomicU32::new(0);
    let failing = || {
        made.fetch_add(1, Ordering::Relaxed);
        std::future::ready(Err::<(), _>("busy"))
    };
    let before = failing.retry(&retry).recorded();
    let was = retry.retune(rules(1, ironward::Jitter::Rigid));
    assert_eq!(was.backoff.attempts, 3);
    let (_, retried) = before.await;
    assert_eq!((retried.attempts, made.load(Ordering::Relaxed)), (3, 3));
    let (_, retried) = failing.retry(&retry).recorded().await;
    assert_eq!((retried.attempts, made.load(Ordering::Relaxed)), (1, 4));
}

#[tokio::test]
async fn a_jitter_that_reads_no_draw_draws_nothing() {
    let (clock, _hand) = Clock::manual(Duration::ZERO);
    let draws = Arc::new(AtomicU32::new(0));
    let counted = Arc::clone(&draws);
    let dice = Dice::from_fn(move || {
        counted.fetch_add(1, Ordering::Relaxed);
        0.5
    });
    for (jitter, expected) in [
        (ironward::Jitter::Rigid, 0),
        (ironward::Jitter::Spread(0.0), 0),
        // One a failure, the last too: the draw is taken before the engine finds no attempt left.
        (ironward::Jitter::Full, 3),
    ] {
        draws.store(0, Ordering::Relaxed);
        let retry = Retry::new(rules(3, jitter))
            .with_clock(clock.clone())
            .with_dice(dice.clone());
        let (answer, retried) = (|| std::future::ready(Err::<(), _>("busy")))
            .retry(&retry)
            .recorded()
            .await;
        assert_eq!(answer, Err(CallError::Failed("busy")));
        assert_eq!(retried.attempts, 3);
        assert_eq!(draws.load(Ordering::Relaxed), expected, "{jitter:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn an_attempt_raced_against_its_deadline_is_dropped_when_it_ends_not_when_the_next_starts() {
    let retry = Retry::new(rules(3, ironward::Jitter::Rigid)).with_attempt_timeout(ms(1_000));
    let held = Arc::new(());
    let op = || {
        let guard = Arc::clone(&held);
        async move {
            let _guard = guard;
            Err::<(), _>("busy")
        }
    };
    let mut call = pin!(op.retry(&retry).into_future());
    // The first attempt fails at once; the call then waits 100 ms on tokio's paused timer.
    assert!(poll_once(call.as_mut()).is_pending());
    assert_eq!(
        Arc::strong_count(&held),
        1,
        "the failed attempt is gone while it waits"
    );
    let answer = call.await;
    assert_eq!(answer, Err(CallError::Failed("busy")));
    assert_eq!(Arc::strong_count(&held), 1);
}
