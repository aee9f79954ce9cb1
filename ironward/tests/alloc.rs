//! Decisions allocate nothing after construction.
//!
//! A counting global allocator wraps the system's. The counter is process-wide, so this binary
//! runs without libtest's harness (`harness = false` in Cargo.toml): a plain `main` on one
//! thread, with no harness threads allocating while a region is being measured.

use std::alloc::System;
use std::time::Duration;

use ironward::http_retry::{self, Attempt, Call, Fault, Reading, Run, Settings};
use ironward::limit::{AIMD, Algorithm, GRADIENT2, Latency, SAMPLING, Sampling};
use ironward::retry::{Engine, Failure, Next, Rules};
use ironward::{
    ADAPTIVE, Adaptive, BACKOFF, Backoff, Bucket, Budget, Criticality, Deadline, Gate, Jitter,
    Limiter, Period, SHED, SRE, Settle, Shedder, Sliding, SreBreaker, Window,
};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

fn main() {
    decisions_allocate_nothing_after_construction();
    println!("alloc: 1 passed, 0 failed");
}

fn decisions_allocate_nothing_after_construction() {
    let ms = Duration::from_millis;
    let mut breaker = SreBreaker::new(SRE, ms(0));
    let mut shedder = Shedder::new(SHED, ms(0));
    let mut window = Window::<u64>::new(10, ms(1000), ms(0));
    let mut bucket = Bucket::new(100.0, 10.0, ms(0));
    let mut sliding = Sliding::new(1000, ms(1000));
    let mut period = Period::aligned(1000, ms(1000));
    let mut gate = Gate::new(8);
    let p99 = Adaptive {
        sampling: Sampling {
            latency: Latency::Percentile(0.99),
            min_window: ms(50),
            ..SAMPLING
        },
        ..ADAPTIVE
    };
    let mut limiters = [
        Limiter::new(p99, ms(0)),
        Limiter::new(
            Adaptive {
                algorithm: Algorithm::Gradient2(GRADIENT2),
                ..p99
            },
            ms(0),
        ),
        Limiter::new(
            Adaptive {
                algorithm: Algorithm::Aimd(AIMD),
                ..ADAPTIVE
            },
            ms(0),
        ),
    ];
    let mut budget = Budget::default();
    let deadline = Deadline::start(ms(5_000), ms(0));
    let backoffs = [
        BACKOFF,
        Backoff {
            jitter: Jitter::Full,
            ..BACKOFF
        },
        Backoff {
            jitter: Jitter::Equal,
            ..BACKOFF
        },
        Backoff {
            jitter: Jitter::Decorrelated,
            ..BACKOFF
        },
        Backoff {
            jitter: Jitter::Rigid,
            ..BACKOFF
        },
    ];
    let settings = Settings::default();
    let call = Call {
        method: "GET",
        body_replayable: true,
        replay_safe: false,
    };
    let rules = Rules {
        total_budget: ms(2_000),
        ..Rules::new(backoffs[3])
    };
    let mut engine = Engine::new(rules, ms(0));
    let mut run = Run::new(settings, &call, ms(0));

    let region = Region::new(GLOBAL);
    let mut admitted = 0u64;
    let mut waited = Duration::ZERO;
    for i in 0..20_000u64 {
        // Two minutes of traffic, with a clock that sometimes steps back.
        let now = ms(i * 6 - (i % 7 == 3) as u64 * 5);
        let roll = (i % 100) as f64 / 100.0;
        let cpu = if (i / 2_000) % 2 == 0 { 950 } else { 300 };

        if let Some(permit) = breaker.allow(now, roll) {
            if i % 3 == 0 {
                assert!(breaker.pass(permit, now).is_none());
            } else {
                assert!(breaker.fail(permit, now).is_none());
            }
        }
        // The same decisions asked for their reasons, each read so that none is optimised
        // away: a reason is a `Copy` record, and a bucket's wait is worked out on asking.
        match breaker.check(now, roll) {
            Ok(permit) => assert!(breaker.pass(permit, now).is_none()),
            Err(reason) => admitted += reason.total % 2,
        }
        let _ = breaker.ratio(now);
        if let Some(ticket) = shedder.allow(now, cpu) {
            if i % 5 == 0 {
                assert!(shedder.fail(ticket).is_none());
            } else {
                assert!(shedder.pass(ticket, now + ms(4)).is_none());
            }
        }
        match shedder.check(now, cpu) {
            Ok(ticket) => assert!(shedder.pass(ticket, now + ms(3)).is_none()),
            Err(reason) => admitted += u64::from(reason.overloaded),
        }
        let class = Criticality::ALL[(i % 4) as usize];
        match shedder.check_as(now, cpu, class) {
            Ok(ticket) => assert!(shedder.pass(ticket, now + ms(2)).is_none()),
            Err(reason) => admitted += u64::from(reason.floor > reason.criticality),
        }
        for limiter in &mut limiters {
            let settle = [
                Settle::Success,
                Settle::Success,
                Settle::Dropped,
                Settle::Ignored,
            ][(i % 4) as usize];
            match limiter.acquire_as(now, class) {
                // Latencies of 1 to 40 ms, so that windows close and percentiles are taken.
                Ok(grant) => assert!(
                    limiter
                        .settle(grant, settle, now + ms(1 + i % 40))
                        .is_none()
                ),
                Err(reason) => admitted += u64::from(reason.room % 2),
            }
        }
        *window.slot(now) += 1;
        window.each_past(now, |b| admitted += *b % 2);

        admitted += u64::from(bucket.take(now, 1.0));
        let _ = (bucket.next(now, 2.0), bucket.tokens(now));
        if let Err(reason) = bucket.check(now, 1.5) {
            waited += reason.next().min(ms(1));
        }
        admitted += u64::from(sliding.take(now));
        if let Err(reason) = sliding.check(now) {
            waited += reason.next.min(ms(1));
        }
        if let Err(reason) = period.check(now) {
            admitted += u64::from(reason.count % 2);
        }
        let _ = (sliding.left(now), sliding.next(now));
        let _ = (period.take(now), period.left(now), period.next(now));
        if gate.enter() && i % 2 == 0 {
            gate.leave();
        }
        if let Err(reason) = gate.check() {
            admitted += u64::from(reason.held % 2);
        } else if i % 3 == 0 {
            gate.leave();
        }
        if let Err(reason) = budget.check() {
            admitted += u64::from(reason.max_tokens % 2);
        }
        let _ = (deadline.expired(now), deadline.remaining(now));
        if budget.can_retry() || i % 4 == 0 {
            budget.fail();
        } else {
            budget.pass();
        }

        for backoff in &backoffs {
            let retry = (i % 6) as u32;
            waited += backoff.delay(retry, roll, Some(waited / 1_000));
            let _ = (backoff.ceiling(retry), backoff.more(retry));
        }

        let request = Attempt {
            method: if i % 2 == 0 { "GET" } else { "POST" },
            status: [429, 503, 404, 500][(i % 4) as usize],
            retry_index: (i % 5) as u32,
            elapsed: ms(i % 130_000),
            body_replayable: true,
            replay_safe: i % 3 == 0,
            sample_ppm: (i % 1_000_001) as u32,
        };
        let retry_after: &[&str] = match i % 4 {
            0 => &[],
            1 => &["5"],
            2 => &["Sun, 06 Nov 1994 08:49:37 GMT"],
            _ => &["1", "2"],
        };
        let _ = http_retry::decide_response(&settings, &request, retry_after, 784_111_777);
        let _ = http_retry::decide(&settings, &request, Some(ms(i)));
        let _ = http_retry::parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT");

        // A retry loop every eight steps, on the engine and on HTTP's `Run` over it.
        if i % 8 == 0 {
            engine = Engine::new(rules, now);
            run = Run::new(settings, &call, now);
        }
        if let Ok(timeout) = engine.attempt(now, Some(ms(300))) {
            waited += timeout.duration().min(ms(1));
            let failure = Failure::retryable(now, roll).naming(ms(i % 50));
            match engine.failed(failure, Some(&mut budget)) {
                Next::Wait(wait) => waited += wait,
                Next::Stop(stop) => admitted += u64::from(stop.as_str().len() % 2 == 0),
            }
        }
        if run.attempt(now, Some(ms(300))).is_ok() {
            let reading = Reading {
                now,
                unix: Duration::from_secs(784_111_777),
                roll,
            };
            let fields = [&b"1"[..], b"Sun, 06 Nov 1994 08:49:40 GMT"];
            let _ = match i % 3 {
                0 => run.response(
                    503,
                    fields[(i % 2) as usize..][..1].iter().copied(),
                    reading,
                    None,
                ),
                1 => run.error(Fault::Sent, reading, Some(&mut budget)),
                _ => run.response(429, [], reading, Some(&mut budget)),
            };
            admitted += u64::from(run.retried().attempts % 2);
        }
    }
    let change = region.change();

    assert_eq!(change.allocations, 0, "{change:?}");
    assert_eq!(change.reallocations, 0, "{change:?}");
    // The loop did real work: something was admitted and some wait was computed.
    assert!(admitted > 0 && waited > Duration::ZERO);
    assert!(gate.held() <= 8);
}
