//! The server stack end to end: a real axum server on loopback, driven at a fixed offered
//! load by an open-loop generator, under a per-IP quota, three ways in turn: no limiter
//! (`e2e/none`), ironward-tower's `ProtectLayer` with `QuotaLayer::by_peer`
//! (`e2e/ironward`), and tower_governor's `GovernorLayer` on its peer-IP key
//! (`e2e/tower_governor`), the rate limiter axum users reach for, on the same quota.
//!
//! **A bench target, not criterion.** What is measured is a run of seconds over TCP (a
//! rate, percentiles, counts), not a routine criterion repeats, so this target has
//! `harness = false` and a `main` of its own; being a bench target, `cargo bench -p
//! ironward-benches` runs it with the others, in the bench profile the others are built in,
//! and a criterion filter picks it as it picks theirs (`scripts/bench -- '^e2e'`: see
//! [`Args`]). A binary of the crate would have been built in another profile and left out of
//! that run.
//!
//! **The load.** [`CLIENTS`] clients, each on its own loopback source address (127.0.0.2,
//! 127.0.0.3, ...: Linux routes all of 127/8 to `lo`), so each is its own peer, and each
//! offers [`OFFERED`] requests a second on a schedule, whatever comes back ([`load`]).
//!
//! **The quota, and its promise.** [`RATE`] a second and a burst of [`BURST`] for each peer:
//! ironward's `Quota::bucket(RATE, BURST)` is a token bucket that starts full and refills
//! continuously; tower_governor's period of `1 / RATE` and burst size `BURST` are governor's
//! GCRA, whose emission interval is that period and whose tolerance is `(BURST - 1)` periods.
//! Both promise the same thing to a peer whose first request arrives at 0: at most
//! `BURST + ⌊RATE · T⌋` admitted by time `T` (the bucket's full burst, then a token each
//! `1 / RATE`; GCRA's `n`-th admission needs `T ≥ (n − BURST) / RATE`). A peer that asks ten
//! times as often as that is admitted that many, give or take the token it had not yet asked
//! for when its last request arrived: that is the promise each run's admitted count is held to
//! ([`tally`]), with `T` the span of the peer's arrivals at the server ([`arrivals`]).
//!
//! **What is measured**, each round ([`tally`]): the rate offered and the rate answered,
//! the 50th and 99th percentiles of latency, the `200`s and `429`s against the promise, and
//! the server's CPU time per request ([`server_cpu`]). At an offered load below what the
//! machine sustains, every variant answers what it is offered, and the server's CPU time per
//! request is where the cost of a limiter shows.
//!
//! **The machine.** The server's runtime has two workers and the generator one thread, on a
//! machine of two cores that the server and the generator share: the figures are of the
//! whole loop, each side slowing the other, and say how the three variants compare on the
//! same machine, not what a server alone would sustain.
//!
//! Writes `e2e/e2e.json` under cargo's target directory, which `scripts/bench` renders.

#[path = "e2e/arrivals.rs"]
mod arrivals;
#[path = "e2e/load.rs"]
mod load;
#[path = "e2e/tally.rs"]
mod tally;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use axum::Router;
use axum::routing::get;
use ironward_tower::{ProtectLayer, Quota, QuotaLayer};
use regex::Regex;
use tokio::net::TcpListener;
use tower_governor::GovernorLayer;
use tower_governor::governor::GovernorConfigBuilder;

use crate::arrivals::Arrivals;
use crate::tally::Summary;

/// Clients, each on its own source address: each its own peer, so its own quota.
const CLIENTS: u8 = 8;

/// Requests a second each client sends: ten times its quota's rate.
const OFFERED: f64 = 1000.0;

/// The quota's rate, per peer: tokens a second (ironward) or one cell each `1 / RATE`
/// (governor).
const RATE: f64 = 100.0;

/// The quota's burst, per peer.
const BURST: u32 = 100;

/// The most peers ironward's table keeps: far above [`CLIENTS`], so that no peer is ever
/// evicted (which would hand it a fresh budget) and the promise holds as stated.
const MAX_KEYS: usize = 10_000;

/// Rounds of a full run, and how long each variant is offered load in each: the variants
/// take turns, each round starting one further along, so that a spell of load from elsewhere
/// on the machine falls on one round of each rather than on one variant (see [`tally`]).
const ROUNDS: usize = 3;
const RUN: Duration = Duration::from_secs(3);

/// `--quick` and `cargo test`'s smoke check (no `--bench`, nothing written): one round each.
const QUICK: Duration = Duration::from_secs(1);
const SMOKE: Duration = Duration::from_millis(300);

/// The server side of a variant: how the app is limited.
#[derive(Clone, Copy, Debug)]
enum Variant {
    None,
    Ironward,
    TowerGovernor,
}

impl Variant {
    const ALL: [Self; 3] = [Self::None, Self::Ironward, Self::TowerGovernor];

    /// The name a filter matches (`e2e/<name>`) and the JSON and the table show.
    fn name(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Ironward => "ironward",
            Self::TowerGovernor => "tower_governor",
        }
    }

    /// The app: one route answering `200 ok` at once, limited as the variant says.
    fn app(self) -> Router {
        let app = Router::new().route("/", get(|| async { "ok" }));
        match self {
            Self::None => app,
            Self::Ironward => {
                let quota = QuotaLayer::by_peer(Quota::bucket(RATE, f64::from(BURST)), MAX_KEYS);
                app.layer(ProtectLayer::new().quota(quota))
            }
            Self::TowerGovernor => {
                // `period` is the time to replenish one cell; `per_second(n)` would be one
                // cell each n seconds, not n a second.
                let config = GovernorConfigBuilder::default()
                    .period(Duration::from_secs_f64(1.0 / RATE))
                    .burst_size(BURST)
                    .finish()
                    .expect("a nonzero period and burst");
                app.layer(GovernorLayer::new(config))
            }
        }
    }

    /// Whether the variant limits, so that its admitted count answers to the promise.
    fn limits(self) -> bool {
        !matches!(self, Self::None)
    }
}

/// What the command line asks, read as criterion reads it: `cargo bench` passes `--bench`,
/// `cargo test` does not (a smoke check, nothing written); the other arguments are criterion's
/// filters (regular expressions on `e2e/<variant>`, or exact with `--exact`), `--quick`, and
/// `--list`. criterion's options that take a value are skipped with it.
struct Args {
    bench: bool,
    /// criterion's test mode, asked for outright: run once, keep nothing.
    test: bool,
    quick: bool,
    list: bool,
    exact: bool,
    filters: Vec<Filter>,
}

/// One filter: the text, for `--exact`, and the regular expression criterion would read.
struct Filter {
    text: String,
    regex: Regex,
}

impl Args {
    /// criterion's options whose value is the next argument, not a filter.
    const VALUED: [&'static str; 19] = [
        "-c",
        "--color",
        "-s",
        "--save-baseline",
        "-b",
        "--baseline",
        "--baseline-lenient",
        "--load-baseline",
        "--sample-size",
        "--warm-up-time",
        "--measurement-time",
        "--nresamples",
        "--noise-threshold",
        "--confidence-level",
        "--significance-level",
        "--profile-time",
        "--plotting-backend",
        "--output-format",
        "--format",
    ];

    fn parse() -> Self {
        let mut args = Self {
            bench: false,
            test: false,
            quick: false,
            list: false,
            exact: false,
            filters: Vec::new(),
        };
        let mut given = std::env::args().skip(1);
        while let Some(arg) = given.next() {
            match arg.as_str() {
                "--bench" => args.bench = true,
                "--test" => args.test = true,
                "--quick" => args.quick = true,
                "--list" => args.list = true,
                "--exact" => args.exact = true,
                valued if Self::VALUED.contains(&valued) => {
                    given.next();
                }
                flag if flag.starts_with('-') => {}
                filter => match Regex::new(filter) {
                    Ok(regex) => args.filters.push(Filter {
                        text: filter.to_owned(),
                        regex,
                    }),
                    Err(error) => {
                        eprintln!(
                            "e2e: the filter {filter:?} is not a regular expression: {error}"
                        );
                        std::process::exit(2);
                    }
                },
            }
        }
        args
    }

    /// Whether `id` is asked for: no filter, or any filter matching it.
    fn wants(&self, id: &str) -> bool {
        self.filters.is_empty()
            || self.filters.iter().any(|filter| {
                if self.exact {
                    filter.text == id
                } else {
                    filter.regex.is_match(id)
                }
            })
    }

    /// Whether this is a run to keep, not criterion's test mode (`--test`, or `cargo test`,
    /// which passes no `--bench`).
    fn measures(&self) -> bool {
        self.bench && !self.test
    }

    /// How many rounds, and how long each variant runs in each.
    fn rounds(&self) -> (usize, Duration) {
        match (self.measures(), self.quick) {
            (false, _) => (1, SMOKE),
            (true, true) => (1, QUICK),
            (true, false) => (ROUNDS, RUN),
        }
    }
}

/// The source address of client `i`: 127.0.0.2 onwards, 127.0.0.1 being the warm-up's.
fn source(i: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2 + i))
}

/// The name of the server's threads, by which [`server_cpu`] finds them.
const SERVER_THREAD: &str = "e2e-server";

/// Serves `variant`'s app on a free loopback port on a runtime of its own, two workers, and
/// runs the load against it from this thread; the server and its runtime are gone after.
fn measure(variant: Variant, run: Duration) -> Summary {
    let server = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name(SERVER_THREAD)
        .enable_all()
        .build()
        .expect("the server's runtime");
    let listener = server
        .block_on(TcpListener::bind("127.0.0.1:0"))
        .expect("bind 127.0.0.1:0");
    let addr = listener.local_addr().expect("the server's address");
    let sources: Vec<IpAddr> = (0..CLIENTS).map(source).collect();
    let arrivals = Arrivals::new(&sources);
    let app = arrivals.around(variant.app());
    server.spawn(async move {
        axum::serve(
            listener,
            app.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .await
        .expect("serve");
    });
    let generator = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("the generator's runtime");
    let plan = load::Plan {
        target: addr,
        sources: &sources,
        warm_up_from: IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1)),
        offered: OFFERED,
        run,
    };
    let before = server_cpu();
    let outcomes = generator.block_on(load::run(&plan));
    let after = server_cpu();
    server.shutdown_timeout(Duration::from_secs(1));
    // The warm-up's requests are in the server's time as well as the run's.
    let served = u32::try_from(outcomes.len() + load::WARM_UP).unwrap_or(u32::MAX);
    let cpu = before
        .zip(after)
        .map(|(before, after)| after.saturating_sub(before) / served.max(1));
    let quota = tally::Quota {
        rate: RATE,
        burst: BURST,
    };
    let promise = variant.limits().then(|| quota.promised(&arrivals.spans()));
    tally::summarize(variant.name(), &outcomes, promise, cpu)
}

/// The time the server's threads have run on a CPU so far, summed, from each thread's
/// `/proc/self/task/<tid>/schedstat` (nanoseconds on the CPU, exact where `stat`'s ticks are
/// 10 ms); `None` where there is no such file. The server's CPU time per request is what
/// sets the rate a server alone could sustain: on a machine it shares with the generator, it
/// is the one figure of the server's own cost that the generator's does not blur. Threads of
/// an earlier variant's runtime that linger idle add nothing between two readings.
fn server_cpu() -> Option<Duration> {
    let mut total = Duration::ZERO;
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let path = task.ok()?.path();
        // A thread that ended since the listing has no files left: it is not the server's.
        let Ok(name) = std::fs::read_to_string(path.join("comm")) else {
            continue;
        };
        if name.trim_end() != SERVER_THREAD {
            continue;
        }
        let stat = std::fs::read_to_string(path.join("schedstat")).ok()?;
        let nanos: u64 = stat.split_whitespace().next()?.parse().ok()?;
        total += Duration::from_nanos(nanos);
    }
    Some(total)
}

/// Cargo's target directory: `CARGO_TARGET_DIR`, or the ancestor of this executable that
/// holds cargo's `CACHEDIR.TAG` (`target/release/deps/e2e-*` is three levels below it).
fn target_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(dir);
    }
    let exe = std::env::current_exe().expect("this executable's path");
    exe.ancestors()
        .find(|dir| dir.join("CACHEDIR.TAG").is_file())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target"))
}

fn main() {
    let args = Args::parse();
    let variants: Vec<Variant> = Variant::ALL
        .into_iter()
        .filter(|variant| args.wants(&format!("e2e/{}", variant.name())))
        .collect();
    if args.list {
        for variant in &variants {
            println!("e2e/{}: benchmark", variant.name());
        }
        return;
    }
    if variants.is_empty() {
        return;
    }
    let (rounds, run) = args.rounds();
    println!(
        "e2e: {CLIENTS} peers offering {OFFERED} req/s each for {run:?} a variant and round, \
         {rounds} round(s), a quota of {RATE}/s and a burst of {BURST} a peer; the server \
         (2 workers) and the generator (1 thread) share this machine's {} cores",
        std::thread::available_parallelism().map_or(0, usize::from),
    );
    let mut runs: Vec<Vec<Summary>> = vec![Vec::new(); variants.len()];
    for round in 0..rounds {
        for turn in 0..variants.len() {
            let index = (round + turn) % variants.len();
            let summary = measure(variants[index], run);
            println!("round {}: {}", round + 1, summary.line());
            runs[index].push(summary);
        }
    }
    let summaries: Vec<tally::Combined> = runs.into_iter().map(tally::Combined::new).collect();
    if rounds > 1 {
        for summary in &summaries {
            println!("median: {}", summary.median.line());
        }
    }
    if !args.measures() {
        // `cargo test`: the generator ran and every variant answered; nothing is kept.
        for summary in &summaries {
            let median = &summary.median;
            assert!(median.completed > 0, "{}: no response", median.name);
        }
        return;
    }
    let path = target_dir().join("e2e").join("e2e.json");
    let setup = tally::Setup {
        clients: CLIENTS.into(),
        offered: OFFERED,
        rate: RATE,
        burst: BURST,
        rounds,
        run,
        cores: std::thread::available_parallelism().map_or(0, usize::from),
    };
    tally::write(&path, &setup, &summaries).expect("write the e2e results");
    println!("e2e: wrote {}", path.display());
}
