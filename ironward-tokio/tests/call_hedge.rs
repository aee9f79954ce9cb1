//! `call::Hedge` at exact instants: on a manual clock where no attempt need overlap another
//! in time (a sleep on it moves it), and on tokio's paused clock (`Clock::monotonic` under
//! `start_paused`) where attempts race, each taking a known time. Every attempt carries a
//! guard, so that each test counts the attempts still alive when the call has answered or
//! been dropped.

use std::future::{IntoFuture, pending};
use std::pin::Pin;
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ironward::SharedBudget;
use ironward::grpc::Halt;
use ironward::latency::{TAIL, Tail};
use ironward_tokio::Clock;
use ironward_tokio::call::hedge::Tuning;
use ironward_tokio::call::{CallError, Deadline, Hedge, HedgeDelay, HedgeReason, Hedged};

/// `n` milliseconds.
pub fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// What one attempt does.
#[derive(Debug, Clone, Copy)]
pub enum Act {
    /// Never answers.
    Hang,
    /// Sleeps this long on the clock (on a manual clock: moves it), then answers.
    Take(Duration, Result<u32, &'static str>),
}

type Attempt = Pin<Box<dyn Future<Output = Result<u32, &'static str>> + Send>>;

/// A scripted operation: attempt `n` acts as `acts[n]` (hanging past their end); it counts
/// its calls, notes when each started, and keeps a guard alive in each attempt's future.
#[derive(Debug)]
pub struct Script {
    clock: Clock,
    acts: Vec<Act>,
    calls: AtomicU32,
    alive: Arc<AtomicI32>,
    starts: Mutex<Vec<Duration>>,
}

/// Counts itself alive until dropped with the attempt's future.
#[derive(Debug)]
pub struct Guard(Arc<AtomicI32>);

impl Guard {
    fn new(alive: &Arc<AtomicI32>) -> Self {
        alive.fetch_add(1, Ordering::SeqCst);
        Guard(Arc::clone(alive))
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Script {
    /// A script of `acts` on `clock`.
    pub fn new(clock: &Clock, acts: &[Act]) -> Arc<Self> {
        Arc::new(Self {
            clock: clock.clone(),
            acts: acts.to_vec(),
            calls: AtomicU32::new(0),
            alive: Arc::new(AtomicI32::new(0)),
            starts: Mutex::new(Vec::new()),
        })
    }

    /// The operation, to hand a hedge.
    pub fn op(self: &Arc<Self>) -> impl FnMut() -> Attempt + Send + use<> {
        let script = Arc::clone(self);
        move || {
            let n = script.calls.fetch_add(1, Ordering::SeqCst) as usize;
            script.starts.lock().unwrap().push(script.clock.now());
            let act = script.acts.get(n).copied().unwrap_or(Act::Hang);
            let guard = Guard::new(&script.alive);
            let clock = script.clock.clone();
            Box::pin(async move {
                let _guard = guard;
                match act {
                    Act::Hang => pending().await,
                    Act::Take(took, answer) => {
                        clock.sleep(took).await;
                        answer
                    }
                }
            })
        }
    }

    /// How many attempts were started.
    pub fn calls(&self) -> u32 {
        self.calls.load(Ordering::SeqCst)
    }

    /// How many attempts' futures are alive.
    pub fn alive(&self) -> i32 {
        self.alive.load(Ordering::SeqCst)
    }

    /// When each attempt started, on the clock.
    pub fn starts(&self) -> Vec<Duration> {
        self.starts.lock().unwrap().clone()
    }
}

/// An answer at once.
pub fn now(answer: Result<u32, &'static str>) -> Act {
    Act::Take(Duration::ZERO, answer)
}

fn manual() -> Clock {
    Clock::manual(Duration::ZERO).0
}

/// A fixed delay of `delay` ms, `most` attempts, on `clock`.
fn fixed(delay: u64, most: u32, clock: &Clock) -> Hedge {
    Hedge::new(ms(delay), most).with_clock(clock.clone())
}

/// Only errors starting with "busy" let the other attempts race.
fn busy(error: &&'static str) -> bool {
    error.starts_with("busy")
}

#[tokio::test]
async fn a_fixed_delay_starts_each_hedge_at_exactly_its_instant() {
    let clock = manual();
    let script = Script::new(&clock, &[Act::Hang, Act::Hang, now(Ok(3))]);
    let hedge = fixed(100, 3, &clock);
    let (answer, hedged) = hedge.call(script.op()).recorded().await;
    assert_eq!(answer, Ok(3));
    assert_eq!(script.starts(), [ms(0), ms(100), ms(200)]);
    assert_eq!(
        hedged,
        Hedged {
            delay: ms(100),
            started: vec![ms(0), ms(100), ms(200)],
            answered_by: Some(2),
            stop: None,
        }
    );
    assert_eq!(clock.now(), ms(200));
}

#[tokio::test]
async fn the_first_success_wins_and_every_other_attempt_is_dropped_at_once() {
    let clock = manual();
    let script = Script::new(&clock, &[Act::Hang, Act::Hang, Act::Hang, now(Ok(4))]);
    let budget = Arc::new(SharedBudget::new(10, 0.5));
    budget.fail();
    let hedge = fixed(10, 5, &clock).with_budget(Arc::clone(&budget));
    // Awaited through a reference, so the call's future outlives its answer: the losers
    // are dropped when the winner answers, not when the call's future goes.
    let mut call = Box::pin(hedge.call(script.op()).into_future());
    let answer = (&mut call).await;
    assert_eq!(answer, Ok(4));
    assert_eq!(script.calls(), 4, "no attempt after the winner");
    assert_eq!(script.alive(), 0, "the three hanging attempts are dropped");
    drop(call);
    assert_eq!(budget.tokens(), 9.5, "a success gives the ratio back");
}

#[tokio::test]
async fn a_fatal_error_ends_the_call_and_drops_the_rest() {
    let clock = manual();
    let script = Script::new(&clock, &[Act::Hang, now(Err("not found"))]);
    let budget = Arc::new(SharedBudget::new(10, 0.1));
    let hedge = fixed(50, 3, &clock).with_budget(Arc::clone(&budget));
    let mut call = Box::pin(hedge.call(script.op()).when(busy).recorded());
    let (answer, hedged) = (&mut call).await;
    assert_eq!(answer, Err(CallError::Failed("not found")));
    assert_eq!(
        (hedged.answered_by, hedged.stop),
        (Some(1), Some(Halt::NotRetryable))
    );
    assert_eq!(script.calls(), 2, "no hedge after a fatal error");
    assert_eq!(script.alive(), 0, "the first attempt is dropped at once");
    drop(call);
    assert_eq!(budget.tokens(), 10.0, "a fatal error is not counted");
}

// gRPC A6: a non-fatal failure "shortcuts the hedging delay": the next hedge goes at once,
// and the one after a full delay later.
#[tokio::test(start_paused = true)]
async fn a_non_fatal_error_lets_the_others_race_and_sends_the_next_at_once() {
    let clock = Clock::monotonic();
    let script = Script::new(
        &clock,
        &[
            Act::Take(ms(50), Err("busy")),
            Act::Take(ms(500), Ok(1)),
            Act::Take(ms(30), Ok(2)),
        ],
    );
    let budget = Arc::new(SharedBudget::new(10, 0.1));
    let hedge = fixed(100, 3, &clock).with_budget(Arc::clone(&budget));
    let (answer, hedged) = hedge.call(script.op()).when(busy).recorded().await;
    assert_eq!(answer, Ok(2));
    assert_eq!(hedged.started, [ms(0), ms(50), ms(150)]);
    assert_eq!(hedged.answered_by, Some(2));
    assert_eq!(clock.now(), ms(180));
    assert_eq!(script.alive(), 0, "attempt 1, still racing, is dropped");
    assert_eq!(
        budget.tokens(),
        9.1,
        "one failure taken, one success given back"
    );
}

// When every attempt fails, the call returns the last error to arrive, which need not be
// the last attempt's: here the first attempt, slow, fails after the hedge.
#[tokio::test(start_paused = true)]
async fn all_failing_returns_the_last_error_to_arrive() {
    let clock = Clock::monotonic();
    let script = Script::new(
        &clock,
        &[
            Act::Take(ms(300), Err("busy slow")),
            Act::Take(ms(50), Err("busy fast")),
        ],
    );
    let hedge = fixed(100, 2, &clock);
    let (answer, hedged) = hedge.call(script.op()).recorded().await;
    assert_eq!(answer, Err(CallError::Failed("busy slow")));
    assert_eq!(hedged.started, [ms(0), ms(100)]);
    assert_eq!(
        (hedged.answered_by, hedged.stop),
        (Some(0), Some(Halt::AttemptsSpent))
    );
    assert_eq!(clock.now(), ms(300));

    // On a manual clock, failures at once: each sends the next at once, the last one's
    // error is the answer.
    let clock = manual();
    let script = Script::new(&clock, &[now(Err("a")), now(Err("b")), now(Err("c"))]);
    let (answer, hedged) = fixed(100, 3, &clock).call(script.op()).recorded().await;
    assert_eq!(answer, Err(CallError::Failed("c")));
    assert_eq!(hedged.started, [ms(0); 3]);
    assert_eq!(clock.now(), ms(0));
}

// A wait the error names is gRPC A6's pushback: the next hedge goes that long after it.
#[tokio::test]
async fn a_named_wait_sets_when_the_next_hedge_goes() {
    let clock = manual();
    let script = Script::new(&clock, &[now(Err("busy")), now(Ok(1))]);
    let hedge = fixed(100, 2, &clock);
    let named = |_: &&'static str| Some(ms(300));
    let (answer, hedged) = hedge.call(script.op()).after(named).recorded().await;
    assert_eq!(answer, Ok(1));
    assert_eq!(hedged.started, [ms(0), ms(300)]);
}

#[tokio::test]
async fn a_tail_delay_follows_the_exact_percentile_of_recent_latencies() {
    let clock = manual();
    let tail = Tail {
        percentile: 0.95,
        window: 20,
        min_samples: 20,
        floor: ms(1),
        ceiling: ms(10_000),
        fallback: ms(1_000),
    };
    let hedge = Hedge::tail(tail, 2).with_clock(clock.clone());
    // Twenty calls of 10 ms, 20 ms, ..., 200 ms, in a shuffled order, each won by its
    // first attempt.
    for k in [
        7, 3, 19, 1, 12, 20, 5, 9, 14, 2, 17, 8, 11, 4, 16, 6, 13, 10, 18, 15,
    ] {
        assert_eq!(
            hedge.delay(),
            ms(1_000),
            "the fallback until twenty are measured"
        );
        let script = Script::new(&clock, &[Act::Take(ms(10 * k), Ok(0))]);
        let (answer, hedged) = hedge.call(script.op()).recorded().await;
        assert_eq!((answer, hedged.started.len()), (Ok(0), 1));
    }
    // The 95th percentile of twenty is the 19th fastest: 190 ms.
    assert_eq!(hedge.delay(), ms(190));
    let start = clock.now();
    let script = Script::new(&clock, &[Act::Hang, now(Ok(1))]);
    let (answer, hedged) = hedge.call(script.op()).recorded().await;
    assert_eq!(answer, Ok(1));
    assert_eq!(
        (hedged.delay, hedged.started),
        (ms(190), vec![ms(0), ms(190)])
    );
    assert_eq!(clock.now(), start + ms(190));
    // The winning hedge took no time: the window now holds 0 in place of its oldest, 70 ms.
    // Of 0, 10, ..., 60, 80, ..., 200 the 19th fastest is still 190 ms, the 10th 100 ms.
    assert_eq!(hedge.delay(), ms(190));
    hedge.retune(Tuning {
        delay: HedgeDelay::Tail(Tail {
            percentile: 0.5,
            ..tail
        }),
        max_attempts: 2,
    });
    assert_eq!(hedge.delay(), ms(100));
}

#[tokio::test(start_paused = true)]
async fn a_budget_at_half_starts_no_hedge() {
    let clock = Clock::monotonic();
    let budget = Arc::new(SharedBudget::new(10, 0.1));
    for _ in 0..5 {
        budget.fail();
    }
    assert!(!budget.can_retry());
    let script = Script::new(&clock, &[Act::Take(ms(300), Ok(0)), now(Ok(1))]);
    let hedge = fixed(100, 3, &clock).with_budget(Arc::clone(&budget));
    let (answer, hedged) = hedge.call(script.op()).recorded().await;
    assert_eq!(answer, Ok(0));
    assert_eq!(
        hedged.started,
        [ms(0)],
        "the hedge due at 100 ms was refused"
    );
    assert_eq!(script.calls(), 1);
    assert_eq!(clock.now(), ms(300));
    assert_eq!(budget.tokens(), 5.1);
}

// The budget is shared: emptied by other callers while a hedge waits out a named wait, it
// refuses that hedge, and the call, with nothing in flight, answers its last failure.
#[tokio::test(start_paused = true)]
async fn a_budget_emptied_by_others_during_a_wait_ends_the_call_with_its_last_error() {
    let clock = Clock::monotonic();
    let budget = Arc::new(SharedBudget::new(10, 0.1));
    let others = Arc::clone(&budget);
    let drain = tokio::spawn(async move {
        tokio::time::sleep(ms(50)).await;
        for _ in 0..4 {
            others.fail();
        }
    });
    let script = Script::new(&clock, &[now(Err("busy")), now(Ok(1))]);
    let hedge = fixed(10, 3, &clock).with_budget(Arc::clone(&budget));
    let named = |_: &&'static str| Some(ms(100));
    let (answer, hedged) = hedge.call(script.op()).after(named).recorded().await;
    drain.await.unwrap();
    assert_eq!(answer, Err(CallError::Failed("busy")));
    assert_eq!(
        (hedged.started, hedged.stop),
        (vec![ms(0)], Some(Halt::Throttled))
    );
    assert_eq!(clock.now(), ms(100), "refused when due, at 100 ms");
    assert_eq!(budget.tokens(), 5.0, "its own failure and the others' four");
}

#[tokio::test]
async fn no_hedge_starts_at_or_past_the_deadline_and_it_cuts_the_rest() {
    let clock = manual();
    let script = Script::new(&clock, &[]);
    let hedge = fixed(100, 5, &clock);
    let deadline = Deadline::after(ms(250), &clock);
    let (answer, hedged) = deadline.scope(hedge.call(script.op()).recorded()).await;
    assert_eq!(
        answer,
        Err(CallError::Refused(HedgeReason::Elapsed { attempts: 3 }))
    );
    assert_eq!(hedged.started, [ms(0), ms(100), ms(200)]);
    assert_eq!(hedged.stop, Some(Halt::Deadline));
    assert_eq!(clock.now(), ms(250), "cut at the deadline");
    assert_eq!(script.alive(), 0);

    // A hedge due exactly at the deadline is not started.
    let clock = manual();
    let script = Script::new(&clock, &[]);
    let deadline = Deadline::after(ms(200), &clock);
    let (_, hedged) = deadline
        .scope(fixed(100, 5, &clock).call(script.op()).recorded())
        .await;
    assert_eq!(hedged.started, [ms(0), ms(100)]);

    // An answer after the deadline, as the clock reads it when it ends, is cut.
    let clock = manual();
    let script = Script::new(&clock, &[Act::Take(ms(300), Ok(0))]);
    let deadline = Deadline::after(ms(250), &clock);
    let answer = deadline
        .scope(fixed(1_000, 2, &clock).call(script.op()))
        .await;
    assert_eq!(
        answer,
        Err(CallError::Refused(HedgeReason::Elapsed { attempts: 1 }))
    );
}

#[tokio::test]
async fn a_call_whose_deadline_has_passed_starts_nothing() {
    let clock = manual();
    let script = Script::new(&clock, &[now(Ok(0))]);
    let passed = Deadline::after(Duration::ZERO, &clock);
    let (answer, hedged) = passed
        .scope(fixed(10, 2, &clock).call(script.op()).recorded())
        .await;
    assert_eq!(answer, Err(CallError::Refused(HedgeReason::Exceeded)));
    assert_eq!((script.calls(), hedged), (0, Hedged::default()));
}

// Dropping the call's future while attempts race drops every one of them, and the budget,
// told only of attempts that ended, holds what it held.
#[tokio::test(start_paused = true)]
async fn dropping_the_call_while_hedges_race_leaves_no_attempt_and_no_token_lost() {
    let clock = Clock::monotonic();
    let budget = Arc::new(SharedBudget::new(10, 0.1));
    budget.fail();
    budget.fail();
    let before = budget.tokens();
    let racing = Act::Take(ms(1_000), Ok(0));
    let script = Script::new(&clock, &[racing; 4]);
    let hedge = fixed(10, 4, &clock).with_budget(Arc::clone(&budget));
    let call = hedge.call(script.op());
    assert!(
        tokio::time::timeout(ms(35), call).await.is_err(),
        "still racing at 35 ms"
    );
    assert_eq!(script.starts(), [ms(0), ms(10), ms(20), ms(30)]);
    assert_eq!(script.alive(), 0, "every attempt dropped with the call");
    assert_eq!(budget.tokens(), before);
    // Nothing runs on: time passes and no attempt ends or starts.
    tokio::time::sleep(ms(5_000)).await;
    assert_eq!((script.calls(), budget.tokens()), (4, before));
}

#[tokio::test]
async fn hostile_settings_get_clear_answers() {
    // A zero delay sends every attempt at once; a most of 0 is read as 2.
    let clock = manual();
    let hedge = fixed(0, 0, &clock);
    assert_eq!(hedge.max_attempts(), 2);
    let script = Script::new(&clock, &[Act::Hang, now(Ok(1))]);
    let (answer, hedged) = hedge.call(script.op()).recorded().await;
    assert_eq!((answer, hedged.started), (Ok(1), vec![ms(0), ms(0)]));

    // A huge most is A6's 5.
    assert_eq!(fixed(1, u32::MAX, &clock).max_attempts(), 5);
    let retuned = fixed(1, 3, &clock);
    let before = retuned.retune(Tuning {
        delay: HedgeDelay::Fixed(ms(5)),
        max_attempts: 0,
    });
    assert_eq!((before.max_attempts, retuned.max_attempts()), (3, 2));

    // `Duration::MAX` hedges only after a failure, at once.
    let clock = manual();
    let script = Script::new(&clock, &[now(Err("busy")), now(Ok(1))]);
    let hedge = Hedge::new(Duration::MAX, 3).with_clock(clock.clone());
    let (answer, hedged) = hedge.call(script.op()).recorded().await;
    assert_eq!((answer, hedged.started), (Ok(1), vec![ms(0), ms(0)]));
    // ... and, with a deadline, never by time.
    let script = Script::new(&clock, &[Act::Hang]);
    let deadline = Deadline::after(ms(700), &clock);
    let (_, hedged) = deadline.scope(hedge.call(script.op()).recorded()).await;
    assert_eq!(hedged.started, [ms(0)]);

    // A percentile out of range or NaN is held, bounded by the floor and the ceiling.
    let clock = manual();
    let tail = Tail {
        min_samples: 1,
        floor: ms(2),
        ceiling: ms(40),
        ..TAIL
    };
    let hedge = Hedge::tail(
        Tail {
            percentile: f64::NAN,
            ..tail
        },
        2,
    )
    .with_clock(clock.clone());
    for took in [1, 30, 50] {
        let script = Script::new(&clock, &[Act::Take(ms(took), Ok(0))]);
        assert_eq!(hedge.call(script.op()).await, Ok(0));
    }
    assert_eq!(
        hedge.delay(),
        ms(2),
        "NaN reads the fastest, 1 ms, held to the floor"
    );
    let huge = |percentile| Tuning {
        delay: HedgeDelay::Tail(Tail { percentile, ..tail }),
        max_attempts: 2,
    };
    hedge.retune(huge(7.0));
    assert_eq!(
        hedge.delay(),
        ms(40),
        "above 1 reads the slowest, held to the ceiling"
    );
    hedge.retune(huge(-1.0));
    assert_eq!(hedge.delay(), ms(2));
    // A window of 0 keeps one; a ceiling of `Duration::MAX` bounds nothing.
    hedge.retune(Tuning {
        delay: HedgeDelay::Tail(Tail {
            window: 0,
            ceiling: Duration::MAX,
            percentile: 1.0,
            ..tail
        }),
        max_attempts: 2,
    });
    assert_eq!(hedge.delay(), ms(50), "the newest latency alone");
}

#[tokio::test(start_paused = true)]
async fn a_retune_reaches_every_clone_and_spares_a_call_under_way() {
    let clock = Clock::monotonic();
    let hedge = fixed(100, 2, &clock);
    let clone = hedge.clone();
    let script = Script::new(&clock, &[Act::Hang, now(Ok(1))]);
    let mut call = Box::pin(hedge.call(script.op()).recorded());
    assert!(tokio::time::timeout(ms(5), &mut call).await.is_err());
    let before = clone.retune(Tuning {
        delay: HedgeDelay::Fixed(ms(30)),
        max_attempts: 2,
    });
    assert_eq!(before.delay, HedgeDelay::Fixed(ms(100)));
    assert_eq!(hedge.delay(), ms(30), "every clone reads the new delay");
    // The call under way keeps the delay it started with.
    let (answer, hedged) = call.await;
    assert_eq!((answer, hedged.started), (Ok(1), vec![ms(0), ms(100)]));
    let start = clock.now();
    let script = Script::new(&clock, &[Act::Hang, now(Ok(1))]);
    let (_, hedged) = hedge.call(script.op()).recorded().await;
    assert_eq!(hedged.started, [ms(0), ms(30)]);
    assert_eq!(clock.now(), start + ms(30));
}

#[test]
fn a_hedge_and_its_future_are_send_and_sync() {
    fn send_sync<T: Send + Sync + Clone>(_: &T) {}
    fn send<T: Send>(_: &T) {}
    let clock = manual();
    let hedge = fixed(10, 2, &clock);
    send_sync(&hedge);
    let script = Script::new(&clock, &[]);
    send(&hedge.call(script.op()).into_future());
}

// failsafe-go `test/hedgepolicy_test.go`, "all hedges used": a 20 ms delay, two hedges
// (three attempts), each attempt taking 100 ms and answering its number: three attempts,
// two hedges, and the first attempt's answer, 1.
#[tokio::test(start_paused = true)]
async fn failsafe_go_all_hedges_used() {
    let clock = Clock::monotonic();
    let script = Script::new(
        &clock,
        &[
            Act::Take(ms(100), Ok(1)),
            Act::Take(ms(100), Ok(2)),
            Act::Take(ms(100), Ok(3)),
        ],
    );
    let (answer, hedged) = fixed(20, 3, &clock).call(script.op()).recorded().await;
    assert_eq!(answer, Ok(1));
    assert_eq!(hedged.started, [ms(0), ms(20), ms(40)]);
    assert_eq!(script.alive(), 0);
}

// failsafe-go `test/hedgepolicy_test.go`, "should not hedge when delay not exceeded": a 1 s
// delay and a call that answers at once make one attempt and no hedge.
#[tokio::test]
async fn failsafe_go_should_not_hedge_when_delay_not_exceeded() {
    let clock = manual();
    let script = Script::new(&clock, &[now(Ok(7))]);
    let (answer, hedged) = fixed(1_000, 2, &clock).call(script.op()).recorded().await;
    assert_eq!((answer, hedged.started), (Ok(7), vec![ms(0)]));
    assert_eq!(clock.now(), ms(0), "no sleep was made");
}

// Polly `HedgingResilienceStrategyTests.ExecuteAsync_EnsureHedgedTasksCancelled_Ok`: two
// hedged attempts (Polly's `MaxHedgedAttempts = 2`, three in all) after Polly's default
// 2 s delay, each hanging on a long delay; the primary answers after an hour, wins, and the
// hedges are cancelled.
#[tokio::test(start_paused = true)]
async fn polly_ensure_hedged_tasks_cancelled() {
    let clock = Clock::monotonic();
    let hour = Duration::from_secs(3_600);
    let day = hour * 24;
    let script = Script::new(
        &clock,
        &[
            Act::Take(hour, Ok(0)),
            Act::Take(day, Err("failure")),
            Act::Take(day, Err("failure")),
        ],
    );
    let hedge = Hedge::new(Duration::from_secs(2), 3).with_clock(clock.clone());
    let mut call = Box::pin(hedge.call(script.op()).recorded());
    let (answer, hedged) = (&mut call).await;
    assert_eq!(answer, Ok(0));
    let secs = Duration::from_secs;
    assert_eq!(hedged.started, [secs(0), secs(2), secs(4)]);
    assert_eq!(clock.now(), hour);
    assert_eq!(
        script.alive(),
        0,
        "both hedges cancelled when the primary won"
    );
}

#[cfg(feature = "metrics")]
#[test]
fn a_hedge_counts_its_attempts_its_calls_and_its_refusals() {
    use metrics_util::debugging::DebuggingRecorder;

    let recorder = DebuggingRecorder::new();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    metrics::with_local_recorder(&recorder, || {
        runtime.block_on(async {
            let clock = manual();
            let hedge = fixed(10, 3, &clock).with_name("api");
            let won = Script::new(&clock, &[Act::Hang, now(Ok(1))]);
            assert_eq!(hedge.call(won.op()).await, Ok(1));
            let failed = Script::new(&clock, &[now(Err("gone"))]);
            assert!(hedge.call(failed.op()).when(busy).await.is_err());
            let cut = Script::new(&clock, &[]);
            let deadline = Deadline::after(ms(15), &clock);
            assert!(deadline.scope(hedge.call(cut.op())).await.is_err());
            let passed = Deadline::after(Duration::ZERO, &clock);
            assert!(passed.scope(hedge.call(cut.op())).await.is_err());
        });
    });
    let seen = crate::call_metrics::series(&recorder);
    let expected = [
        (
            "ironward.requests{piece=hedge,name=api,outcome=admitted}",
            2,
        ),
        (
            "ironward.requests{piece=hedge,name=api,outcome=refused,reason=elapsed}",
            1,
        ),
        (
            "ironward.requests{piece=hedge,name=api,outcome=refused,reason=exceeded}",
            1,
        ),
        ("ironward.retry.attempts{name=api,kind=first}", 3),
        ("ironward.retry.attempts{name=api,kind=hedge}", 2),
        ("ironward.retry.calls{name=api,outcome=deadline}", 2),
        ("ironward.retry.calls{name=api,outcome=not_retryable}", 1),
        ("ironward.retry.calls{name=api,outcome=success}", 1),
    ];
    let expected: Vec<_> = expected.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    assert_eq!(seen, expected);
}

#[tokio::test(start_paused = true)]
async fn a_pushback_of_duration_max_stops_the_hedging_and_the_rest_race_on() {
    let clock = Clock::monotonic();
    let never = |_: &&str| Some(Duration::MAX);
    let script = Script::new(
        &clock,
        &[Act::Take(ms(30), Ok(1)), Act::Take(ms(5), Err("busy"))],
    );
    let hedge = fixed(10, 5, &clock);
    let (answer, hedged) = hedge.call(script.op()).after(never).recorded().await;
    assert_eq!((answer, hedged.started), (Ok(1), vec![ms(0), ms(10)]));
    assert_eq!((clock.now(), script.calls()), (ms(30), 2));

    // Nothing left in flight: the call fails with it at once, rather than wait on nothing.
    let script = Script::new(&clock, &[Act::Take(ms(5), Err("busy"))]);
    let start = clock.now();
    let (answer, hedged) = hedge.call(script.op()).after(never).recorded().await;
    assert_eq!(answer, Err(CallError::Failed("busy")));
    assert_eq!(
        (hedged.stop, clock.now() - start),
        (Some(Halt::Pushback), ms(5))
    );
}
