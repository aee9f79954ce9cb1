//! The front door over a real `redis-server`, under real faults: `INCR` commands on a
//! `redis::aio::ConnectionManager`, each through `call::Retry` around `call::Breaker` around
//! `call::Timeout` (nested calls), from a few tasks in a loop, each call under a
//! `call::Deadline` of its own, on tokio's clock (the pieces' default).
//!
//! - **Killed and restarted.** The server is killed with SIGKILL, left dead for 5 s, and
//!   started again on the same port (empty: no persistence). The connection manager's
//!   reconnection fails fast (one more try, 50 to 100 ms later), so a failed command costs
//!   under a tenth of a second; the breaker opens after five failures in a row and refuses
//!   for a second at a time; the first success after the restart must come within
//!   [`KILL_RECOVERY`].
//! - **Frozen and thawed.** The server is stopped with SIGSTOP for 3.5 s, then SIGCONT: the
//!   connection stays open and nothing answers, so every command in flight must be cut at
//!   its timeout, the breaker must open and refuse, and the first success after the thaw
//!   must come within [`STOP_RECOVERY`].
//!
//! In both, no call may end later than its deadline plus [`SLACK`], nor any command (ended
//! or dropped) later than its timeout plus [`SLACK`]; and the key's count must lie between
//! the commands answered and the commands sent (one cut by time may still have run, none ran
//! unsent).
//!
//! The pieces' numbers are chosen so that the bounds are derived from them:
//!
//! | piece | setting |
//! | --- | --- |
//! | each call | a [`DEADLINE`] of 1.5 s |
//! | retry | 4 attempts, full jitter from 50 ms doubling to a 400 ms cap, 100 ms reserve; retries a failure or a cut, never the breaker's refusal |
//! | breaker | classic, 5 failures in a row open it for [`OPEN`] (1 s); 4 probes, closing under 50 % failed |
//! | timeout | [`TIMEOUT`] (250 ms) |
//!
//! Every wait is bounded: each phase by [`BOUND`], each task's end by [`BOUND`]. The figures
//! measured (attempts, refusals, failures by phase, the recovery, the latest end past a
//! deadline) are printed, for `--nocapture`. Measured on a two-core machine shared with
//! other builds, eight runs (one with three busy loops beside): killed, 760 to 870 calls
//! during the outage, 21 commands sent and failed, every call ended refused, then one probe
//! failed on the connection manager's failed reconnection and the next closed the breaker,
//! first success 0.37 to 0.44 s after the restart (bound 3.17 s); frozen, 390 to 450 calls
//! during the freeze, 16 commands sent, all cut at 251 to 257 ms, first success 0.55 to
//! 0.59 s after the thaw (bound 2.17 s); no call ended past its deadline.

use crate::common::{self, Server};

use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ironward::classic::{OpenWait, Record};
use ironward::retry::Rules;
use ironward::{Backoff, CLASSIC, Classic, ClassicReason, Jitter};
use ironward_tokio::call::{Breaker, CallError, Deadline, Retry, Timeout, TimeoutReason};
use ironward_tokio::{Clock, SharedClassicBreaker};
use redis::RedisError;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};

/// The time each command may take.
const TIMEOUT: Duration = Duration::from_millis(250);

/// How long the breaker stays open.
const OPEN: Duration = Duration::from_secs(1);

/// The deadline of each call, its retries included.
const DEADLINE: Duration = Duration::from_millis(1_500);

/// The retry's longest wait.
const BACKOFF_CAP: Duration = Duration::from_millis(400);

/// The pause between a task's calls.
const PAUSE: Duration = Duration::from_millis(20);

/// What a loaded two-core machine may add to the instant a timer fires: a call cut at its
/// deadline ends when its task is next polled, and with two cores shared by the test's
/// tasks, the server and other builds that can be a few hundred milliseconds. Also the
/// allowance for scheduling in each recovery bound.
const SLACK: Duration = Duration::from_millis(500);

/// The longest a killed server's first success after the restart may take: the breaker may
/// have just opened (one [`OPEN`]); its first probes may find the connection manager still
/// holding the failed reconnection of the outage and fail, opening it once more (a second
/// [`OPEN`]); then a probe call may be a retry waiting out the backoff ([`BACKOFF_CAP`]), a
/// task's [`PAUSE`], and a command's own time ([`TIMEOUT`] at most), with [`SLACK`].
const KILL_RECOVERY: Duration = Duration::from_millis(
    2 * OPEN.as_millis() as u64
        + BACKOFF_CAP.as_millis() as u64
        + PAUSE.as_millis() as u64
        + TIMEOUT.as_millis() as u64
        + SLACK.as_millis() as u64,
);

/// The longest a frozen server's first success after the thaw may take: the breaker may have
/// just opened ([`OPEN`]); the connection is the same, so its probes pass, after a retry's
/// backoff ([`BACKOFF_CAP`]), a task's [`PAUSE`] and a command queued behind the ones the
/// freeze held ([`TIMEOUT`] at most), with [`SLACK`].
const STOP_RECOVERY: Duration = Duration::from_millis(
    OPEN.as_millis() as u64
        + BACKOFF_CAP.as_millis() as u64
        + PAUSE.as_millis() as u64
        + TIMEOUT.as_millis() as u64
        + SLACK.as_millis() as u64,
);

/// The longest any phase may take.
const BOUND: Duration = Duration::from_secs(10);

/// The tasks calling at once.
const TASKS: usize = 4;

/// The phases of a test after the first (0, before the fault): during the fault, after it
/// ends.
const DURING: u8 = 1;
const AFTER: u8 = 2;

/// The error of an attempt through the breaker, around the timeout, around the command.
type AttemptError = CallError<CallError<RedisError, TimeoutReason>, ClassicReason>;

/// Counts by phase.
#[derive(Debug, Default)]
struct ByPhase([AtomicU64; 3]);

impl ByPhase {
    fn add(&self, phase: u8) {
        self.0[usize::from(phase)].fetch_add(1, Ordering::Relaxed);
    }

    fn get(&self) -> [u64; 3] {
        [0, 1, 2].map(|phase| self.0[phase].load(Ordering::Relaxed))
    }
}

/// What the tasks saw, each count by the phase in which its call or attempt began.
#[derive(Debug, Default)]
struct Tally {
    phase: AtomicU8,
    /// Calls made, and how each ended.
    calls: ByPhase,
    successes: ByPhase,
    /// Calls that ended on the breaker's refusal.
    refused: ByPhase,
    /// Calls that ended on a failure: the last attempt's error or cut, or a deadline.
    failed: ByPhase,
    /// Attempts asked of the breaker, and those it let through to the command.
    attempts: ByPhase,
    sent: ByPhase,
    /// Commands answered; commands that failed (the server's error, a connection's) or were
    /// cut by their timeout; and those cut.
    answered: ByPhase,
    broke: ByPhase,
    cut: ByPhase,
    /// The longest a command let through took, and the latest a call ended past its
    /// deadline (zero for none).
    longest_attempt: Mutex<Duration>,
    latest_past_deadline: Mutex<Duration>,
    /// When the first call to succeed after the fault ended.
    back: Mutex<Option<Duration>>,
}

impl Tally {
    fn phase(&self) -> u8 {
        self.phase.load(Ordering::Relaxed)
    }

    fn at_least(slot: &Mutex<Duration>, seen: Duration) {
        let mut slot = slot.lock().unwrap();
        *slot = (*slot).max(seen);
    }

    fn report(&self, name: &str, recovery: Duration) {
        println!(
            "{name}: by phase (before, during, after): calls {:?}, successes {:?}, refused {:?}, \
             failed {:?}, attempts {:?}, sent {:?}, answered {:?}, broke {:?}, cut {:?}; longest \
             attempt {:?}, \
             latest past a deadline {:?}; first success {recovery:?} after the fault ended",
            self.calls.get(),
            self.successes.get(),
            self.refused.get(),
            self.failed.get(),
            self.attempts.get(),
            self.sent.get(),
            self.answered.get(),
            self.broke.get(),
            self.cut.get(),
            self.longest_attempt.lock().unwrap(),
            self.latest_past_deadline.lock().unwrap(),
        );
    }
}

/// How long a command took, recorded in the longest when it ends or is dropped.
struct Timed<'a> {
    begun: Duration,
    clock: &'a Clock,
    longest: &'a Mutex<Duration>,
}

impl Drop for Timed<'_> {
    fn drop(&mut self) {
        Tally::at_least(self.longest, self.clock.now().saturating_sub(self.begun));
    }
}

/// The three pieces, on one clock.
struct Pieces {
    clock: Clock,
    retry: Retry,
    breaker: Breaker<SharedClassicBreaker>,
    timeout: Timeout,
}

impl Pieces {
    fn new() -> Self {
        let clock = Clock::monotonic();
        let backoff = Backoff {
            base: Duration::from_millis(50),
            factor: 2.0,
            cap: BACKOFF_CAP,
            attempts: 4,
            jitter: Jitter::Full,
        };
        let rules = Rules {
            request_reserve: Duration::from_millis(100),
            ..Rules::new(backoff)
        };
        let policy = Classic {
            record: Record::Consecutive { failures: 5 },
            open: OpenWait::Fixed(OPEN),
            probes: 4,
            failure_rate: 0.5,
            lease: Duration::from_secs(2),
            ..CLASSIC
        };
        Self {
            retry: Retry::new(rules).with_clock(clock.clone()),
            breaker: Breaker::new(policy).with_clock(clock.clone()),
            timeout: Timeout::new(TIMEOUT).with_clock(clock.clone()),
            clock,
        }
    }

    /// One call: `INCR key` through the three, under a deadline of its own, counted.
    async fn incr(&self, conn: &ConnectionManager, key: &str, tally: &Tally) {
        let phase = tally.phase();
        tally.calls.add(phase);
        let deadline = Deadline::after(DEADLINE, &self.clock);
        let attempt = || {
            let phase = tally.phase();
            tally.attempts.add(phase);
            let mut conn = conn.clone();
            self.breaker.call(move || {
                tally.sent.add(phase);
                // Measures the command when it ends, or when it is dropped unended.
                let timed = Timed {
                    begun: self.clock.now(),
                    clock: &self.clock,
                    longest: &tally.longest_attempt,
                };
                async move {
                    let mut incr = redis::cmd("INCR");
                    incr.arg(key);
                    let answer = self
                        .timeout
                        .call(|| incr.query_async::<i64>(&mut conn))
                        .await;
                    drop(timed);
                    match answer {
                        Ok(_) => tally.answered.add(phase),
                        Err(CallError::Refused(_)) => {
                            tally.broke.add(phase);
                            tally.cut.add(phase);
                        }
                        Err(_) => tally.broke.add(phase),
                    }
                    answer
                }
            })
        };
        let answer = deadline
            .clone()
            .scope(
                self.retry
                    .call(attempt)
                    .when(|error: &AttemptError| !error.is_refused()),
            )
            .await;
        let ended = self.clock.now();
        Tally::at_least(
            &tally.latest_past_deadline,
            ended.saturating_sub(deadline.instant()),
        );
        match answer {
            Ok(_) => {
                tally.successes.add(phase);
                if tally.phase() == AFTER {
                    tally.back.lock().unwrap().get_or_insert(ended);
                }
            }
            Err(CallError::Failed(refused)) if refused.is_refused() => tally.refused.add(phase),
            Err(_) => tally.failed.add(phase),
        }
    }
}

/// A connection manager on `server` that reconnects fast and gives up fast: one try more
/// after 50 ms (so that a command during an outage fails in milliseconds, and the next one
/// starts a reconnection of its own), a connection timeout of 500 ms, and a response timeout
/// of 5 s, far past the pieces' own, there only so that a command the pieces failed to cut
/// would show as a 5 s attempt rather than hang.
async fn connect(server: &Server) -> ConnectionManager {
    let config = ConnectionManagerConfig::new()
        .set_min_delay(Duration::from_millis(50))
        .set_max_delay(Duration::from_millis(100))
        .set_number_of_retries(1)
        .set_connection_timeout(Some(Duration::from_millis(500)))
        .set_response_timeout(Some(Duration::from_secs(5)));
    redis::Client::open(server.url())
        .unwrap()
        .get_connection_manager_with_config(config)
        .await
        .expect("a connection manager on the test's server")
}

/// [`TASKS`] tasks calling `INCR` on one key of a server in a loop, through one set of
/// pieces, counted in one tally.
struct Load {
    pieces: Arc<Pieces>,
    tally: Arc<Tally>,
    key: String,
    stop: Arc<AtomicU8>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Load {
    /// Starts the load on `server` and returns once 20 calls have succeeded, in the phase
    /// [`DURING`]: the fault may begin.
    async fn start(server: &Server, name: &str) -> Self {
        let conn = connect(server).await;
        let pieces = Arc::new(Pieces::new());
        let tally = Arc::new(Tally::default());
        let key = common::unique(name);
        let stop = Arc::new(AtomicU8::new(0));
        let tasks = (0..TASKS)
            .map(|_| {
                let (pieces, conn, tally, stop) = (
                    Arc::clone(&pieces),
                    conn.clone(),
                    Arc::clone(&tally),
                    Arc::clone(&stop),
                );
                let key = key.clone();
                tokio::spawn(async move {
                    while stop.load(Ordering::Relaxed) == 0 {
                        pieces.incr(&conn, &key, &tally).await;
                        tokio::time::sleep(PAUSE).await;
                    }
                })
            })
            .collect();
        wait_for("20 successes before the fault", &tally, |t| {
            t.successes.get()[0] >= 20
        })
        .await;
        tally.phase.store(DURING, Ordering::Relaxed);
        Self {
            pieces,
            tally,
            key,
            stop,
            tasks,
        }
    }

    /// The clock's reading now, on the pieces' clock.
    fn now(&self) -> Duration {
        self.pieces.clock.now()
    }

    /// Waits for the first success after `since`, the fault's end, lets the load run half a
    /// second more, stops it, and checks that the success came within `bound` and that every
    /// call and command kept its time; returns the tally.
    async fn recovered(self, name: &str, since: Duration, bound: Duration) -> Arc<Tally> {
        let tally = self.tally;
        wait_for("a success after the fault", &tally, |t| {
            t.back.lock().unwrap().is_some()
        })
        .await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        self.stop.store(1, Ordering::Relaxed);
        let joined = tokio::time::timeout(BOUND, async {
            for task in self.tasks {
                task.await.expect("no call panics");
            }
        })
        .await;
        assert!(joined.is_ok(), "the tasks did not end within {BOUND:?}");

        let back = tally
            .back
            .lock()
            .unwrap()
            .expect("a success after the fault");
        let recovery = back.saturating_sub(since);
        tally.report(name, recovery);
        assert!(
            recovery <= bound,
            "{name}: first success {recovery:?} after the fault, bound {bound:?}"
        );
        check_time_kept(&tally);
        tally
    }
}

/// Waits until `done` holds, at most [`BOUND`].
async fn wait_for(what: &str, tally: &Tally, done: impl Fn(&Tally) -> bool) {
    let waited = tokio::time::timeout(BOUND, async {
        while !done(tally) {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    assert!(waited.is_ok(), "{what}: not within {BOUND:?}: {tally:?}");
}

/// The key's count on `server`, read on a connection of its own.
async fn count(server: &Server, key: &str) -> u64 {
    let mut conn = server.conn().await;
    redis::cmd("GET")
        .arg(key)
        .query_async::<Option<u64>>(&mut conn)
        .await
        .expect("a GET")
        .unwrap_or(0)
}

/// What both faults must show: no call past its deadline, no attempt past its timeout,
/// beyond [`SLACK`].
fn check_time_kept(tally: &Tally) {
    let latest = *tally.latest_past_deadline.lock().unwrap();
    assert!(latest <= SLACK, "a call ended {latest:?} past its deadline");
    let longest = *tally.longest_attempt.lock().unwrap();
    assert!(
        longest <= TIMEOUT + SLACK,
        "an attempt took {longest:?}, its timeout {TIMEOUT:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_redis_is_refused_by_the_breaker_and_recovers_within_the_bound() {
    let mut server = Server::start();
    let port = server.port();
    let load = Load::start(&server, "front-door-kill").await;
    server.kill();
    tokio::time::sleep(Duration::from_secs(5)).await;

    // Restarted on the same port, empty. The phase turns before the server is up, so that
    // every command the new server can run is counted after it.
    load.tally.phase.store(AFTER, Ordering::Relaxed);
    drop(server);
    let server = tokio::task::spawn_blocking(move || {
        (0..50).find_map(|_| {
            Server::start_on(port).or_else(|| {
                std::thread::sleep(Duration::from_millis(100));
                None
            })
        })
    })
    .await
    .unwrap()
    .expect("redis-server restarts on its port");
    let restarted = load.now();
    let key = load.key.clone();
    let tally = load
        .recovered("killed for 5 s", restarted, KILL_RECOVERY)
        .await;

    let [calls, refused, failed, sent, broke] = [
        &tally.calls,
        &tally.refused,
        &tally.failed,
        &tally.sent,
        &tally.broke,
    ]
    .map(|counts| counts.get()[usize::from(DURING)]);
    // The outage: every command sent to the dead server failed (but those in flight as it
    // came back, which a reconnection may have carried to the new one), and the breaker
    // refused most calls, so that most never reached it. (A call begun during the outage
    // may also succeed by a retry after the restart.)
    let answered = tally.answered.get()[usize::from(DURING)];
    assert!(
        answered <= TASKS as u64 && answered + broke <= sent,
        "{tally:?}"
    );
    assert!(refused > 0 && broke > 0, "{tally:?}");
    assert!(refused + failed <= calls);
    assert!(
        sent < calls / 2,
        "the breaker let {sent} of {calls} through"
    );
    // The restarted server came back empty: it counted every command answered that was sent
    // after the restart began, and at most the commands sent since the outage (one sent
    // before may wait for a reconnection that reaches the new server).
    let counted = count(&server, &key).await;
    let answered = tally.answered.get()[usize::from(AFTER)];
    let sent = tally.sent.get()[usize::from(DURING)] + tally.sent.get()[usize::from(AFTER)];
    assert!(
        answered <= counted && counted <= sent,
        "{counted} counted: {answered} answered, {sent} sent"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frozen_redis_is_cut_at_the_timeout_refused_and_recovers_after_the_thaw() {
    let server = Server::start();
    let load = Load::start(&server, "front-door-stop").await;
    server.signal("STOP");
    // Frozen until the breaker has refused, and for 3.5 s at least: its cycle is a second
    // open and a round of probes cut at 250 ms, so the thaw finds it open or probing.
    tokio::time::sleep(Duration::from_millis(3_500)).await;
    wait_for("a refusal during the freeze", &load.tally, |t| {
        t.refused.get()[usize::from(DURING)] > 0
    })
    .await;
    load.tally.phase.store(AFTER, Ordering::Relaxed);
    // Read before the signal is sent: `kill(1)` takes a few milliseconds to run.
    let thawed = load.now();
    server.signal("CONT");
    let key = load.key.clone();
    let tally = load
        .recovered("frozen for 3.5 s", thawed, STOP_RECOVERY)
        .await;

    let during = |counts: &ByPhase| counts.get()[usize::from(DURING)];
    assert!(during(&tally.cut) > 0, "{tally:?}");
    // Nothing but time failed a command sent during the freeze: each was cut, or answered (as
    // the freeze began, or after the thaw within its timeout), or dropped at its call's
    // deadline; and `check_time_kept` bounded each, dropped ones too.
    assert_eq!(during(&tally.broke), during(&tally.cut), "{tally:?}");
    assert!(during(&tally.answered) + during(&tally.cut) <= during(&tally.sent));
    assert!(during(&tally.answered) <= 2 * TASKS as u64, "{tally:?}");
    assert!(during(&tally.refused) > 0, "{tally:?}");
    assert!(
        during(&tally.sent) < during(&tally.calls) / 2,
        "the breaker let {} of {} through",
        during(&tally.sent),
        during(&tally.calls)
    );
    // Nothing was lost: the count holds every success, and at most every command sent (a
    // command cut by time may have run after the thaw).
    let counted = count(&server, &key).await;
    let answered: u64 = tally.answered.get().iter().sum();
    let sent: u64 = tally.sent.get().iter().sum();
    assert!(
        answered <= counted && counted <= sent,
        "{counted} counted: {answered} answered, {sent} sent"
    );
}
