use core::time::Duration;

use super::overload::{inversions, settled};
use super::recovery::in_time;
use super::*;

#[test]
fn every_builtin_reads_and_is_found_by_its_name() {
    for builtin in Builtin::ALL {
        let scenario = builtin.scenario().unwrap();
        assert_eq!(scenario.name, builtin.name());
        assert_eq!(Builtin::from_name(builtin.name()), Ok(builtin));
    }
    assert_eq!(
        Builtin::from_name("nope"),
        Err(ScenarioError::Unknown("nope".into()))
    );
}

#[test]
fn a_verdict_needs_its_variants() {
    let report = Scenario::default().run(|_| {});
    assert_eq!(Builtin::Outage.verdict(&report), None);
    assert!(Builtin::Scale.verdict(&report).is_some());
}

/// The built-in's report, with only the variants `keep` names run.
fn run_of(builtin: Builtin, keep: &[&str]) -> Report {
    let mut scenario = builtin.scenario().unwrap();
    scenario
        .variants
        .retain(|v| keep.contains(&v.name.as_str()));
    assert_eq!(scenario.variants.len(), keep.len());
    scenario.run(|_| {})
}

// With the SRE breaker and the limiter, after a cold recovery: the backend holds no more
// than it completes inside the client's timeout, no more attempts time out than with the
// classic breaker, and at least as many calls succeed as with either breaker alone.
#[test]
fn cold_recovery_breaker_and_limiter_hold_what_the_backend_serves_in_time() {
    let report = run_of(Builtin::ColdRecovery, &["sre+limiter", "sre", "classic"]);
    let focus = report.focus;
    let both = report.run("sre+limiter").unwrap();
    let [b, s, c] = ["sre+limiter", "sre", "classic"].map(|n| report.run(n).unwrap().sum(focus));
    let bound = in_time(both, focus.from);
    assert_eq!(bound, 265, "50 workers at 4 × 47 ms in 1 s");
    assert!(b.peak_in_flight <= bound, "{} > {bound}", b.peak_in_flight);
    assert!(
        b.timed_out <= c.timed_out,
        "{} > {}",
        b.timed_out,
        c.timed_out
    );
    assert!(
        b.succeeded >= s.succeeded.max(c.succeeded),
        "{b:?} {s:?} {c:?}"
    );
    let verdict = Builtin::ColdRecovery.verdict(&report);
    assert_eq!(verdict, None, "the verdict needs the limiter alone too");
}

// After each shift the limit comes within 10 % of the capacity Little's law gives within
// 30 s and stays there, and the p99 latency stays under the client's timeout.
#[test]
fn latency_shift_the_limit_settles_near_littles_law_after_each_shift() {
    let report = run_of(Builtin::LatencyShift, &["vegas-probe"]);
    let run = report.run("vegas-probe").unwrap();
    let shifts = settled(run, 0.1);
    assert_eq!(shifts.len(), 2);
    for (at, after) in shifts {
        let after = after.unwrap_or_else(|| panic!("never settled after {at:?}"));
        assert!(after <= Duration::from_secs(30), "{after:?} after {at:?}");
    }
    let timeout = run.variant.client.timeout;
    assert!(
        run.rows
            .iter()
            .filter_map(|r| r.p99)
            .all(|p99| p99 < timeout)
    );
}

#[test]
fn latency_shift_vegas_as_netflix_runs_it_does_not_settle() {
    let report = run_of(Builtin::LatencyShift, &["vegas-no-probe"]);
    let shifts = settled(report.run("vegas-no-probe").unwrap(), 0.1);
    // The slower backend reads as a queue it cannot drain: the limit falls away.
    assert_eq!(shifts[0].1, None);
}

// At twice the capacity, no interval admits a sheddable attempt while refusing a
// critical or critical_plus one; without the limiter every interval does.
#[test]
fn priorities_never_admit_the_sheddable_while_refusing_the_critical() {
    let report = Builtin::Priorities.scenario().unwrap().run(|_| {});
    let focus = report.focus;
    let limiter = report.run("limiter").unwrap();
    assert_eq!(inversions(limiter, focus), []);
    let refused: u64 = limiter.rows.iter().map(|r| r.refused_by[0]).sum();
    assert!(refused > 0, "the overload refuses the sheddable");
    let none = report.run("none").unwrap();
    assert!(inversions(none, focus).len() > 100);
    let verdict = Builtin::Priorities.verdict(&report).unwrap();
    assert!(
        verdict.contains("limiter: ") && verdict.contains("0 intervals"),
        "{verdict}"
    );
}

#[test]
fn the_limiter_verdicts_refuse_a_run_that_ends_before_their_stretch() {
    let mut scenario = Builtin::Priorities.scenario().unwrap();
    for variant in &mut scenario.variants {
        variant.duration = Duration::from_secs(10);
    }
    let verdict = Builtin::Priorities.verdict(&scenario.run(|_| {})).unwrap();
    assert!(verdict.starts_with("No conclusion"), "{verdict}");
}
