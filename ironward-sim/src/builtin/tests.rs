use core::time::Duration;

use super::choice::{self, Choice, FOUR};
use super::overload::{inversions, settled};
use super::recovery::in_time;
use super::verdict::wrap;
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

// With the limiter in front of either breaker, after a cold recovery: the backend holds no
// more than it completes inside the client's timeout, fewer attempts time out and more calls
// succeed than with the same breaker alone, which fills the backend's queue.
#[test]
fn cold_recovery_the_limiter_holds_either_breaker_to_what_the_backend_serves_in_time() {
    let report = Builtin::ColdRecovery.scenario().unwrap().run(|_| {});
    let focus = report.focus;
    let runs = FOUR.map(|n| report.run(n).unwrap());
    let [s, c, sl, cl] = runs.map(|r| r.sum(focus));
    let bound = in_time(runs[0], focus.from);
    assert_eq!(bound, 265, "50 workers at 4 × 47 ms in 1 s");
    for (alone, limited) in [(s, sl), (c, cl)] {
        assert!(limited.peak_in_flight <= bound, "{limited:?}");
        assert!(alone.peak_in_flight > bound, "{alone:?}");
        assert!(
            limited.timed_out * 100 < alone.timed_out,
            "{limited:?} {alone:?}"
        );
        assert!(limited.succeeded > alone.succeeded, "{limited:?} {alone:?}");
    }
    let verdict = Builtin::ColdRecovery.verdict(&report).unwrap();
    assert!(
        verdict.contains("sre+limiter, classic+limiter held no more calls than that"),
        "{verdict}"
    );
    let mut three = report.clone();
    three.runs.retain(|r| r.variant.name != "classic+limiter");
    assert_eq!(
        Builtin::ColdRecovery.verdict(&three),
        None,
        "it needs all four"
    );
}

// The figures `ironward::_guide::breakers` quotes, from `ironward-sim run outage` (and
// `cold-recovery`, the same four runs): a change to either breaker, the limiter or the model
// shows here first, and the guide's table must follow it.
#[test]
fn outage_the_figures_the_breakers_guide_quotes() {
    let figures = |builtin: Builtin| {
        let report = builtin.scenario().unwrap().run(|_| {});
        let runs = FOUR.map(|n| report.run(n).unwrap());
        let outage = choice::outage(runs[0]).expect("an outage");
        assert_eq!((outage.from, outage.to), (s(60), s(120)));
        runs.map(|r| {
            let c = Choice::of(r, outage);
            let goodput = format!("{:.1}", c.goodput);
            (
                c.during,
                c.admits.map(|d| d.as_secs()),
                c.failed,
                c.refused,
                goodput,
            )
        })
    };
    let outage = figures(Builtin::Outage);
    let want = [
        (5_206, Some(52), 7_668, 11_253, "394.8"),
        (187, Some(37), 2_361, 13_735, "387.1"),
        (4_991, Some(14), 4, 7_170, "441.8"),
        (182, Some(2), 4, 6_450, "447.9"),
    ]
    .map(|(a, b, c, d, e)| (a, b, c, d, e.to_string()));
    assert_eq!(outage, want);
    assert_eq!(figures(Builtin::ColdRecovery), want);
}

fn s(secs: u64) -> Duration {
    Duration::from_secs(secs)
}

// A breaker still refusing in the run's last interval never admitted everything within it;
// one that refuses nothing after the recovery admitted everything at once.
#[test]
fn the_time_to_full_admission_is_never_when_the_breaker_refuses_to_the_end() {
    let mut scenario = Builtin::Outage.scenario().unwrap();
    for v in &mut scenario.variants {
        v.duration = s(150);
    }
    let report = scenario.run(|_| {});
    let outage = choice::outage(&report.runs[0]).unwrap();
    let admits = |name| Choice::of(report.run(name).unwrap(), outage).admits;
    assert_eq!(admits("sre"), None, "it refuses until 172 s");
    assert_eq!(admits("classic+limiter"), Some(s(2)));
    let text = Builtin::Outage.verdict(&report).unwrap();
    let row = text
        .lines()
        .find(|l| l.contains("breaker refusing none after"));
    let row = row.unwrap_or_else(|| panic!("{text}"));
    assert_eq!(row.matches("never").count(), 1, "{row}");
    assert!(row.ends_with(" 2 s"), "{row}");
}

#[test]
fn a_table_row_is_kept_whole_and_prose_is_wrapped() {
    let row = format!(
        "{:<34}{:>17}{:>17}{:>17}",
        "  attempts failed", "7,668", "2,361", "4"
    );
    let prose = "word ".repeat(30);
    let text = wrap(&format!("{row}\n{}", prose.trim()), 40);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], row);
    assert!(lines[1..].iter().all(|l| l.len() <= 40), "{text}");
    assert!(lines.len() > 3, "{text}");
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
    let summary = crate::summary(&report);
    assert!(summary.contains("refused by the limiter"), "{summary}");
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
