//! The one-screen text summary of a report.

use core::fmt::Write;
use core::time::Duration;

use crate::report::{Report, Sum, VariantRun, millis};
use crate::words::{grouped, span};

/// A one-screen summary of `report`: the scenario, then a table with a column per variant
/// of the totals, and of the focus stretch when there is one.
///
/// Rows for pieces that refused nothing in any variant are left out, and so are the rows
/// of chaos faults no variant injected (or shadowed). A focus that is not
/// inside the run (a `--duration` shorter than the scenario was written for) is said to be
/// so, with no figures: sums over a stretch never simulated would be zeros that measured
/// nothing. The text depends only on the report, so it is as reproducible as the CSV.
///
/// # Examples
///
/// ```
/// use ironward_sim::{Scenario, summary};
///
/// let report = Scenario::from_toml("name = \"calm\"\nduration = \"5s\"").unwrap().run(|_| {});
/// let text = summary(&report);
/// assert!(text.starts_with("calm"));
/// assert!(text.contains("calls offered"));
/// assert!(!text.contains("refused by the shedder"), "no shedder, no row");
/// ```
pub fn summary(report: &Report) -> String {
    let mut out = String::new();
    let head = match report.about.as_str() {
        "" => report.name.clone(),
        about => format!("{}: {about}", report.name),
    };
    let first = report.runs.first();
    let _ = writeln!(
        out,
        "{head}\n{} of simulated time per variant, seed {}",
        span(first.map_or(Duration::ZERO, |r| r.variant.duration)),
        first.map_or(0, |r| r.variant.seed),
    );
    let totals: Vec<Sum> = report.runs.iter().map(VariantRun::total).collect();
    let names: Vec<&str> = report
        .runs
        .iter()
        .map(|r| r.variant.name.as_str())
        .collect();
    let mut table = Table::new(&mut out, &names);
    table.sums("", &totals, false);
    let line = |run: &VariantRun| {
        let ms = |d: Option<Duration>| d.map_or("-".into(), |d| format!("{:.0}", millis(d)));
        format!("{} / {}", ms(run.p50), ms(run.p99))
    };
    table.line("latency p50 / p99 (ms)", report.runs.iter().map(line));
    table.line(
        "most inside the backend",
        totals.iter().map(|t| grouped(t.peak_in_flight)),
    );
    if let Some(run) = first {
        table.line(
            &format!("most reaching it in any {}", span(run.variant.window)),
            report.runs.iter().map(|r| grouped(r.peak_window)),
        );
    }
    table.line(
        "last call ended at",
        report.runs.iter().map(|r| {
            r.last_end
                .map_or("-".into(), |t| format!("{:.2} s", t.as_secs_f64()))
        }),
    );
    if report.runs.iter().any(|r| r.unfinished > 0) {
        table.line(
            "still under way at the end",
            report.runs.iter().map(|r| grouped(r.unfinished)),
        );
    }
    if !report.focus.is_whole() {
        let focus = report.focus;
        let to = if focus.to.is_zero() {
            "the end".to_string()
        } else {
            format!("{} s", focus.to.as_secs_f64())
        };
        let stretch = format!("from {} s to {to}", focus.from.as_secs_f64());
        match report.runs.iter().find(|r| !r.covers(focus)) {
            Some(short) => {
                // Sums over rows that were never simulated are zeros that measured nothing.
                let alike = report
                    .runs
                    .iter()
                    .all(|r| r.variant.duration == short.variant.duration);
                let _ = writeln!(
                    table.out,
                    "{stretch}, the scenario's focus: not inside the run, which ends at {} s{}.\n  \
                     Nothing was measured there, so no figures are given for it.",
                    short.variant.duration.as_secs_f64(),
                    match alike {
                        true => String::new(),
                        false => format!(" for {}", short.variant.name),
                    },
                );
            }
            None => {
                let _ = writeln!(table.out, "{stretch}:");
                let sums: Vec<Sum> = report.runs.iter().map(|r| r.sum(focus)).collect();
                table.sums("  ", &sums, true);
                table.line(
                    "  most reaching it in an interval",
                    sums.iter().map(|s| grouped(s.peak_admitted)),
                );
                table.line(
                    "  most inside the backend",
                    sums.iter().map(|s| grouped(s.peak_in_flight)),
                );
            }
        }
    }
    out
}

/// A counting row of the table: its label, and how to read it from a [`Sum`].
type Figure = (&'static str, fn(&Sum) -> u64);

/// Writes the rows of a table with a label column and a column per variant: the summary's,
/// and the verdicts' that compare variants figure by figure, aligned alike.
pub(crate) struct Table<'a> {
    pub(crate) out: &'a mut String,
    width: usize,
}

impl<'a> Table<'a> {
    /// A table with a column per variant of `names`, its header (the names) written.
    pub(crate) fn new(out: &'a mut String, names: &[&str]) -> Self {
        let width = names
            .iter()
            .map(|name| name.chars().count() + 2)
            .max()
            .unwrap_or(0)
            .max(13);
        let mut table = Self { out, width };
        table.line("", names.iter().map(|name| name.to_string()));
        table
    }

    /// A row: `label`, then a cell per variant, right-aligned.
    pub(crate) fn line(&mut self, label: &str, cells: impl Iterator<Item = String>) {
        let _ = write!(self.out, "{label:<34}");
        for cell in cells {
            let _ = write!(self.out, "{cell:>w$}", w = self.width);
        }
        let _ = writeln!(self.out);
    }

    /// The counting rows, each prefixed by `indent`; refusal rows only where some variant
    /// refused anything.
    /// With `brief`, only what reached the backend, the refusals, the timeouts and the
    /// successes.
    fn sums(&mut self, indent: &str, sums: &[Sum], brief: bool) {
        let rows: [Figure; 7] = [
            ("calls offered", |s| s.offered),
            ("attempts (first and retries)", Sum::attempts),
            ("retries", |s| s.retries),
            ("reached the backend", |s| s.admitted),
            ("backend errors", |s| s.failed),
            ("attempts timed out", |s| s.timed_out),
            ("calls given up", |s| s.gave_up),
        ];
        let refusals: [Figure; 8] = [
            ("refused by the breaker", |s| s.refused.breaker),
            ("refused by the limiter", |s| s.refused.limiter),
            ("refused by the shedder", |s| s.refused.shedder),
            ("refused by the bucket", |s| s.refused.bucket),
            ("refused by the sliding window", |s| s.refused.sliding),
            ("refused by the period", |s| s.refused.period),
            ("refused by the gate", |s| s.refused.gate),
            ("refused: backend queue full", |s| s.refused.queue),
        ];
        let injections: [Figure; 5] = [
            ("chaos: errors injected", |s| s.injected.error),
            ("chaos: latencies injected", |s| s.injected.latency),
            ("chaos: aborts injected", |s| s.injected.abort),
            ("chaos: answers replaced", |s| s.injected.replace),
            ("chaos: shadowed, not injected", |s| s.injected.shadowed),
        ];
        let all = rows.iter().take(4).chain(&refusals).chain(&injections);
        for (label, get) in all.chain(&rows[4..]) {
            // Refusals and injections are rows only where some variant counted any.
            let is_refusal = refusals.iter().chain(&injections).any(|(l, _)| l == label);
            let kept = ["reached the backend", "attempts timed out"].contains(label);
            if (is_refusal && sums.iter().all(|s| get(s) == 0)) || (brief && !is_refusal && !kept) {
                continue;
            }
            self.line(
                &format!("{indent}{label}"),
                sums.iter().map(|s| grouped(get(s))),
            );
        }
        self.line(
            &format!("{indent}calls succeeded"),
            sums.iter().map(|s| {
                let share = 100.0 * s.succeeded as f64 / s.offered.max(1) as f64;
                format!("{} {share:>3.0}%", grouped(s.succeeded))
            }),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(toml: &str) -> Report {
        crate::Scenario::from_toml(toml).unwrap().run(|_| {})
    }

    #[test]
    fn a_focus_past_the_end_of_the_run_is_said_to_be_outside_it_with_no_figures() {
        let text = summary(&report(
            "duration = \"20s\"\nfocus = { from = \"20s\", to = \"30s\" }",
        ));
        assert!(
            text.contains(
                "from 20 s to 30 s, the scenario's focus: not inside the run, which ends at 20 s."
            ),
            "{text}"
        );
        assert!(
            !text.contains("  calls succeeded"),
            "no zeros for it: {text}"
        );
        // Reaching past the end is not inside either, though it starts inside.
        let text = summary(&report(
            "duration = \"20s\"\nfocus = { from = \"10s\", to = \"30s\" }",
        ));
        assert!(text.contains("not inside the run"), "{text}");
    }

    #[test]
    fn a_focus_inside_the_run_gets_its_own_figures() {
        let text = summary(&report(
            "duration = \"20s\"\nfocus = { from = \"5s\", to = \"10s\" }",
        ));
        assert!(text.contains("from 5 s to 10 s:\n"), "{text}");
        assert!(text.contains("  calls succeeded"), "{text}");
        assert!(!text.contains("not inside"), "{text}");
    }
}
