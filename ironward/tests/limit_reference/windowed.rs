//! The sampler against a transliteration of `WindowedLimit` and its sample windows.

use core::time::Duration;

use ironward::limit::{Latency, SAMPLING, Sample, Sampler, Sampling};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

use crate::limit_reference::netflix::{SampleWindow, WindowedLimit};

#[derive(Debug, Clone, Copy)]
struct Call {
    gap: u64,
    rtt: u64,
    in_flight: u32,
    dropped: bool,
}

fn call() -> impl Strategy<Value = Call> {
    (
        prop_oneof![2 => Just(0_u64), 8 => 0..=50_000_000_u64],
        prop_oneof![
            1 => 0..=200_000_u64,
            8 => 0..=300_000_000_u64,
            1 => Just(Duration::from_secs(5).as_nanos() as u64),
        ],
        0..=1000_u32,
        prop::bool::weighted(0.1),
    )
        .prop_map(|(gap, rtt, in_flight, dropped)| Call {
            gap,
            rtt,
            in_flight,
            dropped,
        })
}

fn sampling() -> impl Strategy<Value = Sampling> {
    let latency = prop_oneof![
        Just(Latency::Average),
        (0.5..1.0_f64).prop_map(Latency::Percentile),
    ];
    (
        1..=20_u32,
        0..=2_000_000_000_u64,
        0..=2_000_000_000_u64,
        0..=200_000_u64,
        latency,
    )
        .prop_map(
            |(size, min_window, max_window, min_rtt, latency)| Sampling {
                size,
                min_window: Duration::from_nanos(min_window),
                max_window: Duration::from_nanos(max_window),
                min_rtt: Duration::from_nanos(min_rtt),
                latency,
                // The reference discards a short window.
                fill: false,
            },
        )
}

pub(crate) fn windowed_oracle(sampling: &Sampling, start: i64) -> WindowedLimit {
    let factory: Box<dyn Fn() -> SampleWindow> = match sampling.latency {
        Latency::Average => Box::new(SampleWindow::new_average),
        Latency::Percentile(p) => {
            Box::new(move || SampleWindow::new_percentile(p, Sampler::CAPACITY))
        }
    };
    let min_window = sampling.min_window.as_nanos() as i64;
    let max_window = sampling.max_window.as_nanos() as i64;
    WindowedLimit {
        delegate: Default::default(),
        // The one documented difference, aligned here: the reference's first window ends at
        // its clock's zero; the sampler's lasts the length a zero latency gives.
        next_update_time: start + 0_i64.max(min_window).min(max_window),
        min_window_time: min_window,
        max_window_time: max_window,
        window_size: sampling.size as i32,
        min_rtt_threshold: sampling.min_rtt.as_nanos() as i64,
        sample: factory(),
        sample_window_factory: factory,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    // Every call: the sampler closes a window exactly when `WindowedLimit` hands its
    // delegate a sample, and the samples are the same. At most 600 calls, so no window
    // passes the percentile's capacity.
    #[test]
    fn the_sampler_closes_the_windows_windowed_limit_closes(
        sampling in sampling(),
        start in 0..=1_000_000_000_000_u64,
        calls in prop::collection::vec(call(), 1..600),
    ) {
        let mut sampler = Sampler::new(sampling, Duration::from_nanos(start));
        let mut oracle = windowed_oracle(&sampling, start as i64);
        let mut now = start;
        for (i, call) in calls.iter().enumerate() {
            now += call.gap;
            let got = sampler.add(
                Duration::from_nanos(now),
                Duration::from_nanos(call.rtt),
                call.in_flight,
                call.dropped,
            );
            let before = oracle.delegate.samples.len();
            oracle
                .on_sample(now as i64 - call.rtt as i64, call.rtt as i64, call.in_flight as i32, call.dropped)
                .map_err(TestCaseError::fail)?;
            let want = oracle.delegate.samples.get(before).map(|&(rtt, in_flight, dropped)| Sample {
                rtt: Duration::from_nanos(rtt as u64),
                in_flight: in_flight as u32,
                dropped,
            });
            prop_assert_eq!(got, want, "call {}", i);
        }
    }
}

#[test]
fn the_preset_is_the_reference_default() {
    let windowed = windowed_oracle(&SAMPLING, 0);
    assert_eq!(
        (
            windowed.min_window_time,
            windowed.max_window_time,
            windowed.window_size,
            windowed.min_rtt_threshold
        ),
        (1_000_000_000, 1_000_000_000, 10, 100_000)
    );
}
