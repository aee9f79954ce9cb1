//! The command: its subcommands and options, and how to read what it writes.
//!
//! ```sh
//! ironward-sim list                      # the built-in scenarios, each with what it compares
//! ironward-sim show overload             # a built-in scenario's TOML file
//! ironward-sim run outage                # writes outage.csv and outage.svg, prints a summary
//! ironward-sim run my.toml --out runs    # a scenario file of one's own, into runs/
//! ironward-sim run outage --duration 2m  # shorter than the scenario says
//! ironward-sim run outage --png          # outage.png too (the `png` feature)
//! ```
//!
//! `--out DIR` chooses where the files go and `--duration` overrides the scenario's length; a
//! run can also override the scenario's draws from the command line (`ironward-sim run --help`).
//! `--png` draws its text with a TrueType font read at run time (`--font`, by default Debian's
//! `fonts-dejavu-core`). `--quiet` prints only errors.
//!
//! **The CSV** has a row per interval and variant: offered, admitted, refused by which piece,
//! backend errors, timeouts, in flight, the breaker's ratio, the shedder's state, the limiter's
//! limit, each criticality's admitted and refused attempts, latency percentiles, and the faults
//! a chaos policy injected (`chaos_error`, `chaos_latency`, `chaos_abort`, `chaos_replace`)
//! or, in shadow mode, only decided (`chaos_shadowed`).
//!
//! **The picture** has a panel per series and a line per variant. Each panel's title says what
//! is counted over how long ("per 1 s") and its value axis names the unit; the backend's
//! schedule phases and any source of calls that starts or stops within the run are shaded and
//! labelled in every panel ("outage", "cold start", "+900 calls/s"), so a line's turn can be
//! read against its cause. The latency panels are of the calls that succeeded, timed from their
//! first attempt, so a call's retries count in its latency. A panel's legend names only the
//! variants that draw a line in it.
//!
//! **The summary** states each comparison of the run in its own figures, and says so when the
//! stretch it reads (the scenario's `focus`) is not inside the run, rather than concluding from
//! it.
//!
//! **Speed.** The simulator runs the real `ironward` decisions, so its cost is theirs plus the
//! model's bookkeeping: the streams of chance are drawn ahead on a second core, events wait in a
//! timing wheel, and nothing is kept per call. A run therefore uses more CPU time than wall time,
//! and its memory does not grow with its length.
