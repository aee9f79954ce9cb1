//! The convergence verdicts, two tests per scenario: which verdicts each limiter meets
//! today (`little` rows are `ironward::limit::Little`, a candidate default), asserted (so a
//! change to any of them shows), and the bar set for
//! ironward's default, from any start in its bounds, ignored until the default meets it
//! (each ignore says by how much it misses today).

use super::Builtin;
use super::converge::Convergence;

/// Each limiter's figures in `builtin`'s run, by variant name.
pub(super) fn judge(builtin: Builtin) -> Vec<(String, Convergence)> {
    let report = builtin.scenario().expect("the built-in reads").run(|_| {});
    report
        .runs
        .iter()
        .map(|r| (r.variant.name.clone(), Convergence::of(r)))
        .collect()
}

/// Y for a verdict met, n for one missed, in [`Convergence::met`]'s order: within 2× in
/// 10 s, within ±25 % after 30 s, p99 at most twice the unloaded, goodput at least 90 %,
/// no runaway.
fn pattern(met: [bool; 5]) -> String {
    met.iter().map(|&m| if m { 'Y' } else { 'n' }).collect()
}

/// Asserts that each variant of `builtin` meets today the verdicts `want` says.
pub(super) fn today(builtin: Builtin, want: &[(&str, &str)]) {
    let got = judge(builtin);
    assert_eq!(
        got.len(),
        want.len(),
        "{}: a row per variant",
        builtin.name()
    );
    for ((name, figures), (wanted, met)) in got.iter().zip(want) {
        assert_eq!(name, wanted);
        assert_eq!(
            pattern(figures.met()),
            *met,
            "{} {name}: {figures:?}",
            builtin.name()
        );
    }
}

/// The bar: ironward's default, from its initial limit and from either end of its
/// bounds, meets every verdict.
pub(super) fn every_verdict(builtin: Builtin) {
    for (name, figures) in judge(builtin) {
        if name.starts_with("adaptive") {
            assert!(
                figures.met().iter().all(|&m| m),
                "{} {name}: {figures:?}",
                builtin.name()
            );
        }
    }
}

const NETFLIX: [&str; 3] = ["vegas", "gradient2", "aimd"];

#[test]
fn sharing_today_no_limiter_comes_near_an_optimum_of_one() {
    today(
        Builtin::Sharing,
        &[
            ("adaptive", "nnnYY"),
            ("adaptive-from-1", "nnnYY"),
            ("adaptive-from-1000", "nnnnY"),
            ("little", "nnnYY"),
            ("little-from-1", "YnYnY"),
            ("little-from-1000", "YnYnY"),
            (NETFLIX[0], "nnnYY"),
            (NETFLIX[1], "nnnYn"),
            (NETFLIX[2], "nnnYn"),
        ],
    );
}

#[test]
#[ignore = "the default limiter does not converge yet: against an optimum of 1, its limit is \
            11 after 40 s from 20 (error 1,100 %, p99 12× the unloaded 5 ms), 7 from 1 \
            (600 %), 935 from 1000 (no goodput)"]
fn sharing_the_default_meets_every_verdict_from_any_start() {
    every_verdict(Builtin::Sharing);
}

#[test]
fn mmc_today_the_default_from_its_initial_limit_meets_every_verdict() {
    today(
        Builtin::Mmc,
        &[
            ("adaptive", "YYYYY"),
            ("adaptive-from-1", "YnYYY"),
            ("adaptive-from-1000", "nnnnY"),
            ("little", "YnYYY"),
            ("little-from-1", "nnYnY"),
            ("little-from-1000", "nYYnY"),
            (NETFLIX[0], "YnYYY"),
            (NETFLIX[1], "YnYYY"),
            (NETFLIX[2], "nnYYn"),
        ],
    );
}

#[test]
#[ignore = "the default limiter does not converge yet: against an optimum of 20, from 1 it \
            overshoots to 28 (45 % error after 30 s), from 1000 it is 935 after 40 s (no \
            goodput)"]
fn mmc_the_default_meets_every_verdict_from_any_start() {
    every_verdict(Builtin::Mmc);
}

#[test]
fn capacity_halves_today_no_limiter_follows_the_cores() {
    today(
        Builtin::CapacityHalves,
        &[
            ("adaptive", "nnYYY"),
            ("adaptive-from-1", "nnYYY"),
            ("adaptive-from-1000", "nnnnY"),
            ("little", "nYYYY"),
            ("little-from-1", "YYYYY"),
            ("little-from-1000", "nYYYY"),
            (NETFLIX[0], "nnnYY"),
            (NETFLIX[1], "nnnYn"),
            (NETFLIX[2], "nnnYn"),
        ],
    );
}

#[test]
#[ignore = "the default limiter does not converge yet: against an optimum of 10, then 5 from \
            40 s, then 10 from 80 s, it is never within 2× after a shift from 20 or from 1 \
            (120 % worst error, 13 at the end), and 803 after 120 s from 1000"]
fn capacity_halves_the_default_meets_every_verdict_from_any_start() {
    every_verdict(Builtin::CapacityHalves);
}

#[test]
fn bimodal_today_the_default_comes_near_but_settles_high() {
    today(
        Builtin::Bimodal,
        &[
            ("adaptive", "YnYYY"),
            ("adaptive-from-1", "YnYYY"),
            ("adaptive-from-1000", "nnnnY"),
            ("little", "YYYYY"),
            ("little-from-1", "YYYnY"),
            ("little-from-1000", "nnYYY"),
            (NETFLIX[0], "YnYYY"),
            (NETFLIX[1], "nnYYn"),
            (NETFLIX[2], "nnnYn"),
        ],
    );
}

#[test]
#[ignore = "the default limiter does not converge yet: against an optimum of 10, 40 % above \
            it after 30 s from 20 (50 % from 1), and 935 after 40 s from 1000 (no goodput)"]
fn bimodal_the_default_meets_every_verdict_from_any_start() {
    every_verdict(Builtin::Bimodal);
}

#[test]
fn drops_today_the_default_from_one_alone_comes_near_in_time() {
    today(
        Builtin::Drops,
        &[
            ("adaptive", "nnYYY"),
            ("adaptive-from-1", "YnYYY"),
            ("adaptive-from-1000", "nnnYY"),
            ("little", "nYYYY"),
            ("little-from-1", "YYYYY"),
            ("little-from-1000", "nnnYY"),
            (NETFLIX[0], "nnnYY"),
            (NETFLIX[1], "nnnYn"),
            (NETFLIX[2], "nnnYn"),
        ],
    );
}

#[test]
#[ignore = "the default limiter does not converge yet: against an optimum of 10, from 20 it \
            takes 17 s to within 2× and is 60 % above after 30 s (30 % from 1), and 929 after \
            40 s from 1000 (p99 6× the unloaded)"]
fn drops_the_default_meets_every_verdict_from_any_start() {
    every_verdict(Builtin::Drops);
}

#[test]
fn runaway_today_gradient2_as_tripwire_runs_it_runs_away_and_the_default_does_not() {
    today(
        Builtin::Runaway,
        &[
            ("adaptive", "nnYYY"),
            ("adaptive-from-1", "nnYnY"),
            ("adaptive-from-1000", "nnnYY"),
            ("little", "nnYYY"),
            ("little-from-1", "nnYYY"),
            ("little-from-1000", "nnYYY"),
            (NETFLIX[0], "nnYYY"),
            (NETFLIX[1], "nnnYY"),
            (NETFLIX[2], "nnnYn"),
            ("gradient2-tripwire", "nnnYn"),
        ],
    );
}

#[test]
#[ignore = "the default limiter does not converge yet: against Tripwire's optimum of 12, from \
            20 it takes 114 s to within 2× (150 % worst error after 30 s), from 1 it stays at 1 \
            (8 % goodput), from 1000 it stays at 1000"]
fn runaway_the_default_meets_every_verdict_from_any_start() {
    every_verdict(Builtin::Runaway);
}

// `run sharing --duration 20s` ends before the 30 s the verdicts read from.
#[test]
fn a_run_cut_before_the_settled_stretch_concludes_nothing() {
    let mut scenario = Builtin::Sharing.scenario().expect("the built-in reads");
    for variant in &mut scenario.variants {
        variant.duration = core::time::Duration::from_secs(20);
    }
    let text = Builtin::Sharing
        .verdict(&scenario.run(|_| {}))
        .expect("limiters");
    assert!(text.starts_with("No conclusion"), "{text}");
    assert!(!text.contains("verdicts met"), "{text}");
}

#[test]
fn the_verdict_prints_the_optimum_and_a_row_per_figure() {
    let report = Builtin::Mmc
        .scenario()
        .expect("the built-in reads")
        .run(|_| {});
    let text = Builtin::Mmc.verdict(&report).expect("limiters");
    assert!(text.contains("the optimum limit is 20 in flight"), "{text}");
    assert!(text.contains("serves 400 calls/s"), "{text}");
    for row in [
        "within 2× after",
        "worst error from 30 s",
        "runaway",
        "verdicts met",
    ] {
        assert!(text.contains(row), "{row}: {text}");
    }
    assert!(text.contains("Every verdict met by: adaptive."), "{text}");
}
