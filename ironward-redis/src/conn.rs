//! The connection a [`Store`](crate::Store) runs over: one Redis, or a Redis Cluster.

use redis::aio::{ConnectionLike, ConnectionManager};
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, Pipeline, RedisFuture, Value};

/// One Redis (a `ConnectionManager`, which reconnects), or a cluster (redis-rs's
/// `ClusterConnection`, which follows `MOVED` and `ASK` redirections and refreshes its
/// slot map when the cluster's topology changes, a replica promoted in a dead master's
/// place among them).
///
/// Every script a limiter runs names its keys, which share one hash tag (`{name:key}`),
/// so the cluster connection sends the whole decision to the one master that owns their
/// slot. `Clone` shares the connection.
#[derive(Clone)]
pub(crate) enum Conn {
    Single(ConnectionManager),
    Cluster(ClusterConnection),
}

impl Conn {
    /// Whether Redis is fit to take decisions again, for a store on its fallback: one Redis
    /// answers `PING`; a cluster says `cluster_state:ok` (`CLUSTER INFO`), which it does
    /// only once every slot is served again. A `PING` to a cluster is answered by every
    /// live node while a dead master's slots are still waiting for a replica, and a store
    /// that came back on it would fail over again at the first call to those slots.
    pub(crate) async fn ready(&mut self) -> bool {
        match self {
            Self::Single(_) => {
                let pong = redis::cmd("PING").query_async::<String>(self).await;
                pong.is_ok_and(|pong| pong == "PONG")
            }
            Self::Cluster(_) => {
                let mut info = redis::cmd("CLUSTER");
                info.arg("INFO");
                let info = info.query_async::<String>(self).await;
                info.is_ok_and(|info| info.lines().any(|line| line.trim() == "cluster_state:ok"))
            }
        }
    }
}

impl ConnectionLike for Conn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Self::Single(conn) => conn.req_packed_command(cmd),
            Self::Cluster(conn) => conn.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Self::Single(conn) => conn.req_packed_commands(pipeline, offset, count),
            Self::Cluster(conn) => conn.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Self::Single(conn) => conn.get_db(),
            Self::Cluster(conn) => conn.get_db(),
        }
    }
}
