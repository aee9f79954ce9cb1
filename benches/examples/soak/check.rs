//! What the soak measures and holds to account: the process's memory, the counters the
//! recorder holds, and the verdicts, each printed and failing the run when false.

use std::time::Duration;

use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};

/// A `/proc/self/status` field in KiB (`VmRSS`, `VmHWM`); `None` off Linux.
pub(crate) fn status_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// KiB as MiB, for printing.
pub(crate) fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// The resident set, sampled once a second: when, and how much.
#[derive(Default)]
pub(crate) struct Rss(Vec<(Duration, u64)>);

/// The slack the flat-memory rule allows over the reference sample: 10 % and 8 MiB.
const RSS_SLACK_SHARE: f64 = 0.10;
const RSS_SLACK_KIB: u64 = 8 * 1024;

impl Rss {
    pub(crate) fn sample(&mut self, at: Duration) {
        if let Some(kib) = status_kib("VmRSS:") {
            self.0.push((at, kib));
        }
    }

    /// The first sample at or after `at`.
    pub(crate) fn at(&self, at: Duration) -> Option<(Duration, u64)> {
        self.0.iter().copied().find(|&(when, _)| when >= at)
    }

    /// The last sample.
    pub(crate) fn last(&self) -> Option<(Duration, u64)> {
        self.0.last().copied()
    }

    /// The rule: once the run has warmed up (at 60 s, or a quarter of a run shorter than two
    /// minutes), no later sample, the one after the drain included, is more than 10 % + 8 MiB
    /// above the sample taken then. `None` without a sample after the warm-up.
    pub(crate) fn flat(&self, run: Duration) -> Option<Flat> {
        let warm = if run >= Duration::from_secs(120) {
            Duration::from_secs(60)
        } else {
            run / 4
        };
        let reference = self.at(warm)?;
        let later = self
            .0
            .iter()
            .copied()
            .filter(|&(when, _)| when > reference.0)
            .max_by_key(|&(_, kib)| kib)?;
        let allowed = (reference.1 as f64 * (1.0 + RSS_SLACK_SHARE)) as u64 + RSS_SLACK_KIB;
        Some(Flat {
            reference,
            later,
            held: later.1 <= allowed,
        })
    }
}

/// The flat-memory rule applied: samples as (when, KiB).
pub(crate) struct Flat {
    /// The sample at the end of the warm-up.
    pub(crate) reference: (Duration, u64),
    /// The largest sample after it.
    pub(crate) later: (Duration, u64),
    /// Whether the largest stayed within the slack.
    pub(crate) held: bool,
}

/// The process's metrics recorder: every layer and the retry middleware count into it.
pub(crate) struct Recorder(Snapshotter);

impl Recorder {
    /// Installs a debugging recorder as the process's; before any layer is built, since each
    /// registers its counters when it makes its first service.
    pub(crate) fn install() -> Self {
        let recorder = DebuggingRecorder::new();
        let snapshotter = recorder.snapshotter();
        recorder
            .install()
            .expect("the first recorder of the process");
        Self(snapshotter)
    }

    /// Every series as it stands, read once: reading takes the counts (the debugging
    /// recorder's snapshot zeroes each counter and gauge it reads), so the checks read one
    /// snapshot, taken after the drain.
    pub(crate) fn snapshot(&self) -> Seen {
        Seen(
            self.0
                .snapshot()
                .into_vec()
                .into_iter()
                .map(|(key, _, _, value)| (key.key().clone(), value))
                .collect(),
        )
    }
}

/// One snapshot of the recorder: each series' key and value.
pub(crate) struct Seen(Vec<(metrics::Key, DebugValue)>);

impl Seen {
    /// Prints every series, for a run that disagrees.
    pub(crate) fn dump(&self) {
        for (key, value) in &self.0 {
            println!("    {key:?} {value:?}");
        }
    }

    /// The sum of every counter named `name` whose labels include all of `labels`.
    pub(crate) fn counter(&self, name: &str, labels: &[(&str, &str)]) -> u64 {
        self.series(name, labels)
            .filter_map(|value| match value {
                DebugValue::Counter(count) => Some(*count),
                _ => None,
            })
            .sum()
    }

    /// The sum of every gauge named `name` whose labels include all of `labels`.
    pub(crate) fn gauge(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        self.series(name, labels)
            .filter_map(|value| match value {
                DebugValue::Gauge(level) => Some(level.into_inner()),
                _ => None,
            })
            .sum()
    }

    fn series<'a>(
        &'a self,
        name: &'a str,
        labels: &'a [(&'a str, &'a str)],
    ) -> impl Iterator<Item = &'a DebugValue> {
        self.0
            .iter()
            .filter(move |(key, _)| {
                key.name() == name
                    && labels.iter().all(|&(k, v)| {
                        key.labels()
                            .any(|label| label.key() == k && label.value() == v)
                    })
            })
            .map(|(_, value)| value)
    }
}

/// The verdicts so far: each printed as it is given, the run failing if any is false.
#[derive(Default)]
pub(crate) struct Verdicts {
    failed: Vec<String>,
}

impl Verdicts {
    /// Holds `ok`, printing `what` with its outcome.
    pub(crate) fn hold(&mut self, ok: bool, what: impl Into<String>) {
        let what = what.into();
        println!("  [{}] {what}", if ok { "ok" } else { "FAIL" });
        if !ok {
            self.failed.push(what);
        }
    }

    /// Holds `left == right`, printing both.
    pub(crate) fn equal(&mut self, what: &str, left: u64, right: u64) {
        self.hold(left == right, format!("{what}: {left} = {right}"));
    }

    /// Holds `left <= right`, printing both.
    pub(crate) fn at_most(&mut self, what: &str, left: u64, right: u64) {
        self.hold(left <= right, format!("{what}: {left} <= {right}"));
    }

    /// The verdicts that failed.
    pub(crate) fn failed(&self) -> &[String] {
        &self.failed
    }
}
