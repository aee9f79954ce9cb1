//! A Redis outage drill: a deadpool-redis pool of 8 under load, its redis-server killed for
//! a few seconds and started again, once with the ward in front of the pool's connects and
//! once without (the control), each on a redis-server of its own started on a free port.
//!
//! ```sh
//! cargo run -p ironward-pool --features deadpool --example redis_outage -- --outage 3
//! ```
//!
//! Needs `redis-server` on the `PATH` (Debian's package `redis-server`).

#[path = "../tests/common/drill.rs"]
mod drill;
#[path = "../tests/common/server.rs"]
mod server;

use std::process::ExitCode;
use std::time::{Duration, Instant};

use deadpool::managed::PoolError;
use ironward::RECONNECT;
use ironward_pool::{WardError, Warded};

use drill::{Counting, Plan, Report};
use server::Server;

fn is_refused<E>(err: &PoolError<WardError<E>>) -> bool {
    matches!(err, PoolError::Backend(err) if err.is_refused())
}

fn never_refused<E>(_: &PoolError<E>) -> bool {
    false
}

/// The outage's length in seconds from `--outage N`: 3 unless given, at most 60.
fn outage() -> Result<Duration, String> {
    let mut args = std::env::args().skip(1);
    let mut outage = 3.0;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--outage" => {
                let value = args.next().ok_or("--outage needs a number of seconds")?;
                outage = value
                    .parse::<f64>()
                    .ok()
                    .filter(|s| (0.1..=60.0).contains(s))
                    .ok_or(format!("--outage {value}: seconds from 0.1 to 60"))?;
            }
            other => return Err(format!("unknown argument {other}: try --outage 3")),
        }
    }
    Ok(Duration::from_secs_f64(outage))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ExitCode {
    let outage = match outage() {
        Ok(outage) => outage,
        Err(err) => {
            eprintln!("redis_outage: {err}");
            return ExitCode::FAILURE;
        }
    };
    let servers = Server::start().and_then(|a| Ok((a, Server::start()?)));
    let (mut warded_server, mut control_server) = match servers {
        Ok(servers) => servers,
        Err(err) => {
            eprintln!("redis_outage: {err}");
            return ExitCode::FAILURE;
        }
    };
    let origin = Instant::now();
    let plan = Plan {
        size: 8,
        outage,
        patience: Duration::from_secs(10),
    };
    let manager = |server: &Server| {
        deadpool_redis::Manager::new(server.url()).expect("the server's URL is valid")
    };
    let (counting, warded_log) = Counting::new(manager(&warded_server), origin);
    let warded = Warded::new(counting);
    let handle = warded.handle();
    let (control, control_log) = Counting::new(manager(&control_server), origin);

    println!(
        "A pool of {} under load; redis-server killed for {:.1} s, then started again.\n",
        plan.size,
        outage.as_secs_f64()
    );
    let (ward, bare) = tokio::join!(
        drill::run(
            &mut warded_server,
            warded,
            warded_log,
            origin,
            plan,
            is_refused
        ),
        drill::run(
            &mut control_server,
            control,
            control_log,
            origin,
            plan,
            never_refused
        ),
    );
    let counts = handle.counts();
    print("with the ward", &ward);
    println!(
        "  refused connects by piece: breaker {}, bucket {}, backoff {}",
        counts.refused_by_breaker, counts.refused_by_bucket, counts.refused_by_backoff
    );
    println!(
        "  checkouts during the outage: {} failed fast with the ward's refusal (median {:?}), \
         {} with a backend error",
        ward.refused, ward.median_refusal, ward.failed
    );
    print("without (the control)", &bare);
    println!(
        "  checkouts during the outage: {} failed with a backend error",
        bare.failed
    );
    let policy = RECONNECT;
    println!(
        "\nThe ward's bucket allows {} connects at once and {} a second; its backoff waits \
         {:?} growing to {:?}.",
        policy.burst, policy.rate, policy.backoff.base, policy.backoff.cap
    );
    if ward.back.is_none() || !ward.all_usable {
        eprintln!(
            "redis_outage: the warded pool was not full again within {:?}",
            plan.patience
        );
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

fn print(title: &str, report: &Report) {
    println!("{title}:");
    println!(
        "  connects during the outage: {} ({} in the whole run)",
        report.during_outage().count(),
        report.attempts.len()
    );
    println!(
        "  most connects in any 100 ms: {}",
        report.most_within(Duration::from_millis(100))
    );
    if let Some(gap) = report.least_gap_after_failure() {
        println!("  least wait from a failed connect to the next: {gap:?}");
    }
    match report.back {
        Some(back) => println!("  back to full size {back:.2?} after the restart"),
        None => println!("  not back to full size"),
    }
}
