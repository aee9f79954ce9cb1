//! The configuration's records: [`Config`], its [`Stack`] sections and the [`QuotaConfig`]
//! of a rate limit, each checked as it is read.

use std::collections::BTreeMap;
use std::time::Duration;

use ironward::{Adaptive, Shed};
use serde::{Deserialize, Serialize, Serializer};

use super::value::{Count, Factor, Humane};
use crate::Queue;

use super::chaos::ChaosConfig;
use super::client::ClientConfig;
use super::quota::QuotaConfig;

/// A whole configuration: the server's stack and the routes that override it.
///
/// Read from TOML by [`Config::from_toml`] (whose errors name the field and the line), or
/// from any serde format by its `Deserialize`, which checks the same rules: a value out of
/// its range, an unknown field or two pieces that exclude each other are errors of the
/// format, and a `Config` that exists is one a [`Protection`](super::Protection) can build.
/// [`Serialize`] writes it back in the same form, for a debug endpoint. The
/// [module docs](super) describe the format.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, try_from = "RawConfig")]
#[non_exhaustive]
pub struct Config {
    /// The stack every route runs, unless its own section overrides a piece.
    #[serde(default)]
    pub server: Stack,
    /// Each route's overrides, by axum's route path (`"/users/{id}"`, as
    /// `axum::extract::MatchedPath` reports it).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub routes: BTreeMap<String, Stack>,
    /// The client stack (`[client]`), which [`Protection::client`](super::Protection::client)
    /// builds and each reload retunes with the server's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientConfig>,
}

/// The same fields, read before their rules across sections are checked.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    server: Stack,
    #[serde(default)]
    routes: BTreeMap<String, Stack>,
    #[serde(default)]
    client: Option<ClientConfig>,
}

impl TryFrom<RawConfig> for Config {
    type Error = String;

    fn try_from(raw: RawConfig) -> Result<Self, String> {
        if let Some(path) = raw.routes.keys().find(|path| !path.starts_with('/')) {
            return Err(format!(
                "the route {path:?} does not start with `/`: a route is named by its path as \
                 the router has it, such as \"/users/{{id}}\""
            ));
        }
        Ok(Self {
            server: raw.server,
            routes: raw.routes,
            client: raw.client,
        })
    }
}

/// One section: the server's (`[server]`) or a route's (`[routes."/path"]`). Every piece is
/// optional; in a route's section a piece given replaces the server's, and a piece left out
/// is the server's own, shared (its state, and for a rate limit its budget, count the route's
/// requests with the server's).
///
/// The pieces run in [`ProtectLayer`](crate::ProtectLayer)'s order: shed, quota, limiter or
/// gate, deadline; then chaos, innermost, just around the handler.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, try_from = "RawStack")]
#[non_exhaustive]
pub struct Stack {
    /// The load shedder's policy ([`ShedLayer`](crate::ShedLayer)), on the CPU reading.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shed: Option<Shed>,
    /// The rate limit ([`QuotaLayer`](crate::QuotaLayer)).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quota: Option<QuotaConfig>,
    /// The adaptive concurrency limit's policy ([`LimiterLayer`](crate::LimiterLayer)).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limiter: Option<Adaptive>,
    /// The limiter's queue, `None` for none: only beside a `limiter` of the same section.
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "queue")]
    pub queue: Option<Queue>,
    /// The fixed concurrency limit ([`GateLayer`](crate::GateLayer)), at least 1: in place of
    /// a limiter.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gate: Option<u32>,
    /// Each request's time budget ([`DeadlineLayer`](crate::DeadlineLayer)); `"0s"` is none.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "super::value::optional::serialize"
    )]
    pub deadline: Option<Duration>,
    /// Faults injected on purpose ([`ChaosLayer`](crate::ChaosLayer)), innermost: the
    /// other pieces see them as the handler's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chaos: Option<ChaosConfig>,
}

/// The same fields, each read and checked alone.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStack {
    shed: Option<Shed>,
    quota: Option<QuotaConfig>,
    limiter: Option<Adaptive>,
    queue: Option<RawQueue>,
    gate: Option<Count>,
    deadline: Option<Humane>,
    chaos: Option<ChaosConfig>,
}

impl TryFrom<RawStack> for Stack {
    type Error = String;

    fn try_from(raw: RawStack) -> Result<Self, String> {
        if raw.gate.is_some() && raw.limiter.is_some() {
            return Err(
                "`gate` and `limiter` are both set: a stack has one concurrency limit, \
                        the fixed gate or the adaptive limiter; keep one"
                    .into(),
            );
        }
        if raw.queue.is_some() && raw.limiter.is_none() {
            return Err(
                "`queue` is set without a `limiter` in the same section: the queue is \
                        the adaptive limiter's; add a `limiter` or remove the `queue`"
                    .into(),
            );
        }
        if let Some(queue) = &raw.queue
            && queue.initial.0 > queue.max.0
        {
            return Err(format!(
                "the queue's `initial` ({}) is over its `max` ({}): no call would be turned \
                 away gradually; give `max` at least `initial`",
                queue.initial.0, queue.max.0
            ));
        }
        Ok(Self {
            shed: raw.shed,
            quota: raw.quota,
            limiter: raw.limiter,
            queue: raw.queue.map(Queue::from),
            gate: raw.gate.map(|Count(limit)| limit),
            deadline: raw.deadline.map(|Humane(budget)| budget),
            chaos: raw.chaos,
        })
    }
}

/// A limiter's queue as written: [`Queue`]'s fields, its defaults for those left out.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawQueue {
    #[serde(default = "initial")]
    initial: Factor,
    #[serde(default = "max")]
    max: Factor,
    #[serde(default = "wait", with = "ironward::humane")]
    wait: Duration,
}

fn initial() -> Factor {
    Factor(crate::QUEUE.initial)
}

fn max() -> Factor {
    Factor(crate::QUEUE.max)
}

fn wait() -> Duration {
    crate::QUEUE.wait
}

impl From<RawQueue> for Queue {
    fn from(raw: RawQueue) -> Self {
        Queue {
            initial: raw.initial.0,
            max: raw.max.0,
            wait: raw.wait,
        }
    }
}

/// A stack's queue written as [`RawQueue`] is.
fn queue<S: Serializer>(queue: &Option<Queue>, s: S) -> Result<S::Ok, S::Error> {
    queue
        .map(|queue| RawQueue {
            initial: Factor(queue.initial),
            max: Factor(queue.max),
            wait: queue.wait,
        })
        .serialize(s)
}

impl Config {
    /// The stack that serves `route` (`None` for a request no route matched): the server's,
    /// with the route's own pieces in place of the server's.
    #[must_use]
    pub fn stack(&self, route: Option<&str>) -> Stack {
        let Some(own) = route.and_then(|route| self.routes.get(route)) else {
            return self.server.clone();
        };
        let server = &self.server;
        let own_concurrency = own.limiter.is_some() || own.gate.is_some();
        Stack {
            shed: own.shed.or(server.shed),
            quota: own.quota.clone().or_else(|| server.quota.clone()),
            limiter: if own_concurrency {
                own.limiter
            } else {
                server.limiter
            },
            queue: if own_concurrency {
                own.queue
            } else {
                server.queue
            },
            gate: if own_concurrency {
                own.gate
            } else {
                server.gate
            },
            deadline: own.deadline.or(server.deadline),
            chaos: own.chaos.clone().or_else(|| server.chaos.clone()),
        }
    }
}
