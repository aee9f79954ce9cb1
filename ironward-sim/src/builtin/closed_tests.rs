//! `sharing-closed`: what the default limiter and no limiter do for 500 closed-loop clients
//! of a processor-sharing backend, and the bar the default is held to.

use core::time::Duration;

use super::Builtin;
use super::converge_tests::{every_verdict, judge, today};

#[test]
fn sharing_closed_today_the_default_serves_the_capacity_at_a_limit_of_one_or_two() {
    // A run without a limiter reads as a limit of 0: never near the optimum of 1, and its
    // latency is what it is.
    today(
        Builtin::SharingClosed,
        &[
            ("adaptive", "YYYYY"),
            ("adaptive-from-1", "YYYYY"),
            ("adaptive-from-1000", "YYYYY"),
            ("none", "nnnYY"),
        ],
    );
    let judged = judge(Builtin::SharingClosed);
    let (_, adaptive) = &judged[0];
    assert!((1..=2).contains(&adaptive.last), "{adaptive:?}");
    assert!(adaptive.goodput.is_some_and(|g| g > 0.99), "{adaptive:?}");
}

#[test]
fn sharing_closed_the_limiter_cuts_the_p99_from_2500_ms_to_99_at_the_same_goodput() {
    let builtin = Builtin::SharingClosed;
    let report = builtin.scenario().expect("the built-in reads").run(|_| {});
    let (adaptive, none) = (report.run("adaptive").unwrap(), report.run("none").unwrap());
    // Without a limiter every call waits behind the other 499: 500 × 5 ms.
    assert_eq!(none.p99, Some(Duration::from_millis(2500)));
    // Over the whole run, its first seconds at the initial limit of 20 included.
    assert_eq!(adaptive.p99, Some(Duration::from_micros(99_328)));
    // Both serve the backend's 200 a second from the first call's end to the run's: the
    // refused clients send again within a millisecond, so the core is never idle for long.
    assert_eq!(adaptive.total().succeeded, 7_999);
    assert_eq!(none.total().succeeded, 7_999);
    assert_eq!(none.total().refused.limiter, 0);
    let text = builtin.verdict(&report).expect("both variants");
    let text = text.replace("\n  ", " ");
    assert!(text.contains("the optimum limit is 1 in flight"), "{text}");
    assert!(
        text.contains("with no limiter, 200 calls/s and 2500 ms"),
        "{text}"
    );
    assert!(text.contains("a 99th percentile of 99 ms"), "{text}");
}

#[test]
fn sharing_closed_the_default_meets_every_verdict() {
    every_verdict(Builtin::SharingClosed);
}

// What the bar asks is within reach in a closed loop: at one call in flight (a gate of 1
// here, the optimum held exactly), the refused clients sending again keep the core busy.
#[test]
fn sharing_closed_at_one_in_flight_the_clients_keep_the_core_busy_at_the_unloaded_latency() {
    let mut scenario = Builtin::SharingClosed
        .scenario()
        .expect("the built-in reads");
    scenario.variants.retain(|v| v.name == "none");
    scenario.variants[0].policies.gate = Some(crate::GatePolicy { limit: 1 });
    let run = scenario.run(|_| {}).runs.remove(0);
    let total = run.total();
    // 200 a second for 40 s, less the instants between a call's end and the next refused
    // client's return.
    assert!(total.succeeded >= 7_950, "{}", total.succeeded);
    assert_eq!(run.p99, Some(Duration::from_millis(5)));
}
