//! What one edge counted for a row through the `metrics` facade: with the `metrics` feature,
//! every retry metric its own `DebuggingRecorder` saw, so that the table can ask both edges
//! to count alike and as the row's record says; without it, nothing, and every row counts the
//! same nothing.

use ironward::http_retry::Retried;

pub(crate) use imp::{Counts, Meter};

/// Checks that `counts` are what a call that left `retried` must count: one first attempt
/// and `attempts - 1` retries, one call under the record's outcome and none under any other,
/// and waits that add up to the record's.
pub(crate) fn check(counts: &Counts, retried: &Retried, row: &str) {
    imp::check(counts, retried, row);
}

#[cfg(feature = "metrics")]
mod imp {
    use std::collections::BTreeMap;
    use std::time::Duration;

    use ironward::http_retry::{Retried, Stop};
    use metrics::LocalRecorderGuard;
    use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};

    /// One value as the table compares it.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub(crate) enum Value {
        Count(u64),
        /// A histogram's values, in seconds, read back as durations.
        Waits(Vec<Duration>),
    }

    /// Every value one recorder saw, keyed `name{label=value,...}` with the labels sorted.
    #[derive(Debug, Clone, PartialEq, Eq, Default)]
    pub(crate) struct Counts(BTreeMap<String, Value>);

    impl Counts {
        fn count(&self, key: &str) -> u64 {
            match self.0.get(key) {
                Some(Value::Count(n)) => *n,
                other => panic!("{key} is a registered counter, not {other:?}"),
            }
        }
    }

    /// A recorder of its own for one edge's middleware or layer, set as the thread's recorder
    /// while the meter lives: an edge registers its handles when its name is final (the
    /// middleware at its first attempt, the layer when it makes its service), after `made`,
    /// and the row's call runs on the test's thread, in the future the test blocks on.
    pub(crate) struct Meter {
        snapshotter: Snapshotter,
        _guard: LocalRecorderGuard<'static>,
    }

    impl Meter {
        pub(crate) fn new() -> Self {
            // Leaked so that the guard may borrow it for the rest of the row: a few bytes.
            let recorder: &'static DebuggingRecorder =
                Box::leak(Box::new(DebuggingRecorder::new()));
            Self {
                snapshotter: recorder.snapshotter(),
                _guard: metrics::set_default_local_recorder(recorder),
            }
        }

        /// Makes the edge's middleware or layer while this recorder is the thread's.
        pub(crate) fn made<T>(&self, make: impl FnOnce() -> T) -> T {
            make()
        }

        pub(crate) fn counts(&self) -> Counts {
            let values = self
                .snapshotter
                .snapshot()
                .into_vec()
                .into_iter()
                .map(|(key, _, _, value)| {
                    let key = key.key();
                    let mut labels: Vec<_> = key
                        .labels()
                        .map(|l| format!("{}={}", l.key(), l.value()))
                        .collect();
                    labels.sort();
                    let value = match value {
                        DebugValue::Counter(n) => Value::Count(n),
                        DebugValue::Histogram(values) => Value::Waits(
                            values
                                .iter()
                                .map(|v| Duration::from_secs_f64(v.0))
                                .collect(),
                        ),
                        DebugValue::Gauge(g) => panic!("no retry metric is a gauge: {g:?}"),
                    };
                    (format!("{}{{{}}}", key.name(), labels.join(",")), value)
                })
                .collect();
            Counts(values)
        }
    }

    pub(super) fn check(counts: &Counts, retried: &Retried, row: &str) {
        let attempts = |kind| {
            counts.count(&format!(
                "ironward.retry.attempts{{kind={kind},name=default}}"
            ))
        };
        assert_eq!(attempts("first"), 1, "{row}");
        assert_eq!(attempts("retry"), u64::from(retried.retries()), "{row}");
        let outcomes = std::iter::once("success").chain(Stop::ALL.iter().map(Stop::as_str));
        for outcome in outcomes {
            let key = format!("ironward.retry.calls{{name=default,outcome={outcome}}}");
            let want = u64::from(outcome == retried.outcome());
            assert_eq!(counts.count(&key), want, "{row}: {key}");
        }
        let waits = match counts.0.get("ironward.retry.wait{name=default}") {
            Some(Value::Waits(waits)) => waits.clone(),
            other => panic!("{row}: the waits are a histogram, not {other:?}"),
        };
        let total: Duration = waits.iter().sum();
        // Each wait went through seconds as an f64: a nanosecond either way per wait.
        let slack = Duration::from_nanos(waits.len() as u64);
        assert!(
            total.abs_diff(retried.waited) <= slack,
            "{row}: the waits {waits:?} do not add up to {:?}",
            retried.waited
        );
        assert_eq!(
            counts.0.len(),
            2 + 1 + Stop::ALL.len() + 1,
            "{row}: {counts:?}"
        );
    }
}

#[cfg(not(feature = "metrics"))]
mod imp {
    use ironward::http_retry::Retried;

    /// Nothing: without the feature no edge counts.
    #[derive(Debug, Clone, PartialEq, Eq, Default)]
    pub(crate) struct Counts;

    /// A recorder that records nothing.
    pub(crate) struct Meter;

    impl Meter {
        pub(crate) fn new() -> Self {
            Self
        }

        pub(crate) fn made<T>(&self, make: impl FnOnce() -> T) -> T {
            make()
        }

        pub(crate) fn counts(&self) -> Counts {
            Counts
        }
    }

    pub(super) fn check(_: &Counts, _: &Retried, _: &str) {}
}
