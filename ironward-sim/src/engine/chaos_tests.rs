//! The chaos point: attempt `i` gets the core's decision for `chaos::draw(seed, i)`, each
//! fault does to the counts what it says, and a policy off or in shadow injects nothing.

use core::time::Duration;

use ironward::chaos::{self, Chaos, Delay, Fault, Injection, Injector};

use crate::report::{Injections, Sum, VariantRun};
use crate::scenario::{Scenario, Variant};

/// The one variant of the scenario `text`.
fn variant(text: &str) -> Variant {
    Scenario::from_toml(text)
        .expect("the scenario reads")
        .variants
        .remove(0)
}

/// The one variant of the scenario `text`, run.
fn run(text: &str) -> VariantRun {
    variant(text).run(|_| {})
}

/// 20 s of 100 calls a second (none in the last 2 s) to a backend of 10 ms with room for
/// all, a client of `client`, and `chaos` as the chaos policy's faults (empty for none).
fn scenario(client: &str, chaos: &str) -> String {
    let chaos = match chaos {
        "" => String::new(),
        faults => format!("policies.chaos = {{ seed = 7, enabled = true, faults = {faults} }}"),
    };
    format!(
        r#"
        duration = "20s"
        arrivals = [{{ kind = "constant", rate = 100.0, end = "18s" }}]
        backend = {{ workers = 100, latency = {{ kind = "constant", value = "10ms" }} }}
        client = {client}
        {chaos}
        "#
    )
}

const MIXED: &str = r#"[
    { fault = "error", rate = 0.1 },
    { fault = { latency = { uniform = { low = "50ms", high = "2s" } } }, rate = 0.1 },
    { fault = "abort", rate = 0.05 },
    { fault = "replace", rate = 0.1 },
]"#;

/// The mixed policy as the core's record, written out here rather than read from the TOML.
fn mixed() -> Injector {
    let fault = |fault, rate| Injection { fault, rate };
    let latency = Fault::Latency(Delay::Uniform {
        low: Duration::from_millis(50),
        high: Duration::from_secs(2),
    });
    Injector::new(Chaos {
        enabled: true,
        shadow: false,
        faults: vec![
            fault(Fault::Error, 0.1),
            fault(latency, 0.1),
            fault(Fault::Abort, 0.05),
            fault(Fault::Replace, 0.1),
        ],
    })
    .unwrap()
}

#[test]
fn attempt_i_gets_the_fault_the_core_decides_for_draw_7_i() {
    let text = format!(
        "{}\npolicies.breaker = {{ kind = \"sre\" }}",
        scenario("{ backoff = { attempts = 3 } }", MIXED)
    );
    let v = variant(&text);
    let engine = v.simulate(|_| {});
    let log = engine.chaos.as_ref().expect("chaos is on").log.clone();
    let total = engine.finish(&v).total();
    assert!(
        total.retries > 500,
        "retries reach the chaos point too: {total:?}"
    );
    // Every attempt the client's breaker let through got the next number, from 0.
    let reached = total.attempts() - total.refused.breaker - total.refused.limiter;
    assert_eq!(log.len() as u64, reached);
    let injector = mixed();
    for fault in ["error", "latency", "abort", "replace"] {
        let engine_got: Vec<u64> = log
            .iter()
            .filter(|(_, got)| got.is_some_and(|g| g.fault.label() == fault))
            .map(|(i, _)| *i)
            .collect();
        let core_says: Vec<u64> = (0..reached)
            .filter(|&i| {
                injector
                    .decide(chaos::draw(7, i))
                    .is_some_and(|g| g.fault.label() == fault)
            })
            .collect();
        assert!(!core_says.is_empty(), "{fault}");
        assert_eq!(engine_got, core_says, "{fault}");
    }
    for (at, (i, got)) in log.iter().enumerate() {
        assert_eq!(*i, at as u64);
        assert_eq!(*got, injector.decide(chaos::draw(7, *i)), "attempt {i}");
    }
    // And the columns count what the log says was injected.
    let count = |label: &str| {
        let of =
            |g: &Option<ironward::chaos::Injected>| g.is_some_and(|g| g.fault.label() == label);
        log.iter().filter(|(_, g)| of(g)).count() as u64
    };
    let i = total.injected;
    let counted = [i.error, i.latency, i.abort, i.replace];
    let logged = ["error", "latency", "abort", "replace"].map(count);
    assert_eq!(counted, logged);
}

/// The totals of a run with one fault at `rate` and the client `client`.
fn only(fault: &str, rate: f64, client: &str) -> (Sum, VariantRun) {
    let run = run(&scenario(
        client,
        &format!("[{{ fault = {fault}, rate = {rate} }}]"),
    ));
    (run.total(), run)
}

#[test]
fn an_error_fails_the_attempt_without_reaching_the_backend() {
    let (all, _) = only("\"error\"", 1.0, "{ backoff = { attempts = 3 } }");
    assert_eq!(all.offered, 1_800);
    assert_eq!(
        all.injected.error,
        3 * 1_800,
        "every attempt, retries included"
    );
    assert_eq!((all.admitted, all.failed, all.timed_out), (0, 0, 0));
    assert_eq!((all.succeeded, all.gave_up), (0, 1_800));
    let (some, _) = only("\"error\"", 0.3, "{ backoff = { attempts = 3 } }");
    assert!(some.injected.error > 300, "{some:?}");
    assert_eq!(some.admitted + some.injected.error, some.attempts());
    assert_eq!(some.failed, 0, "the backend itself never failed");
}

#[test]
fn a_replaced_answer_is_served_by_the_backend_and_fails_the_attempt() {
    let (s, _) = only("\"replace\"", 1.0, "{ backoff = { attempts = 2 } }");
    assert_eq!(s.injected.replace, 2 * 1_800);
    assert_eq!(s.admitted, s.attempts(), "each reached the backend");
    assert_eq!(s.failed, 0, "and the backend served each");
    assert_eq!((s.succeeded, s.gave_up, s.timed_out), (0, 1_800, 0));
}

#[test]
fn an_aborted_attempt_ends_at_the_clients_timeout_or_never() {
    let (s, run) = only(
        "\"abort\"",
        1.0,
        "{ timeout = \"1s\", backoff = { attempts = 1 } }",
    );
    assert_eq!(s.injected.abort, 1_800);
    assert_eq!(s.timed_out, 1_800, "each times out");
    assert_eq!((s.admitted, s.succeeded, run.unfinished), (0, 0, 0));
    let last = Duration::from_millis(17_990);
    assert_eq!(
        run.last_end,
        Some(last + Duration::from_secs(1)),
        "1 s after the last"
    );
    // With no timeout nothing ends it: every call is under way when the run ends.
    let (s, run) = only(
        "\"abort\"",
        1.0,
        "{ timeout = \"0s\", backoff = { attempts = 1 } }",
    );
    assert_eq!((s.timed_out, s.gave_up, s.admitted), (0, 0, 0));
    assert_eq!(run.unfinished, 1_800);
    assert_eq!(run.last_end, None);
}

#[test]
fn a_latency_delays_the_attempt_inside_the_clients_timeout() {
    let fixed = |d: &str| format!("{{ latency = {{ fixed = \"{d}\" }} }}");
    let (s, run) = only(&fixed("200ms"), 1.0, "{ timeout = \"1s\" }");
    assert_eq!(s.injected.latency, 1_800);
    assert_eq!((s.admitted, s.succeeded, s.timed_out), (1_800, 1_800, 0));
    assert_eq!(
        run.p50.map(|p| p.as_millis()),
        Some(210),
        "200 ms, then 10 ms served"
    );
    // A delay past the timeout: the client gives up first, and nothing is sent.
    let (s, _) = only(
        &fixed("2s"),
        1.0,
        "{ timeout = \"1s\", backoff = { attempts = 1 } }",
    );
    assert_eq!((s.admitted, s.timed_out, s.succeeded), (0, 1_800, 0));
    // The timeout runs from the attempt's start: 995 ms of delay and 10 ms of service is
    // past 1 s, though each alone is not.
    let (s, _) = only(
        &fixed("995ms"),
        1.0,
        "{ timeout = \"1s\", backoff = { attempts = 1 } }",
    );
    assert_eq!((s.admitted, s.timed_out, s.succeeded), (1_800, 1_800, 0));
}

#[test]
fn a_policy_off_or_in_shadow_injects_nothing() {
    let client = "{ backoff = { attempts = 3 } }";
    // A backend that fails a fifth of its calls, for retries to follow.
    let base = scenario(client, "").replace("latency =", "failure = 0.2, latency =");
    let with = |keys: &str| {
        let text = format!("{base}policies.chaos = {{ seed = 7, {keys}faults = {MIXED} }}\n");
        run(&text)
    };
    let none = run(&base);
    let off = with("");
    assert_eq!(off.rows, none.rows, "off: not even counted");
    let disabled = with("enabled = false, ");
    assert_eq!(disabled.rows, none.rows);
    let shadow = with("enabled = true, shadow = true, ");
    let total = shadow.total();
    assert_eq!(
        Injections {
            shadowed: 0,
            ..total.injected
        },
        Injections::default(),
        "nothing injected"
    );
    // Every fault the policy decides is counted as shadowed, on the same attempts.
    let injector = mixed();
    let decided = (0..total.attempts())
        .filter(|&i| injector.decide(chaos::draw(7, i)).is_some())
        .count() as u64;
    assert_eq!(total.injected.shadowed, decided);
    assert!(decided > 500, "{decided}");
    let unshadowed: Vec<_> = shadow
        .rows
        .iter()
        .map(|row| {
            let mut row = row.clone();
            row.injected = Injections::default();
            row
        })
        .collect();
    assert_eq!(unshadowed, none.rows, "and the run is as without chaos");
}
