//! A tour of ironward: every piece driven by a simulated clock and a seeded draw, so the
//! output is the same on every run.
//!
//! ```sh
//! cargo run --example tour
//! ```

use std::collections::VecDeque;
use std::time::Duration;

use ironward::{
    BACKOFF, Backoff, Bucket, Deadline, Gate, Jitter, Period, RECONNECT, SHED, SRE, Shedder,
    Sliding, SplitMix64, SreBreaker, Ticket, Usage, Ward, WardPiece,
};

fn main() {
    println!("ironward tour: every clock reading, draw and CPU reading below is passed in.\n");
    breaker();
    shedder();
    limiters();
    backoff();
    deadline();
    ward();
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A backend that fails everything from 10 s to 30 s and half of everything until 40 s,
/// called 50 times a second through a breaker.
fn breaker() {
    println!("== SreBreaker: a backend fails, then recovers (50 calls/s, SRE preset)");
    println!("   time     backend      asked  reached  refused  ratio at end");
    let mut breaker = SreBreaker::new(SRE, Duration::ZERO);
    let mut dice = SplitMix64::new(7);
    let (mut asked, mut reached) = (0, 0);
    for tick in 0..3_000u64 {
        let now = ms(tick * 20);
        let failure_rate = match tick * 20 {
            10_000..30_000 => 1.0,
            30_000..40_000 => 0.5,
            _ => 0.0,
        };
        asked += 1;
        if let Some(permit) = breaker.allow(now, dice.roll()) {
            reached += 1;
            let done = now + ms(10);
            if dice.roll() < failure_rate {
                breaker.fail(permit, done);
            } else {
                breaker.pass(permit, done);
            }
        }
        if (tick + 1) % 250 == 0 {
            let state = match failure_rate {
                1.0 => "down",
                0.5 => "half down",
                _ => "healthy",
            };
            let end = now + ms(20);
            println!(
                "   {:>2}-{:>2} s  {state:<10} {asked:>7} {reached:>8} {:>7.1}%  {:>11.3}",
                (end.as_secs() - 5),
                end.as_secs(),
                100.0 * (asked - reached) as f64 / asked as f64,
                breaker.ratio(end),
            );
            (asked, reached) = (0, 0);
        }
    }
    println!(
        "   While the backend is down the breaker refuses most calls instead of all of them,\n   \
         so the backend still sees a trickle of probes; once it recovers, the refusals\n   \
         fade with the failures instead of flooding it all at once.\n"
    );
}

/// A server that completes 4 calls a millisecond, offered 2 a millisecond, then 8 for ten
/// seconds, then 2 again; its CPU reads 500 ‰ under the normal load and 950 ‰ under the
/// overload. The same traffic is then replayed with nothing in front of the server.
fn shedder() {
    println!("== Shedder: a server is overloaded for ten seconds (SHED preset)");
    println!("   time        offered/ms  cpu ‰  admitted  refused  in flight  mean wait");
    let shedded = serve(Some(Shedder::new(SHED, Duration::ZERO)), true);
    let unguarded = serve(None, false);
    println!(
        "   Refusals happen only while the CPU is hot and more calls are in flight than the\n   \
         server has shown it can finish; under the normal load nothing is refused.\n   \
         With a shedder the worst mean wait was {:.1} ms; with nothing in front of the\n   \
         server the same traffic queued {} calls and the worst mean wait was {:.0} ms.\n",
        shedded.worst_wait, unguarded.peak_queue, unguarded.worst_wait
    );
}

/// What one run of the overloaded server came to.
struct Served {
    worst_wait: f64,
    peak_queue: usize,
}

/// Runs the overload of [`shedder`] in one-millisecond steps, behind `shedder` if there is one.
fn serve(mut shedder: Option<Shedder>, print: bool) -> Served {
    let mut queue: VecDeque<(Duration, Option<Ticket>)> = VecDeque::new();
    let (mut admitted, mut refused, mut waited, mut served) = (0u64, 0u64, 0u64, 0u64);
    let mut outcome = Served {
        worst_wait: 0.0,
        peak_queue: 0,
    };
    for t in 0..20_000u64 {
        let now = ms(t);
        let offered = if (5_000..15_000).contains(&t) { 8 } else { 2 };
        let cpu = if offered > 4 { 950 } else { 500 };
        for _ in 0..offered {
            let ticket = match shedder.as_mut().map(|s| s.allow(now, cpu)) {
                Some(None) => {
                    refused += 1;
                    continue;
                }
                Some(ticket) => ticket,
                None => None,
            };
            admitted += 1;
            queue.push_back((now, ticket));
        }
        outcome.peak_queue = outcome.peak_queue.max(queue.len());
        for _ in 0..4 {
            let Some((arrived, ticket)) = queue.pop_front() else {
                break;
            };
            waited += (now - arrived).as_millis() as u64;
            served += 1;
            if let (Some(shedder), Some(ticket)) = (shedder.as_mut(), ticket) {
                shedder.pass(ticket, now + ms(1));
            }
        }
        if (t + 1) % 2_500 == 0 {
            let mean = waited as f64 / served.max(1) as f64;
            outcome.worst_wait = outcome.worst_wait.max(mean);
            if print {
                let from = (t + 1 - 2_500) as f64 / 1000.0;
                println!(
                    "   {from:>4.1}-{:>4.1} s {offered:>9} {cpu:>9} {admitted:>9} {refused:>8} {:>10} {mean:>7.1} ms",
                    from + 2.5,
                    queue.len(),
                );
            }
            (admitted, refused, waited, served) = (0, 0, 0, 0);
        }
    }
    outcome
}

fn limiters() {
    println!("== Limiters: one step through each");

    let mut bucket = Bucket::new(2.0, 3.0, Duration::ZERO);
    let taken: Vec<bool> = (0..5).map(|_| bucket.take(Duration::ZERO, 1.0)).collect();
    println!(
        "   Bucket(2/s, burst 3): five calls at 0 s → {taken:?}; the next token in {:?}",
        bucket.next(Duration::ZERO, 1.0)
    );

    let mut sliding = Sliding::new(3, Duration::from_secs(1));
    let taken: Vec<bool> = [0, 100, 200, 300].map(|t| sliding.take(ms(t))).to_vec();
    println!(
        "   Sliding(3 per 1 s): calls at 0, 100, 200, 300 ms → {taken:?}; room again in {:?}",
        sliding.next(ms(300))
    );

    let mut period = Period::aligned(3, Duration::from_secs(1));
    let quotas: Vec<Usage> = [1_200, 1_500, 1_700, 1_900]
        .map(|t| period.take(ms(t)))
        .to_vec();
    println!(
        "   Period(3 per 1 s, aligned): calls at 1.2, 1.5, 1.7, 1.9 s → {quotas:?}; resets in {:?}",
        period.next(ms(1_900))
    );

    let mut gate = Gate::new(2);
    let entered = [gate.enter(), gate.enter(), gate.enter()];
    gate.leave();
    println!(
        "   Gate(2): three enter → {entered:?}; one leaves, and the next enter → {}\n",
        gate.enter()
    );
}

fn backoff() {
    println!("== Backoff: how long each retry waits (100 ms doubling to 1 s, 5 attempts)");
    let mut dice = SplitMix64::new(42);
    let draws: Vec<f64> = (0..4).map(|_| dice.roll()).collect();
    for (name, jitter) in [
        ("Rigid", Jitter::Rigid),
        ("Full", Jitter::Full),
        ("Equal", Jitter::Equal),
        ("Decorrelated", Jitter::Decorrelated),
        ("Spread(0.2)", Jitter::Spread(0.2)),
    ] {
        let policy = Backoff {
            attempts: 5,
            jitter,
            ..BACKOFF
        };
        let plan: Vec<String> = policy
            .schedule(&draws)
            .iter()
            .map(|d| format!("{:>4} ms", d.as_millis()))
            .collect();
        println!("   {name:<13} {}", plan.join("  "));
    }
    println!(
        "   The preset makes {} attempts: more(1) = {}, more(3) = {}\n",
        BACKOFF.attempts,
        BACKOFF.more(1),
        BACKOFF.more(3)
    );
}

fn deadline() {
    println!("== Deadline: a 2 s budget started at 10 s");
    let deadline = Deadline::start(Duration::from_secs(2), Duration::from_secs(10));
    for t in [10_500, 11_999, 12_000] {
        println!(
            "   at {:>6.3} s: remaining {:?}, expired {}",
            t as f64 / 1000.0,
            deadline.remaining(ms(t)),
            deadline.expired(ms(t)),
        );
    }
    let none = Deadline::start(Duration::ZERO, Duration::ZERO);
    println!(
        "   A zero budget is no timeout: remaining {:?}, expired {}",
        none.remaining(Duration::MAX),
        none.expired(Duration::MAX)
    );
}

fn ward() {
    println!("== Ward: a pool of 8 whose database is down from 0 s to 10 s (RECONNECT preset)");
    let mut ward = Ward::new(RECONNECT, Duration::ZERO);
    let mut dice = SplitMix64::new(7);
    let (mut asked, mut connects, mut refused) = (0_u32, 0_u32, [0_u32; 3]);
    let mut pooled = 0_u32;
    let mut back = None;
    // Every 10 ms each of the 8 workers without a connection asks for one; a connect to the
    // dead database fails 2 ms later, one to the live one succeeds.
    for tick in 0..1_500_u64 {
        let now = ms(tick * 10);
        let waiting = 8 - pooled;
        for _ in 0..waiting {
            asked += 1;
            match ward.connect(now, dice.roll()) {
                Ok(permit) => {
                    connects += 1;
                    if now < Duration::from_secs(10) {
                        ward.failed(permit, now + ms(2), dice.roll());
                    } else {
                        ward.connected(permit, now + ms(2));
                        pooled += 1;
                    }
                }
                Err(refusal) => {
                    let piece = refusal.piece();
                    refused[[WardPiece::Breaker, WardPiece::Bucket, WardPiece::Backoff]
                        .iter()
                        .position(|p| *p == piece)
                        .unwrap_or(0)] += 1;
                }
            }
        }
        if pooled == 8 && back.is_none() {
            back = Some(now);
        }
    }
    println!(
        "   {asked} checkouts asked for a connection: {connects} connects made, refused by \
         breaker {}, bucket {}, backoff {}",
        refused[0], refused[1], refused[2]
    );
    match back {
        Some(at) => println!("   all 8 connected again at {:.2} s\n", at.as_secs_f64()),
        None => println!("   the pool was not full again by 15 s\n"),
    }
}
