//! A soak: the `server` example's stack (its `ironward.toml`: a shedder, a quota by peer, a
//! gate and a deadline) with seeded chaos innermost around the handler, under open-loop load
//! from clients that retry through `ironward-reqwest`'s middleware on one shared retry
//! budget, all in one process, for as long as asked; then a check that nothing leaked and
//! that every count adds up.
//!
//! ```sh
//! cargo run --release -p ironward-benches --features metrics --example soak -- --seconds 600 --rate 200
//! ```
//!
//! Options: `--seconds N` (600), `--rate R` calls a second in all (200), `--seed S` (the
//! chaos layer's, 7). Each client sends from an address of its own (127.0.0.2 and up), and
//! they are as few as put each at least 10 % over the quota an address gets: once a client's
//! burst is spent, the quota refuses a share of its attempts, and its 429s are retried too.
//!
//! Every 10 s it prints the calls sent, the outcomes by status (of the calls, and of every
//! attempt on the wire), the retries, the process's resident memory and what each piece has
//! in flight. At the end, once the calls in flight have drained (a bounded wait), it holds:
//!
//! - **Nothing held**: the gate's permits, the shedder's in-flight count (its layer's and its
//!   gauge) and the clients' calls are all 0.
//! - **Memory flat**: no resident-set sample after the warm-up (60 s, or a quarter of a run
//!   under two minutes) is more than 10 % + 8 MiB above the one taken then.
//! - **Counts agree**: the clients tally every attempt's status below the retry middleware,
//!   where each is one response the server sent, so each server-side counter that decides a
//!   status must equal the clients' count of it exactly: the shedder's decisions are every
//!   attempt, the quota's refusals every 429, the chaos layer's injected errors and replaced
//!   responses the 503s and 500s it marked, the deadline's refusals the 504s, of which the
//!   chaos layer's aborts are some (all, unless the machine stalls a call past the deadline),
//!   the chaos layer's requests what got past the gate; and the retry middleware's counters
//!   equal the sums of the calls' records.
//! - **No retry past its budget**: every call's `Retried` record within the retry settings,
//!   and the shared budget's tokens, sampled every second, never below 0 nor above its most.
//!
//! It exits non-zero if any of these fails.

mod check;
mod load;
mod server;

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use ironward::SharedBudget;
use tokio::time::Instant;

use check::{Recorder, Rss, Seen, Verdicts, mib, status_kib};
use load::{Plan, Tally};
use server::{NAME, Pieces};

/// How often the soak prints where it stands.
const REPORT: Duration = Duration::from_secs(10);

/// The run's parameters, from the command line.
struct Args {
    seconds: u64,
    rate: f64,
    seed: u64,
}

fn args() -> Result<Args, String> {
    let mut args = Args {
        seconds: 600,
        rate: 200.0,
        seed: 7,
    };
    let mut given = std::env::args().skip(1);
    while let Some(flag) = given.next() {
        let value = given
            .next()
            .ok_or_else(|| format!("{flag} needs a value"))?;
        let bad = || format!("{flag} {value}: not a number");
        match flag.as_str() {
            "--seconds" => args.seconds = value.parse().map_err(|_| bad())?,
            "--rate" => args.rate = value.parse().map_err(|_| bad())?,
            "--seed" => args.seed = value.parse().map_err(|_| bad())?,
            _ => {
                return Err(format!(
                    "unknown option {flag}: --seconds N, --rate R, --seed S"
                ));
            }
        }
    }
    if args.seconds == 0 || !(args.rate.is_finite() && args.rate > 0.0) {
        return Err("--seconds and --rate must be above 0".into());
    }
    Ok(args)
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = match args() {
        Ok(args) => args,
        Err(err) => {
            eprintln!("soak: {err}");
            return ExitCode::from(2);
        }
    };
    match soak(&args).await {
        Ok(failed) if failed.is_empty() => {
            println!("soak: every check held");
            ExitCode::SUCCESS
        }
        Ok(failed) => {
            eprintln!("soak: {} check(s) failed:", failed.len());
            for what in failed {
                eprintln!("  {what}");
            }
            ExitCode::FAILURE
        }
        Err(err) => {
            eprintln!("soak: {err}");
            ExitCode::FAILURE
        }
    }
}

/// Runs the soak; the checks that failed.
async fn soak(args: &Args) -> Result<Vec<String>, tower::BoxError> {
    let recorder = Recorder::install();
    let (addr, pieces, server) = server::start(args.seed).await?;
    let run = Duration::from_secs(args.seconds);
    // Each client a little over its address's quota, so that once its burst is spent the
    // quota refuses a share of its attempts, retries among them.
    let clients = (args.rate / (1.1 * pieces.quota_rate)).floor().max(1.0);
    let plan = Plan {
        target: addr,
        clients: clients as u32,
        rate: args.rate,
        run,
    };
    println!(
        "soak: {} s at {} calls/s from {} clients on {addr}; chaos seed {}, {:.0} % of requests faulted",
        args.seconds,
        args.rate,
        plan.clients,
        args.seed,
        pieces
            .chaos
            .policy()
            .faults
            .iter()
            .map(|f| f.rate)
            .sum::<f64>()
            * 100.0
    );
    // gRPC A6's example budget: 10 tokens, a tenth of one back per success.
    let budget = Arc::new(SharedBudget::new(10, 0.1));
    let tally = Arc::new(Tally::new());
    let start = Instant::now();
    let load = {
        let (budget, tally) = (Arc::clone(&budget), Arc::clone(&tally));
        tokio::spawn(async move { load::run(&plan, &budget, &tally).await })
    };

    let mut rss = Rss::default();
    let mut tokens = (f64::INFINITY, f64::NEG_INFINITY);
    let watch = |rss: &mut Rss, tokens: &mut (f64, f64)| {
        rss.sample(start.elapsed());
        let now = budget.tokens();
        *tokens = (tokens.0.min(now), tokens.1.max(now));
    };
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    let mut seconds = 0u64;
    while !load.is_finished() {
        tick.tick().await;
        watch(&mut rss, &mut tokens);
        if seconds > 0 && seconds.is_multiple_of(REPORT.as_secs()) {
            report(seconds, &tally, &pieces, &budget);
        }
        seconds += 1;
    }
    load.await??;

    // The drain: every call due has left; wait for the last to come back, for at most the
    // longest a call can take (its time budget, and an attempt the deadline cuts) and then
    // some for a loaded machine.
    let bound = load::settings().total_budget + pieces.deadline + Duration::from_secs(20);
    let drained = Instant::now();
    while (tally.in_flight() > 0 || pieces.gate.held() > 0 || pieces.shed.flying() > 0)
        && drained.elapsed() < bound
    {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    watch(&mut rss, &mut tokens);
    println!(
        "soak: load stopped at {:.1} s, drained in {:.2} s",
        run.as_secs_f64(),
        drained.elapsed().as_secs_f64()
    );
    report(seconds, &tally, &pieces, &budget);
    let seen = recorder.snapshot();
    let mut verdicts = Verdicts::default();
    println!("soak: the checks");
    leaks(&mut verdicts, &tally, &pieces, &seen);
    memory(&mut verdicts, &rss, run);
    counts(&mut verdicts, &tally, &pieces, &seen);
    retries(&mut verdicts, &tally, &budget, tokens, &seen);
    if !verdicts.failed().is_empty() {
        println!("soak: the recorder's series");
        seen.dump();
    }
    server.abort();
    Ok(verdicts.failed().to_vec())
}

/// One line of where the run stands.
fn report(seconds: u64, tally: &Tally, pieces: &Pieces, budget: &SharedBudget) {
    use std::sync::atomic::Ordering::Relaxed;
    println!(
        "[{seconds:>4} s] sent {} done {} in flight {} | calls {} failed {} | attempts {} | retries {} throttled {} | rss {:.1} MiB | gate held {} shed flying {} chaos requests {} injected {} | budget {:.1}",
        tally.sent.load(Relaxed),
        tally.done.load(Relaxed),
        tally.in_flight(),
        tally.calls.line(),
        tally.failed.load(Relaxed),
        tally.attempts.line(),
        tally.retries.load(Relaxed),
        tally.throttled.load(Relaxed),
        status_kib("VmRSS:").map_or(0.0, mib),
        pieces.gate.held(),
        pieces.shed.flying(),
        pieces.chaos.requests(),
        pieces.chaos.injected(),
        budget.tokens(),
    );
}

/// Nothing held after the drain: permits, in-flight counts, calls.
fn leaks(verdicts: &mut Verdicts, tally: &Tally, pieces: &Pieces, seen: &Seen) {
    verdicts.equal("gate permits held", u64::from(pieces.gate.held()), 0);
    verdicts.equal("shed calls in flight", pieces.shed.flying(), 0);
    let gauge = seen.gauge("ironward.shed.in_flight", &[("name", NAME)]);
    verdicts.hold(gauge == 0.0, format!("shed in-flight gauge: {gauge} = 0"));
    verdicts.equal("client calls in flight", tally.in_flight(), 0);
}

/// The resident set flat after the warm-up.
fn memory(verdicts: &mut Verdicts, rss: &Rss, run: Duration) {
    let Some(check::Flat {
        reference,
        later,
        held,
    }) = rss.flat(run)
    else {
        verdicts.hold(false, "memory: too few resident-set samples to judge");
        return;
    };
    let end = rss.last().unwrap_or(later);
    let hwm = status_kib("VmHWM:").unwrap_or(0);
    verdicts.hold(
        held,
        format!(
            "memory flat: rss {:.1} MiB at {} s, at most {:.1} MiB after (at {} s), {:.1} MiB at the end, peak {:.1} MiB (rule: within 10 % + 8 MiB of the first)",
            mib(reference.1),
            reference.0.as_secs(),
            mib(later.1),
            later.0.as_secs(),
            mib(end.1),
            mib(hwm),
        ),
    );
}

/// Each server-side counter against the clients' count of the same thing.
fn counts(verdicts: &mut Verdicts, tally: &Tally, pieces: &Pieces, seen: &Seen) {
    use std::sync::atomic::Ordering::Relaxed;
    let requests = |piece: &str, outcome: &str| {
        seen.counter(
            "ironward.requests",
            &[("piece", piece), ("name", NAME), ("outcome", outcome)],
        )
    };
    let injected = |fault: &str| {
        seen.counter(
            "ironward.chaos.injected",
            &[("name", NAME), ("fault", fault)],
        )
    };
    let wire = &tally.attempts;
    let attempts = wire.total();
    verdicts.equal(
        "calls sent = calls done",
        tally.sent.load(Relaxed),
        tally.done.load(Relaxed),
    );
    verdicts.equal(
        "calls done = responses + failures",
        tally.done.load(Relaxed),
        tally.calls.total() + tally.failed.load(Relaxed),
    );
    verdicts.equal(
        "attempts without a response",
        tally.attempt_errors.load(Relaxed),
        0,
    );
    verdicts.equal(
        "shed decisions = attempts answered",
        requests("shed", "admitted") + requests("shed", "refused"),
        attempts,
    );
    verdicts.equal(
        "quota refusals = 429s",
        requests("rate_limit", "refused"),
        wire.get(429),
    );
    let (error, replace, abort) = (injected("error"), injected("replace"), injected("abort"));
    verdicts.equal(
        "chaos errors = 503s marked error",
        error,
        tally.chaos_error.load(Relaxed),
    );
    verdicts.equal(
        "shed + gate refusals + chaos errors = 503s",
        requests("shed", "refused") + requests("gate", "refused") + error,
        wire.get(503),
    );
    verdicts.equal(
        "chaos replacements = 500s marked replace",
        replace,
        tally.chaos_replace.load(Relaxed),
    );
    verdicts.equal("chaos replacements = 500s", replace, wire.get(500));
    // Every abort ends at the deadline as a 504; so would any other call a stalled machine
    // held past it, so these two are bounds, not equalities.
    verdicts.at_most("chaos aborts <= 504s", abort, wire.get(504));
    verdicts.equal(
        "deadline refusals = 504s",
        seen.counter(
            "ironward.requests",
            &[
                ("piece", "deadline"),
                ("name", NAME),
                ("outcome", "refused"),
            ],
        ),
        wire.get(504),
    );
    verdicts.at_most(
        "chaos aborts <= deadline cuts (elapsed)",
        abort,
        seen.counter(
            "ironward.requests",
            &[("piece", "deadline"), ("name", NAME), ("reason", "elapsed")],
        ),
    );
    verdicts.equal(
        "chaos layer's injected = its faults counted",
        pieces.chaos.injected(),
        error + replace + abort + injected("latency"),
    );
    verdicts.equal(
        "chaos layer's requests = 200s + 500s + 504s + chaos 503s",
        pieces.chaos.requests(),
        wire.get(200) + wire.get(500) + wire.get(504) + error,
    );
    let known = [200, 429, 500, 503, 504]
        .map(|s| wire.get(s))
        .iter()
        .sum::<u64>();
    verdicts.equal("attempts of any other status", attempts - known, 0);
}

/// The retry middleware's counts against the calls' records, and the budget's bounds.
fn retries(
    verdicts: &mut Verdicts,
    tally: &Tally,
    budget: &SharedBudget,
    tokens: (f64, f64),
    seen: &Seen,
) {
    use std::sync::atomic::Ordering::Relaxed;
    let name = ("name", load::RETRY_NAME);
    verdicts.equal(
        "calls with no Retried record",
        tally.unrecorded.load(Relaxed),
        0,
    );
    verdicts.equal(
        "calls past the retry settings (attempts or time)",
        tally.over_budget.load(Relaxed),
        0,
    );
    verdicts.equal(
        "records' attempts = attempts on the wire",
        tally.recorded_attempts.load(Relaxed),
        tally.attempts.total() + tally.attempt_errors.load(Relaxed),
    );
    verdicts.equal(
        "middleware's first attempts = calls",
        seen.counter("ironward.retry.attempts", &[name, ("kind", "first")]),
        tally.done.load(Relaxed),
    );
    verdicts.equal(
        "middleware's retries = records' retries",
        seen.counter("ironward.retry.attempts", &[name, ("kind", "retry")]),
        tally.retries.load(Relaxed),
    );
    verdicts.equal(
        "middleware's finished calls = calls",
        seen.counter("ironward.retry.calls", &[name]),
        tally.done.load(Relaxed),
    );
    verdicts.equal(
        "middleware's throttled calls = records' throttled",
        seen.counter("ironward.retry.calls", &[name, ("outcome", "throttled")]),
        tally.throttled.load(Relaxed),
    );
    let most = f64::from(budget.max_tokens());
    verdicts.hold(
        tokens.0 >= 0.0 && tokens.1 <= most,
        format!(
            "retry budget's tokens within [0, {most}]: sampled from {:.3} to {:.3}",
            tokens.0, tokens.1
        ),
    );
}
