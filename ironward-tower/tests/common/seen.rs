//! What the metrics tests read: a `metrics-util` `DebuggingRecorder` set as the test thread's
//! recorder, and one snapshot of it by name and sorted labels.
//!
//! The recorder is the thread's for the whole test, not a closure's: a layer registers its
//! handles when it makes its first service, and a test on tokio's current-thread runtime makes
//! its layers, its services and its traffic on that one thread, so every handle records to
//! the test's recorder alone.

#![allow(dead_code)]

use metrics::LocalRecorderGuard;
use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};

/// A metric's labels, sorted by key.
pub(crate) type Labels = Vec<(String, String)>;

/// The test thread's recorder, while this lives.
pub(crate) struct Recording {
    snapshotter: Snapshotter,
    _guard: LocalRecorderGuard<'static>,
}

impl Recording {
    /// A fresh recorder, set as this thread's until the recording is dropped.
    pub(crate) fn start() -> Self {
        // Leaked so that the guard may borrow it for the rest of the test: a few bytes a test.
        let recorder: &'static DebuggingRecorder = Box::leak(Box::new(DebuggingRecorder::new()));
        Self {
            snapshotter: recorder.snapshotter(),
            _guard: metrics::set_default_local_recorder(recorder),
        }
    }

    /// What the recorder holds now.
    pub(crate) fn seen(&self) -> Seen {
        Seen::take(&self.snapshotter)
    }
}

/// Every value in one snapshot, keyed by name and sorted labels.
pub(crate) struct Seen(Vec<(String, Labels, DebugValue)>);

impl Seen {
    pub(crate) fn take(snapshotter: &Snapshotter) -> Self {
        let values = snapshotter
            .snapshot()
            .into_vec()
            .into_iter()
            .map(|(key, _, _, value)| {
                let key = key.key();
                let mut labels: Vec<_> = key
                    .labels()
                    .map(|l| (l.key().to_owned(), l.value().to_owned()))
                    .collect();
                labels.sort();
                (key.name().to_owned(), labels, value)
            })
            .collect();
        Self(values)
    }

    /// Whether nothing at all was registered.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub(crate) fn find(&self, metric: &str, labels: &[(&str, &str)]) -> Option<&DebugValue> {
        let mut want: Vec<_> = labels
            .iter()
            .map(|&(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        want.sort();
        self.0
            .iter()
            .find(|(n, l, _)| n == metric && *l == want)
            .map(|(_, _, value)| value)
    }

    /// The series of `metric` labelled `name="{name}"`, however many there are.
    pub(crate) fn series_named(&self, metric: &str, name: &str) -> usize {
        let label = ("name".to_owned(), name.to_owned());
        self.0
            .iter()
            .filter(|(n, l, _)| n == metric && l.contains(&label))
            .count()
    }

    /// The count of a registered counter; a counter never registered fails the test.
    pub(crate) fn counter(&self, metric: &str, labels: &[(&str, &str)]) -> u64 {
        match self.find(metric, labels) {
            Some(DebugValue::Counter(count)) => *count,
            other => panic!("{metric} {labels:?} is a registered counter, not {other:?}"),
        }
    }

    /// The count of `ironward.requests` with these labels; a counter never registered is 0.
    pub(crate) fn requests(&self, labels: &[(&str, &str)]) -> u64 {
        match self.find("ironward.requests", labels) {
            Some(DebugValue::Counter(count)) => *count,
            None => 0,
            Some(other) => panic!("ironward.requests is a counter, not {other:?}"),
        }
    }

    /// Every counter named `metric`, with its labels, sorted: what two runs compare.
    pub(crate) fn counters(&self, metric: &str) -> Vec<(Labels, u64)> {
        let mut counters: Vec<_> = self
            .0
            .iter()
            .filter(|(name, _, _)| name == metric)
            .filter_map(|(_, labels, value)| match value {
                DebugValue::Counter(count) => Some((labels.clone(), *count)),
                _ => None,
            })
            .collect();
        counters.sort();
        counters
    }

    pub(crate) fn admitted(&self, piece: &str, name: &str) -> u64 {
        self.requests(&[("piece", piece), ("name", name), ("outcome", "admitted")])
    }

    pub(crate) fn refused(&self, piece: &str, name: &str, reason: &str) -> u64 {
        self.requests(&[
            ("piece", piece),
            ("name", name),
            ("outcome", "refused"),
            ("reason", reason),
        ])
    }

    pub(crate) fn gauge(&self, metric: &str, labels: &[(&str, &str)]) -> f64 {
        match self.find(metric, labels) {
            Some(DebugValue::Gauge(value)) => value.0,
            other => panic!("{metric} {labels:?} is a gauge, not {other:?}"),
        }
    }

    /// Every decision counted under `outcome`, whatever its other labels.
    pub(crate) fn total(&self, outcome: &str) -> u64 {
        let label = ("outcome".to_owned(), outcome.to_owned());
        self.sum("ironward.requests", &label)
    }

    /// The attempts the retry layer `name` sent of `kind` (`first` or `retry`).
    pub(crate) fn attempts(&self, name: &str, kind: &str) -> u64 {
        self.counter("ironward.retry.attempts", &[("name", name), ("kind", kind)])
    }

    /// The calls the retry layer `name` finished with `outcome`.
    pub(crate) fn calls(&self, name: &str, outcome: &str) -> u64 {
        self.counter(
            "ironward.retry.calls",
            &[("name", name), ("outcome", outcome)],
        )
    }

    /// Every call the retry layer `name` finished, whatever the outcome.
    pub(crate) fn all_calls(&self, name: &str) -> u64 {
        let label = ("name".to_owned(), name.to_owned());
        self.sum("ironward.retry.calls", &label)
    }

    /// The waits the retry layer `name` decided, in seconds, in order.
    pub(crate) fn waits(&self, name: &str) -> Vec<f64> {
        match self.find("ironward.retry.wait", &[("name", name)]) {
            Some(DebugValue::Histogram(values)) => values.iter().map(|v| v.0).collect(),
            other => panic!("ironward.retry.wait is a histogram, not {other:?}"),
        }
    }

    /// The counters of `metric` carrying `label`, added up.
    fn sum(&self, metric: &str, label: &(String, String)) -> u64 {
        self.0
            .iter()
            .filter(|(n, l, _)| n == metric && l.contains(label))
            .map(|(_, _, value)| match value {
                DebugValue::Counter(count) => *count,
                other => panic!("{metric} is a counter, not {other:?}"),
            })
            .sum()
    }
}
