//! A real cluster of three masters with a replica each, of either [`Flavor`], started on
//! free loopback ports (`--cluster-enabled yes` on each node, then `redis-cli --cluster
//! create`, which builds a Valkey cluster as it builds a Redis one: the two speak one
//! protocol), each node in a directory of its own.

use std::net::Ipv4Addr;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use super::{Flavor, Server};

/// How long the cluster may take to come up, or to promote a replica.
pub const BOUND: Duration = Duration::from_secs(60);

/// What each node's command line adds: a cluster node whose failure is noticed after a
/// second, and whose replicas sync at once (not after the default 5 s wait for other
/// replicas: until a replica has synced it may not take its master's place).
const NODE: [&str; 8] = [
    "--cluster-enabled",
    "yes",
    "--cluster-node-timeout",
    "1000",
    "--cluster-config-file",
    "nodes.conf",
    "--repl-diskless-sync-delay",
    "0",
];

/// Three masters and three replicas on free loopback ports, each in a directory of its own.
pub struct Cluster {
    /// The nodes, `None` once killed.
    nodes: Vec<Option<Server>>,
}

impl Cluster {
    /// A cluster of `flavor`, up (`cluster_state:ok` on every node) and every replica
    /// synced with its master.
    pub fn start(flavor: Flavor) -> Self {
        let nodes = (0..6)
            .map(|_| Some(Server::of_with(flavor, &NODE)))
            .collect();
        let cluster = Self { nodes };
        let created = Command::new("redis-cli")
            .args(["--cluster", "create"])
            .args(cluster.live().map(|port| format!("127.0.0.1:{port}")))
            .args(["--cluster-replicas", "1", "--cluster-yes"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("redis-cli must be installed with redis-server");
        assert!(created.success(), "redis-cli --cluster create failed");
        cluster.wait_until("the cluster is up", |c| c.state_ok(c.live()));
        cluster.wait_until("every replica has synced", |c| {
            c.live().all(|port| {
                let info = Self::cli(port, &["INFO", "replication"]);
                info.contains("role:master") || info.contains("master_link_status:up")
            })
        });
        cluster
    }

    /// The live nodes' URLs.
    pub fn urls(&self) -> Vec<String> {
        self.live()
            .map(|port| format!("redis://127.0.0.1:{port}/"))
            .collect()
    }

    /// The live nodes' ports.
    pub fn live(&self) -> impl Iterator<Item = u16> + '_ {
        self.nodes.iter().flatten().map(Server::port)
    }

    /// `redis-cli -p port ARGS...`, its output.
    pub fn cli(port: u16, args: &[&str]) -> String {
        let out = Command::new("redis-cli")
            .args([
                "-h",
                &Ipv4Addr::LOCALHOST.to_string(),
                "-p",
                &port.to_string(),
            ])
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("redis-cli runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Whether every node of `ports` says `cluster_state:ok`.
    pub fn state_ok(&self, mut ports: impl Iterator<Item = u16>) -> bool {
        ports.all(|port| Self::cli(port, &["CLUSTER", "INFO"]).contains("cluster_state:ok"))
    }

    /// Waits until `done`, polling every 100 ms, and panics saying `what` past [`BOUND`].
    pub fn wait_until(&self, what: &str, done: impl Fn(&Self) -> bool) {
        let deadline = Instant::now() + BOUND;
        while !done(self) {
            assert!(Instant::now() < deadline, "{what}: not within {BOUND:?}");
            thread::sleep(Duration::from_millis(100));
        }
    }

    /// The port of the master that serves `key`'s slot now, if one does (none between a
    /// master's failure and its replica's promotion).
    pub fn master_of(&self, key: &str) -> Option<u16> {
        let any = self.live().next().expect("a live node");
        let slot: u16 = Self::cli(any, &["CLUSTER", "KEYSLOT", key])
            .trim()
            .parse()
            .expect("a slot number");
        for line in Self::cli(any, &["CLUSTER", "NODES"]).lines() {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.len() < 9 || !fields[2].contains("master") || fields[2].contains("fail") {
                continue;
            }
            let owns = fields[8..].iter().any(|range| {
                let mut ends = range.split('-').map(|n| n.parse::<u16>().ok());
                match (ends.next().flatten(), ends.next().flatten()) {
                    (Some(a), Some(b)) => (a..=b).contains(&slot),
                    (Some(a), None) => a == slot,
                    _ => false,
                }
            });
            if owns {
                // `ip:port@bus`, with `,hostname` and more after it on Valkey and Redis 7.
                let port = fields[1].split(['@', ':']).nth(1).expect("host:port@bus");
                return Some(port.parse().expect("a port"));
            }
        }
        None
    }

    /// Kills the node on `port` at once (SIGKILL), as a crash would.
    pub fn kill(&mut self, port: u16) {
        for node in &mut self.nodes {
            if node.as_ref().is_some_and(|n| n.port() == port) {
                // Dropped: killed at once (SIGKILL), as a crash would.
                *node = None;
            }
        }
    }
}
