//! Differential tests: the estimator and the sampler against transliterations of Netflix
//! concurrency-limits' classes (in `limit_reference/netflix.rs`, test code only), fed the
//! same long pseudo-random sequences. The estimator must report the reference's limit after
//! every update, and the sampler must close the same windows with the same samples, for the
//! reference presets, the constants of Netflix's own unit tests, and random constants.
//!
//! The sequences stay where the reference is defined and the documented differences do not
//! apply: Java `int`s that do not wrap, initial limits and minimums of at least 1,
//! Gradient2's `min` no greater than its `max`, and a Gradient2 long average that never
//! reaches zero (a first latency over zero, and a `long_window` of 2 or more, since one of 1
//! makes the average the latest latency), where the reference's gradient would be 0 / 0. Zero
//! latencies are kept for Aimd and Vegas (the reference throws on them in Vegas, which the
//! estimator reads as ignoring the sample), and latencies of a few nanoseconds or past a
//! day are mixed in with the ordinary ones.

#[path = "limit_reference/netflix.rs"]
mod netflix;
#[path = "limit_reference/windowed.rs"]
mod windowed;

use core::time::Duration;

use ironward::limit::{
    AIMD, Aimd, Algorithm, Decrease, Estimator, GRADIENT2, Gradient2, Sample, Scale, VEGAS, Vegas,
};
use netflix::{
    AimdLimit, DoubleUnaryOperator, ExpAvgMeasurement, Gradient2Limit, IntUnaryOperator, Limit,
    VegasLimit, log10_root_int, square_root,
};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

// ---------------------------------------------------------------------------------------
// The oracles, built from the same constants

fn step_fn(step: Scale) -> IntUnaryOperator {
    match step {
        Scale::Fixed(n) => Box::new(move |_| n as i32),
        Scale::Log10(n) => Box::new(move |limit| (n as i32).wrapping_mul(log10_root_int(limit))),
        Scale::Sqrt(n) => Box::new(move |limit| square_root(n as i32, limit)),
    }
}

fn increase_fn(step: Scale) -> DoubleUnaryOperator {
    let f = step_fn(step);
    Box::new(move |limit| limit + f64::from(f(limit as i32)))
}

fn decrease_fn(decrease: Decrease) -> DoubleUnaryOperator {
    match decrease {
        Decrease::Step(step) => {
            let f = step_fn(step);
            Box::new(move |limit| limit - f64::from(f(limit as i32)))
        }
        Decrease::Ratio(ratio) => Box::new(move |limit| limit * ratio),
    }
}

fn aimd_oracle(aimd: &Aimd) -> AimdLimit {
    AimdLimit {
        limit: aimd.initial as i32,
        backoff_ratio: aimd.backoff,
        timeout: aimd.timeout.as_nanos() as i64,
        min_limit: aimd.min as i32,
        max_limit: aimd.max as i32,
    }
}

fn vegas_oracle(vegas: &Vegas) -> VegasLimit {
    let mut limit = VegasLimit {
        limit: vegas.initial as i32,
        estimated_limit: f64::from(vegas.initial),
        rtt_noload: 0,
        max_limit: vegas.max as i32,
        smoothing: vegas.smoothing,
        alpha_func: step_fn(vegas.alpha),
        beta_func: step_fn(vegas.beta),
        threshold_func: step_fn(vegas.threshold),
        increase_func: increase_fn(vegas.increase),
        decrease_func: decrease_fn(vegas.decrease),
        probe_multiplier: vegas.probe as i32,
        probe_count: 0,
        probe_jitter: 0.0,
        random: vegas.jitter,
    };
    limit.reset_probe_jitter();
    limit
}

fn gradient2_oracle(gradient: &Gradient2) -> Gradient2Limit {
    Gradient2Limit {
        limit: gradient.initial as i32,
        estimated_limit: f64::from(gradient.initial),
        last_rtt: 0,
        long_rtt: ExpAvgMeasurement::new(gradient.long_window as i32, 10),
        max_limit: gradient.max as i32,
        min_limit: gradient.min as i32,
        queue_size: step_fn(gradient.queue),
        smoothing: gradient.smoothing,
        tolerance: gradient.tolerance,
    }
}

fn oracle(algorithm: &Algorithm) -> Box<dyn Limit> {
    match algorithm {
        Algorithm::Aimd(aimd) => Box::new(aimd_oracle(aimd)),
        Algorithm::Vegas(vegas) => Box::new(vegas_oracle(vegas)),
        Algorithm::Gradient2(gradient) => Box::new(gradient2_oracle(gradient)),
        Algorithm::Little(_) | Algorithm::Failsafe(_) => {
            panic!("only Netflix's algorithms have this reference")
        }
    }
}

// ---------------------------------------------------------------------------------------
// Samples

/// One window's latency, relative to the run's base latency.
#[derive(Debug, Clone, Copy)]
enum Rtt {
    /// The base times this many hundredths: queueing, or none.
    Near(u32),
    Zero,
    /// A few nanoseconds.
    Tiny(u8),
    /// Past a day, up to 2⁶² ns.
    Huge(u64),
}

/// The calls in flight of one window, relative to the limit now.
#[derive(Debug, Clone, Copy)]
enum Flight {
    /// The limit times this many 8192ths: 0 to twice the limit.
    Share(u16),
    Zero,
    /// 2³⁰ − 1, the most a Java `int` doubles without wrapping.
    Most,
}

#[derive(Debug, Clone, Copy)]
struct Draw {
    rtt: Rtt,
    flight: Flight,
    dropped: bool,
}

fn draw() -> impl Strategy<Value = Draw> {
    let rtt = prop_oneof![
        16 => (50..=400_u32).prop_map(Rtt::Near),
        1 => Just(Rtt::Zero),
        1 => any::<u8>().prop_map(Rtt::Tiny),
        1 => (86_400_000_000_000..=1_u64 << 62).prop_map(Rtt::Huge),
    ];
    let flight = prop_oneof![
        12 => (0..=16_384_u16).prop_map(Flight::Share),
        1 => Just(Flight::Zero),
        1 => Just(Flight::Most),
    ];
    (rtt, flight, prop::bool::weighted(0.08)).prop_map(|(rtt, flight, dropped)| Draw {
        rtt,
        flight,
        dropped,
    })
}

fn draws() -> impl Strategy<Value = Vec<Draw>> {
    prop::collection::vec(draw(), 1..600)
}

/// Nanoseconds of a window's latency around `base`.
fn rtt_of(rtt: Rtt, base: u64) -> u64 {
    match rtt {
        Rtt::Near(hundredths) => base * u64::from(hundredths) / 100,
        Rtt::Zero => 0,
        Rtt::Tiny(n) => u64::from(n),
        Rtt::Huge(n) => n,
    }
}

fn in_flight_of(flight: Flight, limit: u32) -> u32 {
    match flight {
        Flight::Share(share) => (u64::from(limit) * u64::from(share) / 8192) as u32,
        Flight::Zero => 0,
        Flight::Most => (1 << 30) - 1,
    }
}

/// Feeds the same samples to the estimator and the oracle, and checks the limit after each.
fn agrees(algorithm: Algorithm, base: u64, draws: &[Draw]) -> Result<(), TestCaseError> {
    let mut estimator = Estimator::new(algorithm);
    let mut oracle = oracle(&algorithm);
    prop_assert_eq!(i64::from(estimator.limit()), i64::from(oracle.get_limit()));
    for (i, draw) in draws.iter().enumerate() {
        let mut rtt = rtt_of(draw.rtt, base);
        if i == 0 && matches!(algorithm, Algorithm::Gradient2(_)) {
            // Zero latencies from the first make the reference's Gradient2 NaN for good.
            rtt = rtt.max(1);
        }
        let in_flight = in_flight_of(draw.flight, estimator.limit());
        let sample = Sample {
            rtt: Duration::from_nanos(rtt),
            in_flight,
            dropped: draw.dropped,
        };
        let limit = estimator.update(sample);
        // A throw (Vegas' zero latency) leaves the reference as it was.
        let _ = oracle.on_sample(0, rtt as i64, in_flight as i32, draw.dropped);
        prop_assert_eq!(
            i64::from(limit),
            i64::from(oracle.get_limit()),
            "update {} of {:?} with {:?}",
            i,
            algorithm,
            sample
        );
        prop_assert_eq!(limit, estimator.limit());
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Constants

fn base() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(10_000_000_u64),
        1_000..=100_000_000_u64,
        100_000..=1_000_000_u64
    ]
}

fn step() -> impl Strategy<Value = Scale> {
    prop_oneof![
        (0..=12_u32).prop_map(Scale::Fixed),
        (0..=7_u32).prop_map(Scale::Log10),
        (0..=12_u32).prop_map(Scale::Sqrt),
    ]
}

fn aimd() -> impl Strategy<Value = Aimd> {
    (
        1..=500_u32,
        1..=300_u32,
        1..=500_u32,
        0.5..1.0_f64,
        0..=400_000_000_u64,
    )
        .prop_map(|(initial, min, max, backoff, timeout)| Aimd {
            initial,
            min,
            max,
            backoff,
            timeout: Duration::from_nanos(timeout),
        })
}

fn vegas() -> impl Strategy<Value = Vegas> {
    let decrease = prop_oneof![
        step().prop_map(Decrease::Step),
        (0.0..=1.0_f64).prop_map(Decrease::Ratio),
    ];
    (
        (1..=2000_u32, 1..=3000_u32, 0.0..=1.0_f64),
        (step(), step(), step(), step(), decrease),
        (0..=40_u32, any::<u64>()),
    )
        .prop_map(
            |(
                (initial, max, smoothing),
                (alpha, beta, threshold, increase, decrease),
                (probe, jitter),
            )| Vegas {
                initial,
                min: 1,
                max,
                smoothing,
                alpha,
                beta,
                threshold,
                increase,
                decrease,
                probe,
                jitter,
            },
        )
}

fn gradient2() -> impl Strategy<Value = Gradient2> {
    let tolerance = prop_oneof![4 => 1.0..=3.0_f64, 1 => Just(f64::INFINITY)];
    (
        (1..=500_u32, 1..=300_u32, 0..=300_u32),
        (0.0..=1.0_f64, step(), 2..=1000_u32, tolerance),
    )
        .prop_map(
            |((initial, min, above), (smoothing, queue, long_window, tolerance))| Gradient2 {
                initial,
                min,
                max: min + above,
                smoothing,
                queue,
                long_window,
                tolerance,
            },
        )
}

/// Netflix `VegasLimitTest.create`'s constants.
const VEGAS_TEST: Vegas = Vegas {
    alpha: Scale::Fixed(3),
    beta: Scale::Fixed(6),
    smoothing: 1.0,
    initial: 10,
    max: 20,
    ..VEGAS
};

/// Netflix `VegasLimitTest.decreaseSmoothing`'s constants.
const VEGAS_HALVING: Vegas = Vegas {
    decrease: Decrease::Ratio(0.5),
    smoothing: 0.5,
    initial: 100,
    max: 200,
    ..VEGAS
};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn aimd_agrees_with_the_reference_at_its_defaults(base in base(), draws in draws()) {
        agrees(Algorithm::Aimd(AIMD), base, &draws)?;
    }

    #[test]
    fn aimd_agrees_with_the_reference_at_any_constants(
        aimd in aimd(), base in base(), draws in draws(),
    ) {
        agrees(Algorithm::Aimd(aimd), base, &draws)?;
    }

    #[test]
    fn vegas_agrees_with_the_reference_at_its_defaults(
        jitter in any::<u64>(), base in base(), draws in draws(),
    ) {
        agrees(Algorithm::Vegas(Vegas { jitter, ..VEGAS }), base, &draws)?;
    }

    #[test]
    fn vegas_agrees_with_the_reference_at_the_constants_of_its_tests(
        halving in any::<bool>(), base in base(), draws in draws(),
    ) {
        let vegas = if halving { VEGAS_HALVING } else { VEGAS_TEST };
        agrees(Algorithm::Vegas(vegas), base, &draws)?;
    }

    #[test]
    fn vegas_agrees_with_the_reference_at_any_constants(
        vegas in vegas(), base in base(), draws in draws(),
    ) {
        agrees(Algorithm::Vegas(vegas), base, &draws)?;
    }

    #[test]
    fn gradient2_agrees_with_the_reference_at_its_defaults(base in base(), draws in draws()) {
        agrees(Algorithm::Gradient2(GRADIENT2), base, &draws)?;
    }

    #[test]
    fn gradient2_agrees_with_the_reference_at_any_constants(
        gradient in gradient2(), base in base(), draws in draws(),
    ) {
        agrees(Algorithm::Gradient2(gradient), base, &draws)?;
    }
}

/// A long deterministic run per algorithm at its defaults: 200 000 windows through load
/// that comes and goes, agreeing on every update, and moving the limit both ways (so that
/// the agreement is not that of two limits standing still).
#[test]
fn long_runs_at_the_defaults_agree_on_every_update_and_move_both_ways() {
    // SplitMix64 from a fixed start: the same run every time.
    let mut dice = ironward::SplitMix64::new(0x5EED_u64.wrapping_mul(ironward::SplitMix64::GAMMA));
    let mut next = move || dice.next_u64();
    let algorithms = [
        Algorithm::Aimd(AIMD),
        Algorithm::Vegas(VEGAS),
        Algorithm::Gradient2(GRADIENT2),
    ];
    for algorithm in algorithms {
        let mut estimator = Estimator::new(algorithm);
        let mut oracle = oracle(&algorithm);
        let (mut ups, mut downs) = (0, 0);
        for i in 0..200_000_u64 {
            // Load in waves of 5000 windows: latency climbs with the wave and jumps fourfold
            // for its last fifth, drops come at its crest, and calls in flight follow the
            // limit.
            let wave = (i % 5000) as f64 / 5000.0;
            let noise = (next() % 1000) as f64 / 1000.0;
            let surge = if wave > 0.8 { 4.0 } else { 1.0 };
            let rtt = (10_000_000.0 * surge * (1.0 + wave + noise)) as u64;
            let dropped = wave > 0.9 && next() % 8 == 0;
            let in_flight = (f64::from(estimator.limit()) * (0.3 + 0.9 * noise)) as u32;
            let before = estimator.limit();
            let sample = Sample {
                rtt: Duration::from_nanos(rtt),
                in_flight,
                dropped,
            };
            let limit = estimator.update(sample);
            oracle
                .on_sample(0, rtt as i64, in_flight as i32, dropped)
                .expect("a latency over zero");
            assert_eq!(
                i64::from(limit),
                i64::from(oracle.get_limit()),
                "{algorithm:?} at {i}"
            );
            ups += usize::from(limit > before);
            downs += usize::from(limit < before);
        }
        assert!(
            ups > 100 && downs > 100,
            "{algorithm:?}: {ups} up, {downs} down"
        );
    }
}

#[test]
fn the_presets_are_the_reference_defaults() {
    // Netflix's builders' defaults, as the oracles above are built from them.
    let aimd = aimd_oracle(&AIMD);
    assert_eq!(
        (
            aimd.limit,
            aimd.min_limit,
            aimd.max_limit,
            aimd.backoff_ratio,
            aimd.timeout
        ),
        (20, 20, 200, 0.9, 5_000_000_000)
    );
    let vegas = vegas_oracle(&VEGAS);
    assert_eq!(
        (
            vegas.limit,
            vegas.max_limit,
            vegas.smoothing,
            vegas.probe_multiplier
        ),
        (20, 1000, 1.0, 30)
    );
    assert_eq!(
        [
            (vegas.alpha_func)(20),
            (vegas.beta_func)(20),
            (vegas.threshold_func)(20)
        ],
        [3, 6, 1]
    );
    assert_eq!(
        [(vegas.increase_func)(500.0), (vegas.decrease_func)(500.0)],
        [502.0, 498.0]
    );
    let gradient = gradient2_oracle(&GRADIENT2);
    assert_eq!(
        (
            gradient.limit,
            gradient.min_limit,
            gradient.max_limit,
            gradient.smoothing,
            gradient.tolerance
        ),
        (20, 20, 200, 0.2, 1.5)
    );
    assert_eq!(
        ((gradient.queue_size)(20), gradient.long_rtt.window),
        (4, 600)
    );
}
