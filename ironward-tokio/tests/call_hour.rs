//! An hour of calls through one `call::Pipeline` (a fallback, a retry with full jitter, a
//! classic breaker and a timeout) on a manual clock with seeded dice, against a backend whose
//! health changes over the hour: healthy, failing for ten minutes, hanging for five, healthy
//! again. One call every 100 ms is 36,000 calls; every wait is a move of the manual clock, so
//! the hour costs only the CPU of the calls. The figures asserted follow from the policy
//! whatever the jitter draws; two runs with the same dice give the same record to the
//! nanosecond.

use std::future::{Future, pending};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ironward::classic::{OpenWait, Record, State};
use ironward::retry::Cause;
use ironward::{CLASSIC, Classic, Jitter};
use ironward_tokio::call::{Breaker, Fallback, Pipeline, Retry, Timeout};
use ironward_tokio::{Clock, Dice, SharedClassicBreaker};

use crate::call_retry::rules;

/// One call a slot, 36,000 slots in the hour.
const SLOT: Duration = Duration::from_millis(100);
const HOUR: Duration = Duration::from_secs(3_600);
/// The backend fails every call from 20 min to 30 min, then hangs until 35 min.
const OUTAGE: Duration = Duration::from_secs(20 * 60);
const HANG: Duration = Duration::from_secs(30 * 60);
const HEALED: Duration = Duration::from_secs(35 * 60);
/// The pipeline's numbers: a 1 s timeout, a breaker open 30 s after 5 failures in a row.
const TIMEOUT: Duration = Duration::from_secs(1);
const OPEN: Duration = Duration::from_secs(30);
const FAILURES: u32 = 5;
/// How long the backend takes to answer, healthy or failing.
const HEALTHY: Duration = Duration::from_millis(10);
const FAILING: Duration = Duration::from_millis(5);

type Boxed = Pin<Box<dyn Future<Output = Result<&'static str, &'static str>> + Send>>;

/// The breaker: open for [`OPEN`] after [`FAILURES`] failures in a row, one probe.
fn breaker() -> Breaker<SharedClassicBreaker> {
    Breaker::new(Classic {
        record: Record::Consecutive { failures: FAILURES },
        open: OpenWait::Fixed(OPEN),
        probes: 1,
        ..CLASSIC
    })
}

/// What one call came to.
#[derive(Debug, Clone, PartialEq)]
struct Call {
    start: Duration,
    end: Duration,
    /// The backend's answer (`true`) or the fallback's.
    fresh: bool,
    /// Attempts the retry made, and how many of them the breaker let reach the backend.
    attempts: u32,
    reached: u32,
    stop: Option<Cause>,
    /// The breaker's state once the call ended.
    state: Option<State>,
}

/// An hour's record: every call, and the instant each attempt reached the backend.
#[derive(Debug, Clone, PartialEq)]
struct Hour {
    calls: Vec<Call>,
    reached: Vec<Duration>,
    end: Duration,
}

/// The backend at the instant an attempt reaches it: an answer after 10 ms, a failure after
/// 5 ms during the outage, nothing at all while it hangs.
fn backend(clock: &Clock, log: &Mutex<Vec<Duration>>) -> Boxed {
    let now = clock.now();
    log.lock().expect("not poisoned").push(now);
    let clock = clock.clone();
    if now < OUTAGE || now >= HEALED {
        Box::pin(async move {
            clock.sleep(HEALTHY).await;
            Ok("fresh")
        })
    } else if now < HANG {
        Box::pin(async move {
            clock.sleep(FAILING).await;
            Err("down")
        })
    } else {
        Box::pin(pending())
    }
}

/// The hour, with the retry's jitter drawn from `Dice::seeded(seed)`: a call at each slot,
/// or as soon as the call before it ends when that is later.
async fn hour(seed: u64) -> Hour {
    let (clock, _hand) = Clock::manual(Duration::ZERO);
    let pipeline = Pipeline::builder()
        .fallback(Fallback::value("stale"))
        .retry(Retry::new(rules(3, Jitter::Full)))
        .breaker(breaker())
        .timeout(Timeout::new(TIMEOUT))
        .with_clock(clock.clone())
        .with_dice(Dice::seeded(seed))
        .build();
    assert!(
        OPEN > pipeline.retry().retry().rules().backoff.cap,
        "refusals not waited on"
    );
    let log = Arc::new(Mutex::new(Vec::new()));
    let slots = (HOUR.as_nanos() / SLOT.as_nanos()) as u32;
    let mut calls = Vec::with_capacity(slots as usize);
    for slot in 0..slots {
        let due = SLOT * slot;
        if clock.now() < due {
            clock.sleep(due - clock.now()).await;
        }
        let (start, before) = (clock.now(), log.lock().expect("not poisoned").len());
        let (answer, retried) = pipeline.recorded(|| backend(&clock, &log)).await;
        let retried = retried.expect("a pipeline with a retry");
        calls.push(Call {
            start,
            end: clock.now(),
            fresh: answer == Ok("fresh"),
            attempts: retried.attempts,
            reached: (log.lock().expect("not poisoned").len() - before) as u32,
            stop: retried.stop,
            state: pipeline.breaker().state(),
        });
    }
    if clock.now() < HOUR {
        clock.sleep(HOUR - clock.now()).await;
    }
    let reached = log.lock().expect("not poisoned").clone();
    Hour {
        calls,
        reached,
        end: clock.now(),
    }
}

/// The instants attempts reached the backend in `[from, to)`.
fn at(hour: &Hour, from: Duration, to: Duration) -> Vec<Duration> {
    let within = |t: &&Duration| from <= **t && **t < to;
    hour.reached.iter().filter(within).copied().collect()
}

#[tokio::test]
async fn an_hour_of_calls_through_an_outage_and_a_hang_runs_on_a_manual_clock() {
    let run = hour(7).await;
    assert_eq!(run.calls.len(), 36_000, "one call a slot");
    assert_eq!(run.end, HOUR, "the clock reads exactly one hour");

    // Healthy: every call is answered by the backend in one attempt of exactly 10 ms, on
    // its slot.
    let healthy = |c: &&Call| c.start < OUTAGE;
    let before: Vec<_> = run.calls.iter().filter(healthy).collect();
    assert_eq!(before.len(), 12_000);
    for (slot, call) in before.iter().enumerate() {
        assert_eq!(call.start, SLOT * slot as u32);
        assert_eq!((call.end - call.start, call.fresh), (HEALTHY, true));
        assert_eq!((call.attempts, call.reached, call.stop), (1, 1, None));
        assert_eq!(call.state, Some(State::Closed));
    }

    // The first call of the outage fails three attempts (two jittered waits); the second
    // fails two more, the fifth failure in a row opens the breaker, and its third and last
    // attempt is refused.
    let first = &run.calls[12_000];
    assert_eq!(
        (first.attempts, first.reached, first.stop, first.fresh),
        (3, 3, Some(Cause::AttemptsExhausted), false)
    );
    assert_eq!(first.state, Some(State::Closed));
    let second = &run.calls[12_001];
    assert_eq!(
        (second.attempts, second.reached, second.stop, second.state),
        (3, 2, Some(Cause::AttemptsExhausted), Some(State::Open))
    );

    // While open, an attempt reaches the backend only as the probe at the end of each open
    // wait: a call refused with at most the retry's 10 s cap of the wait left waits it out
    // and probes at once (a call refused earlier gives up at once). So after the 5 attempts
    // that open it, the probes are exactly an open wait and the failure's 5 ms apart, 19 of
    // which fit in the outage's 10 minutes: at most one an open wait.
    let (outage, hang) = (at(&run, OUTAGE, HANG), at(&run, HANG, HEALED));
    assert_eq!(outage.len(), FAILURES as usize + 19);
    assert!(outage.len() <= FAILURES as usize + ((HANG - OUTAGE).as_secs() / 30) as usize);
    let opened = outage[FAILURES as usize - 1] + FAILING;
    let probes = &outage[FAILURES as usize..];
    assert_eq!(probes[0], opened + OPEN);
    assert!(probes.windows(2).all(|w| w[1] - w[0] == OPEN + FAILING));
    // Hanging, each probe is cut by the timeout's 1 s, which reopens the breaker: probes an
    // open wait and a timeout apart, 10 in the 5 minutes, the first an open wait after the
    // outage's last.
    assert_eq!(hang.len(), 10);
    assert_eq!(hang[0] - probes[18], OPEN + FAILING);
    assert!(hang.windows(2).all(|w| w[1] - w[0] == OPEN + TIMEOUT));

    // No call is answered by the backend from the outage to the healing; one that no probe
    // of it reached was refused in one attempt, at once: the breaker's wait named past the
    // retry's cap is not waited on.
    let down: Vec<_> = run
        .calls
        .iter()
        .filter(|c| c.start >= OUTAGE && c.start < HEALED)
        .collect();
    assert!(down.iter().all(|c| !c.fresh));
    for call in down.iter().filter(|c| c.reached == 0) {
        assert_eq!((call.attempts, call.end), (1, call.start), "{call:?}");
        assert_eq!(call.stop, Some(Cause::ServerDelayExceedsCap));
        assert_eq!(call.state, Some(State::Open));
    }

    // The first success after the backend heals is the probe an open wait after the last
    // cut one reopened the breaker: within an open wait and a timeout of the healing. Its
    // call was refused first and waited out the rest of the open wait. The success closes
    // the breaker, which stays closed to the end of the hour.
    let healed = run
        .calls
        .iter()
        .position(|c| c.start >= HEALED - OPEN && c.fresh)
        .expect("a success after the hang");
    let probe = &run.calls[healed];
    let success = probe.end - HEALTHY;
    assert_eq!(success, hang[9] + TIMEOUT + OPEN);
    assert!(
        HEALED <= success && success <= HEALED + OPEN + TIMEOUT,
        "{probe:?}"
    );
    assert_eq!((probe.attempts, probe.reached, probe.stop), (2, 1, None));
    assert!(run.calls[12_000..healed].iter().all(|c| !c.fresh));
    for call in &run.calls[healed + 1..] {
        assert_eq!((call.fresh, call.attempts), (true, 1), "{call:?}");
        assert_eq!(call.state, Some(State::Closed));
    }
    // Once the slots missed while the probe's call waited are called, each call is back on
    // its slot.
    let last = run.calls.last().expect("calls");
    assert_eq!((last.start, last.end), (HOUR - SLOT, HOUR - SLOT + HEALTHY));

    // The fallback answered every call from the outage's first to the healing probe, and
    // the breaker let 34 attempts of them reach the backend.
    let stale = run.calls.iter().filter(|c| !c.fresh).count();
    assert_eq!(stale, healed - 12_000);
    assert_eq!(at(&run, OUTAGE, HEALED).len(), 34);

    // The same dice give the same hour, to the nanosecond; other dice jitter the retries'
    // waits elsewhere.
    assert_eq!(hour(7).await, run);
    let other = hour(8).await;
    assert_ne!(other.calls, run.calls);
    assert_eq!(at(&other, OUTAGE, HEALED).len(), 34);
}
