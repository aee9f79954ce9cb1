//! The soak's server: the `server` example's stack, read from its `ironward.toml`, each piece
//! built as a layer of its own so that the soak can read its in-flight count, and a seeded
//! chaos layer innermost, around the handler.

use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use axum::routing::get;
use ironward::chaos::{Chaos, Delay, Fault, Injection};
use ironward_tower::config::{Config, QuotaKey};
use ironward_tower::{
    ChaosLayer, Cpu, CpuSampler, DeadlineLayer, GateLayer, ProtectLayer, Quota, QuotaLayer,
    ShedLayer,
};
use tower::BoxError;

/// The `server` example's configuration: the stack the soak puts under load.
const CONFIG: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../ironward-tower/examples/server/ironward.toml"
);

/// The name every server piece reports under.
pub(crate) const NAME: &str = "soak";

/// The longest latency the chaos injects: well inside the stack's deadline, so that only an
/// abort is cut by it.
const LATENCY: Duration = Duration::from_millis(300);

/// The server's pieces, kept to read their counts while and after the load runs.
pub(crate) struct Pieces {
    pub(crate) shed: ShedLayer,
    pub(crate) gate: GateLayer,
    pub(crate) chaos: ChaosLayer,
    /// The deadline every request runs under: the longest an abort hangs.
    pub(crate) deadline: Duration,
    /// The quota's limit, a second, per client address.
    pub(crate) quota_rate: f64,
}

/// The chaos the soak injects, 19 % of requests in all: errors (5 %), latencies up to
/// [`LATENCY`] (10 %), aborts that hang until the deadline (1 %) and replaced responses (3 %).
pub(crate) fn policy() -> Chaos {
    Chaos {
        enabled: true,
        shadow: false,
        faults: vec![
            Injection {
                fault: Fault::Error,
                rate: 0.05,
            },
            Injection {
                fault: Fault::Latency(Delay::Uniform {
                    low: Duration::from_millis(10),
                    high: LATENCY,
                }),
                rate: 0.10,
            },
            Injection {
                fault: Fault::Abort,
                rate: 0.01,
            },
            Injection {
                fault: Fault::Replace,
                rate: 0.03,
            },
        ],
    }
}

/// Builds the server's pieces from the `server` example's file and `seed`, and serves them on
/// a free loopback port: the address, the pieces and the server's task.
pub(crate) async fn start(
    seed: u64,
) -> Result<(SocketAddr, Pieces, tokio::task::JoinHandle<()>), BoxError> {
    let config = Config::from_file(CONFIG)?;
    let stack = &config.server;
    let shed = stack
        .shed
        .ok_or("the server example's file has no [server.shed]")?;
    let quota = stack
        .quota
        .as_ref()
        .ok_or("the server example's file has no [server.quota]")?;
    if quota.key != QuotaKey::Peer {
        return Err("the soak gives each client an address: it needs a quota by peer".into());
    }
    let gate = stack.gate.ok_or("the server example's file has no gate")?;
    let deadline = stack
        .deadline
        .ok_or("the server example's file has no deadline")?;

    // The shedder reads the CPU as `Protection` does: a sampler of this machine's.
    let shed = ShedLayer::new(shed, Cpu::from(&CpuSampler::new())).with_name(NAME);
    let gate = GateLayer::new(gate).with_name(NAME);
    let rate_limit = QuotaLayer::by_peer(quota.limit, quota.max_keys)
        .with_headers(quota.headers)
        .with_name(NAME);
    let chaos = ChaosLayer::new(policy())?.with_seed(seed).with_name(NAME);
    let protect = ProtectLayer::new()
        .shed(shed.clone())
        .quota(rate_limit)
        .gate(gate.clone())
        .deadline(DeadlineLayer::new(deadline).with_name(NAME));

    // `Router::layer` wraps each route: the first layer given is the innermost.
    let app = Router::new()
        .route("/hello", get(|| async { "hello\n" }))
        .layer(chaos.clone())
        .layer(protect);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
    let addr = listener.local_addr()?;
    let server = tokio::spawn(async move {
        let serve = axum::serve(
            listener,
            app.into_make_service_with_connect_info::<SocketAddr>(),
        );
        if let Err(err) = serve.await {
            eprintln!("the server stopped: {err}");
        }
    });
    let pieces = Pieces {
        shed,
        gate,
        chaos,
        deadline,
        quota_rate: quota_rate(&quota.limit),
    };
    Ok((addr, pieces, server))
}

/// A quota's sustained rate a second, for sizing the clients.
fn quota_rate(limit: &Quota) -> f64 {
    match *limit {
        Quota::Bucket { rate, .. } => rate,
        Quota::Sliding { quota, window } => f64::from(quota) / window.as_secs_f64().max(1e-3),
        Quota::Period { quota, period, .. } => f64::from(quota) / period.as_secs_f64().max(1e-3),
    }
}
