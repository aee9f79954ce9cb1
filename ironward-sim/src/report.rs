//! What a run comes to: a row of figures per interval, and the totals.

mod caption;
// Named by `scenario` where it is defined, so that `scenario` reads only this leaf and this
// file reads `scenario`: one way, not each into the other.
mod row;
mod run;

use std::io::{self, Write};

use crate::scenario::Focus;

pub use crate::column::Column;
pub(crate) use row::millis;
pub use row::{Injections, Refused, Row};
pub use run::{Sum, VariantRun};

/// Every run of a scenario.
///
/// # Examples
///
/// ```
/// use ironward_sim::Scenario;
///
/// let scenario = Scenario::from_toml("duration = \"3s\"").unwrap();
/// let report = scenario.run(|_| {});
/// let mut csv = Vec::new();
/// report.write_csv(&mut csv).unwrap();
/// let csv = String::from_utf8(csv).unwrap();
/// assert!(csv.starts_with("variant,t,offered,retries,admitted,"));
/// assert_eq!(csv.lines().count(), 1 + 3, "a header and a row a second");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// The scenario's name.
    pub name: String,
    /// What the scenario shows.
    pub about: String,
    /// The stretch the summary reports on its own.
    pub focus: Focus,
    /// The series a picture draws.
    pub plot: Vec<crate::Column>,
    /// One run per variant, in the scenario's order.
    pub runs: Vec<VariantRun>,
}

impl Report {
    /// The run of the variant called `name`.
    pub fn run(&self, name: &str) -> Option<&VariantRun> {
        self.runs.iter().find(|r| r.variant.name == name)
    }

    /// Writes every run's rows as CSV: a header, then a row per variant and interval,
    /// the variant's name first.
    ///
    /// The text depends only on the scenario and its seed: the same inputs give the same
    /// bytes on every run and platform.
    pub fn write_csv(&self, mut out: impl Write) -> io::Result<()> {
        write!(out, "variant")?;
        for column in Column::ALL {
            write!(out, ",{}", column.name())?;
        }
        writeln!(out)?;
        for run in &self.runs {
            for row in &run.rows {
                write!(out, "{}", run.variant.name)?;
                for column in Column::ALL {
                    write!(out, ",")?;
                    row.write_cell(column, &mut out)?;
                }
                writeln!(out)?;
            }
        }
        Ok(())
    }
}
