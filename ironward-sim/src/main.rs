//! `ironward-sim`: replays traffic through ironward's policies against a modelled backend
//! and draws the result.
//!
//! ```sh
//! ironward-sim list                    # the built-in scenarios
//! ironward-sim run outage              # writes outage.csv and outage.svg, prints a summary
//! ironward-sim run my.toml --out runs  # a scenario file of one's own
//! ironward-sim show overload           # a built-in scenario file, to copy and change
//! ```

use std::fs;
use std::io::{BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use ironward_sim::{Builtin, Report, Scenario, draw_svg, parse_duration, summary};

/// Replays traffic through ironward's policies against a modelled backend, on a simulated
/// clock with seeded dice, and draws what happens.
#[derive(Debug, Parser)]
#[command(name = "ironward-sim", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Lists the built-in scenarios.
    List,
    /// Prints a built-in scenario's TOML file.
    Show {
        /// A built-in scenario's name.
        name: String,
    },
    /// Runs a scenario: writes NAME.csv and NAME.svg and prints a summary.
    Run(Run),
}

#[derive(Debug, clap::Args)]
struct Run {
    /// A built-in scenario's name, or the path of a TOML scenario file.
    scenario: String,
    /// Runs every variant from this seed instead of the scenario's.
    #[arg(long)]
    seed: Option<u64>,
    /// Runs every variant for this long instead ("90s", "10m", "1h").
    #[arg(long, value_parser = parse_duration)]
    duration: Option<Duration>,
    /// The folder the CSV and the pictures are written to.
    #[arg(long, default_value = ".")]
    out: PathBuf,
    /// Also writes NAME.png (needs the `png` feature and a TrueType font).
    #[arg(long)]
    png: bool,
    /// The font a PNG's text is drawn with.
    #[arg(
        long,
        default_value = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
    )]
    font: PathBuf,
    /// Prints nothing and shows no progress bar; only errors are reported.
    #[arg(long, short)]
    quiet: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::List => {
            print!("{}", listing());
            Ok(())
        }
        Command::Show { name } => Builtin::from_name(&name)
            .map(|b| print!("{}", b.text()))
            .map_err(|e| e.to_string()),
        Command::Run(run) => execute(run),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(why) => {
            eprintln!("ironward-sim: {why}");
            ExitCode::FAILURE
        }
    }
}

/// The built-in scenarios, a line each: the name, then what it is about, in a column that
/// clears the longest name by two spaces.
fn listing() -> String {
    let width = Builtin::ALL
        .iter()
        .map(|b| b.name().len())
        .max()
        .unwrap_or(0)
        + 2;
    Builtin::ALL
        .iter()
        .map(|b| {
            let about = b.scenario().map(|s| s.about).unwrap_or_default();
            format!("{:<width$}{about}\n", b.name())
        })
        .collect()
}

/// Reads the scenario, runs it with a progress bar, writes the files and the summary.
fn execute(run: Run) -> Result<(), String> {
    let builtin = Builtin::from_name(&run.scenario).ok();
    let mut scenario = match builtin {
        Some(builtin) => builtin.scenario(),
        None => {
            let text = fs::read_to_string(&run.scenario).map_err(|e| {
                format!(
                    "`{}` is neither a built-in scenario ({}) nor a readable file: {e}",
                    run.scenario,
                    Builtin::ALL.map(Builtin::name).join(", ")
                )
            })?;
            Scenario::from_toml(&text)
        }
    }
    .map_err(|e| format!("{}: {e}", run.scenario))?;
    for variant in &mut scenario.variants {
        variant.seed = run.seed.unwrap_or(variant.seed);
        variant.duration = run.duration.unwrap_or(variant.duration);
    }
    if run.png && !cfg!(feature = "png") {
        return Err("this build draws no PNG: build with `--features png`".into());
    }

    let bar = progress(&scenario, run.quiet);
    let started = Instant::now();
    let report = scenario.run(|done| bar.set_position(done.as_millis() as u64));
    let elapsed = started.elapsed();
    bar.finish_and_clear();

    fs::create_dir_all(&run.out).map_err(|e| format!("{}: {e}", run.out.display()))?;
    let csv = run.out.join(format!("{}.csv", report.name));
    write_csv(&report, &csv)?;
    let svg = run.out.join(format!("{}.svg", report.name));
    let picture = draw_svg(&report).map_err(|e| e.to_string())?;
    fs::write(&svg, picture).map_err(|e| format!("{}: {e}", svg.display()))?;
    let mut written = vec![csv, svg];
    if run.png {
        written.push(png(&report, &run)?);
    }

    if !run.quiet {
        print!("{}", summary(&report));
        if let Some(verdict) = builtin.and_then(|b| b.verdict(&report)) {
            println!("\n{verdict}");
        }
        let decisions: u64 = report.runs.iter().map(|r| r.total().attempts()).sum();
        println!(
            "\n{} decisions simulated in {:.2} s of wall time; wrote {}",
            decisions,
            elapsed.as_secs_f64(),
            written
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(())
}

/// A progress bar over the simulated time, in milliseconds; hidden when `quiet` or when
/// standard error is not a terminal.
fn progress(scenario: &Scenario, quiet: bool) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let total = scenario.simulated().as_millis() as u64;
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    let style = ProgressStyle::with_template(
        "{prefix} [{bar:40}] {percent:>3}% of the simulated time, {elapsed} ({eta} left)",
    )
    .map(|s| s.progress_chars("=> "));
    if let Ok(style) = style {
        bar.set_style(style);
    }
    bar.set_prefix(scenario.name.clone());
    bar
}

fn write_csv(report: &Report, path: &Path) -> Result<(), String> {
    let fail = |e: std::io::Error| format!("{}: {e}", path.display());
    let mut file = BufWriter::new(fs::File::create(path).map_err(fail)?);
    report.write_csv(&mut file).map_err(fail)?;
    file.flush().map_err(fail)
}

#[cfg(feature = "png")]
fn png(report: &Report, run: &Run) -> Result<PathBuf, String> {
    let path = run.out.join(format!("{}.png", report.name));
    ironward_sim::draw_png(report, &run.font, &path).map_err(|e| e.to_string())?;
    Ok(path)
}

#[cfg(not(feature = "png"))]
fn png(_report: &Report, run: &Run) -> Result<PathBuf, String> {
    Err(format!(
        "this build draws no PNG (font {}): build with `--features png`",
        run.font.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    // Every description starts in one column, two spaces or more past its name
    // ("cold-recovery" and "latency-shift" ran into theirs).
    #[test]
    fn the_listing_keeps_every_name_apart_from_its_description() {
        let listing = listing();
        let lines: Vec<&str> = listing.lines().collect();
        assert_eq!(lines.len(), Builtin::ALL.len());
        let mut columns = Vec::new();
        for (line, builtin) in lines.iter().zip(Builtin::ALL) {
            let about = builtin.scenario().unwrap().about;
            let column = line.len() - about.len();
            assert!(line.ends_with(&about), "{line}");
            assert_eq!(line[..column].trim_end(), builtin.name(), "{line}");
            assert!(line[..column].ends_with("  "), "{line}");
            columns.push(column);
        }
        assert!(columns.windows(2).all(|w| w[0] == w[1]), "{columns:?}");
    }
}
