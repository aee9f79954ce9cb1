//! Closed-loop clients against backends whose throughput is known: N clients with no think
//! time get N / d from a backend of latency d and room for all, and a processor-sharing
//! backend's capacity whatever N; refused clients are paced by their floor.

use crate::report::VariantRun;
use crate::scenario::Scenario;

/// The one variant of the scenario `text`, run.
fn run(text: &str) -> VariantRun {
    let scenario = Scenario::from_toml(text).expect("the scenario reads");
    scenario.run(|_| {}).runs.remove(0)
}

/// Successes a second over the rows from `from` (whole seconds) on.
fn throughput(run: &VariantRun, from: usize) -> f64 {
    let rows = &run.rows[from..];
    rows.iter().map(|r| r.succeeded).sum::<u64>() as f64 / rows.len() as f64
}

#[test]
fn n_clients_get_n_over_d_from_a_backend_with_room_for_all() {
    for clients in [1u64, 10, 300] {
        let run = run(&format!(
            r#"
            duration = "5s"
            arrivals = [{{ kind = "closed", clients = {clients} }}]
            backend = {{ workers = 1000, latency = {{ kind = "constant", value = "10ms" }} }}
            "#
        ));
        // 100 rounds a second, every client one call a round, in every whole second.
        for row in &run.rows[1..] {
            assert_eq!(row.succeeded, clients * 100, "{clients} clients");
            assert_eq!(row.offered, clients * 100, "{clients} clients");
        }
        assert!(run.rows.iter().all(|r| r.in_flight <= clients));
    }
}

#[test]
fn a_processor_sharing_backend_serves_its_capacity_whatever_the_clients() {
    for clients in [1, 5, 50, 500] {
        let run = run(&format!(
            r#"
            duration = "20s"
            arrivals = [{{ kind = "closed", clients = {clients} }}]
            [client]
            timeout = "0s"
            [backend]
            discipline = "sharing"
            workers = 1
            queue = 100000
            latency = {{ kind = "constant", value = "5ms" }}
            "#
        ));
        // 5 ms × the calls inside: 200 a second at any concurrency, once the first calls
        // (admitted one by one at the start, each slower than the one before) are through.
        let got = throughput(&run, 5);
        assert!((196.0..=200.0).contains(&got), "{clients} clients: {got}/s");
        assert!(run.rows.iter().all(|r| r.in_flight <= clients));
    }
}

#[test]
fn think_time_slows_each_client_to_one_call_per_latency_and_think() {
    // 20 clients, 10 ms calls and 40 ms of thought: 20 / 50 ms = 400 a second, fixed or
    // exponential (the mean).
    for think in [r#"{ fixed = "40ms" }"#, r#"{ exponential = "40ms" }"#] {
        let run = run(&format!(
            r#"
            duration = "30s"
            arrivals = [{{ kind = "closed", clients = 20, think = {think} }}]
            backend = {{ workers = 1000, latency = {{ kind = "constant", value = "10ms" }} }}
            "#
        ));
        let got = throughput(&run, 1);
        assert!((390.0..=410.0).contains(&got), "{think}: {got}/s");
    }
}

#[test]
fn refused_clients_with_no_think_time_send_again_after_the_floor_not_at_once() {
    // A gate of 1 in front of a backend of 100 ms, and no retries: of 50 clients, one is
    // inside and 49 are refused at once, over and over. Each sends at most one call a floor: 1 ms by default,
    // 10 ms here in the second run, so the run ends and its attempts are bounded.
    for (floor, per_client) in [("1ms", 1_000u64), ("10ms", 100)] {
        let run = run(&format!(
            r#"
            duration = "2s"
            arrivals = [{{ kind = "closed", clients = 50, floor = "{floor}" }}]
            backend = {{ workers = 1000, latency = {{ kind = "constant", value = "100ms" }} }}
            client.backoff = {{ attempts = 1 }}
            policies.gate = {{ limit = 1 }}
            "#
        ));
        let total = run.total();
        // Every whole floor, 49 refused clients send again; the one inside sends every 100 ms.
        assert!(
            total.offered <= 50 * per_client * 2,
            "{floor}: {}",
            total.offered
        );
        assert!(
            total.offered >= 49 * per_client * 2 * 9 / 10,
            "{floor}: {}",
            total.offered
        );
        assert_eq!(
            total.succeeded, 19,
            "{floor}: the gate's one at a time, 100 ms each"
        );
        assert_eq!(total.refused.gate + total.admitted, total.offered);
    }
}

#[test]
fn a_closed_source_sends_only_inside_its_stretch_and_leaves_nothing_unfinished() {
    let run = run(r#"
        duration = "10s"
        arrivals = [{ kind = "closed", clients = 4, start = "2s", end = "5s" }]
        backend = { workers = 10, latency = { kind = "constant", value = "100ms" } }
        "#);
    let offered: Vec<u64> = run.rows.iter().map(|r| r.offered).collect();
    assert_eq!(offered, [0, 0, 40, 40, 40, 0, 0, 0, 0, 0]);
    assert_eq!(run.unfinished, 0);
    assert_eq!(run.total().succeeded, 120);
}

#[test]
fn the_same_seed_gives_the_same_closed_loop_run_and_another_seed_another() {
    let text = |seed: u64| {
        format!(
            r#"
            seed = {seed}
            duration = "5s"
            arrivals = [{{ kind = "closed", clients = 30, think = {{ exponential = "20ms" }} }}]
            "#
        )
    };
    let (a, b, c) = (run(&text(1)), run(&text(1)), run(&text(2)));
    assert_eq!(a.rows, b.rows);
    assert_ne!(a.rows, c.rows);
}
