//! The scenario format as a user writes it.

use std::time::Duration;

use ironward::{Jitter, SRE};
use ironward_sim::{
    BreakerPolicy, Builtin, Column, LatencyModel, Scenario, ScenarioError, Steady, Traffic,
};

#[test]
fn every_number_has_a_default_so_an_empty_file_runs() {
    let report = Scenario::from_toml("").unwrap().run(|_| {});
    let total = report.runs[0].total();
    assert_eq!(report.runs[0].rows.len(), 60);
    assert!((5_500..6_500).contains(&total.offered), "{}", total.offered);
    assert_eq!(total.refused.total(), 0);
}

#[test]
fn a_full_scenario_reads_into_the_records_it_names() {
    let scenario = Scenario::from_toml(
        r#"
        name = "full"
        about = "every section"
        plot = ["cpu", "shedder_average"]
        focus = { from = "10s", to = "20s" }
        seed = 9
        duration = "1m30s"
        interval = "500ms"
        arrivals = [{ kind = "constant", rate = 10.0, start = "5s" }]
        [backend]
        latency = { kind = "exponential", mean = "5ms" }
        schedule = [{ start = "1s", end = "2s", failure = [0.0, 0.5], slowdown = 2.0 }]
        [client]
        timeout = "250ms"
        deadline = "2s"
        backoff = { jitter = "Decorrelated" }
        budget = { max_tokens = 5 }
        [policies]
        breaker = { kind = "sre", k = 2.0 }
        gate = { limit = 7 }
        "#,
    )
    .unwrap();
    assert_eq!(
        (scenario.name.as_str(), scenario.about.as_str()),
        ("full", "every section")
    );
    assert_eq!(scenario.plot, [Column::Cpu, Column::ShedderAverage]);
    let v = &scenario.variants[0];
    assert_eq!(
        (v.seed, v.duration, v.interval),
        (9, Duration::from_secs(90), Duration::from_millis(500))
    );
    assert_eq!(
        v.arrivals,
        [Traffic::Constant(Steady {
            rate: 10.0,
            start: Duration::from_secs(5),
            end: Duration::ZERO,
            criticality: ironward::Criticality::Critical,
        })]
    );
    assert_eq!(
        v.backend.latency,
        LatencyModel::Exponential {
            mean: Duration::from_millis(5)
        }
    );
    assert_eq!(v.backend.schedule[0].failure.map(|c| c.to), Some(0.5));
    assert_eq!(v.client.backoff.jitter, Jitter::Decorrelated);
    assert_eq!(
        v.client.budget.map(|b| (b.max_tokens, b.token_ratio)),
        Some((5, 0.1))
    );
    assert_eq!(
        v.policies.breaker,
        Some(BreakerPolicy::Sre(ironward::Sre { k: 2.0, ..SRE }))
    );
    assert_eq!(v.policies.gate.map(|g| g.limit), Some(7));
}

#[test]
fn a_scenario_that_does_not_read_says_where() {
    let err = Scenario::from_toml("duration = 60").unwrap_err();
    assert!(matches!(err, ScenarioError::Variant { .. }), "{err}");
    let err = Scenario::from_toml("duration = \"60 s\"").unwrap_err();
    assert!(err.to_string().contains("duration"), "{err}");
    let err = Scenario::from_toml("[backend\n").unwrap_err();
    assert!(matches!(err, ScenarioError::Format(_)), "{err}");
}

#[test]
fn a_deadline_bounds_a_call_and_its_retries() {
    // Every attempt fails; retries wait 1 s each, but the deadline is 1.5 s: one retry.
    let report = Scenario::from_toml(
        r#"
        duration = "10s"
        arrivals = [{ kind = "bursts", size = 1, every = "0s" }]
        backend = { failure = 1.0 }
        client = { deadline = "1500ms", backoff = { base = "1s", jitter = "Rigid", attempts = 10 } }
        "#,
    )
    .unwrap()
    .run(|_| {});
    let total = report.runs[0].total();
    assert_eq!((total.offered, total.retries, total.gave_up), (1, 1, 1));
}

#[test]
fn a_retry_budget_stops_retries_while_everything_fails() {
    let scenario = |budget: &str| {
        Scenario::from_toml(&format!(
            "duration = \"10s\"\nbackend = {{ failure = 1.0 }}\nclient = {{ {budget} }}"
        ))
        .unwrap()
        .run(|_| {})
        .runs[0]
            .total()
    };
    let (unbudgeted, budgeted) = (scenario(""), scenario("budget = {}"));
    // Three attempts each: about two retries a call.
    assert!(
        unbudgeted.retries > unbudgeted.offered,
        "{}",
        unbudgeted.retries
    );
    // gRPC A6: ten tokens, retries only above five, and no success ever gives one back.
    assert!(budgeted.retries <= 5, "{}", budgeted.retries);
}

#[test]
fn the_built_in_files_are_what_show_prints() {
    for builtin in Builtin::ALL {
        assert!(
            builtin
                .text()
                .contains(&format!("name = \"{}\"", builtin.name()))
        );
    }
}

#[test]
fn the_readme_scenario_reads_and_runs() {
    // The crate's own README, which is packaged with it (the workspace's README shows the
    // same scenario, and the unpublished benches crate checks the two agree).
    let readme = include_str!("../../README.md");
    let start = readme
        .find("```toml\n")
        .expect("a TOML example in the README")
        + "```toml\n".len();
    let end = start + readme[start..].find("```").expect("its end");
    let mut scenario = Scenario::from_toml(&readme[start..end]).unwrap();
    let names: Vec<&str> = scenario.variants.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, ["sre", "shed"]);
    for variant in &mut scenario.variants {
        variant.duration = Duration::from_secs(5);
    }
    assert_eq!(scenario.run(|_| {}).runs.len(), 2);
}
