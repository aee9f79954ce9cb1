//! Builds a [`Config`]'s layers: one set of pieces per section, each route's stack from its
//! own pieces and the server's, and the tuners that retune them all.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use ironward::{Adaptive, Criticality, Shed};
use ironward_tokio::SharedChaos;

use super::chaos::ChaosConfig;
use super::file::{Config, Stack};
use super::quota::{QuotaConfig, QuotaKey};
use crate::protect::Shared;
use crate::{
    Clock, Cpu, DeadlineLayer, GateLayer, LimiterLayer, Overloads, PlainAnswer, ProtectLayer,
    Queue, QuotaLayer, QuotaTuner, ShedFailures, ShedLayer, Tuner,
};

/// The sources every piece reads: the clock (each layer's default when `None`) and the CPU.
#[derive(Clone, Debug)]
pub(super) struct Sources {
    pub(super) clock: Option<Clock>,
    pub(super) cpu: Cpu,
}

/// The pieces one section made: the server's, or a route's own.
#[derive(Default)]
struct Pieces {
    shed: Option<ShedLayer>,
    quota: Option<QuotaLayer>,
    limiter: Option<LimiterLayer>,
    gate: Option<GateLayer>,
    deadline: Option<DeadlineLayer>,
    chaos: Option<SharedChaos>,
}

/// The tuners of one section's own pieces, each there when the piece is.
#[derive(Debug)]
pub(super) struct Tuners {
    pub(super) shed: Option<Tuner<Shed>>,
    pub(super) quota: Option<QuotaTuner>,
    pub(super) limiter: Option<(Tuner<Adaptive>, Tuner<Option<Queue>>)>,
    pub(super) gate: Option<Tuner<u32>>,
    pub(super) deadline: Option<Tuner<Duration>>,
    /// The chaos piece retunes itself ([`SharedChaos::retune`]).
    pub(super) chaos: Option<SharedChaos>,
}

/// The pieces of one configured stack, shared by its services: the stack a [`ProtectLayer`]
/// of the default classifiers and criticality sources makes.
pub(super) type Stacked = Shared<ShedFailures, Criticality, Overloads, Criticality>;

/// What one route runs: the stack of pieces, and inside it, around the handler, the chaos
/// piece if the route has one.
pub(super) struct Route {
    pub(super) stack: Stacked,
    pub(super) chaos: Option<SharedChaos>,
    /// What an injected error and a replaced response answer, shared by the route's
    /// services.
    pub(super) answer: Arc<PlainAnswer>,
}

impl Route {
    fn new(pieces: &Pieces) -> Self {
        Self {
            stack: pieces.stack().share(),
            chaos: pieces.chaos.clone(),
            answer: Arc::new(PlainAnswer),
        }
    }
}

/// A whole configuration built: the stack of each route, the stack of the rest, and the
/// tuners of every section.
pub(super) struct Built {
    pub(super) server: Route,
    pub(super) routes: HashMap<String, Route>,
    pub(super) tuners: Vec<(Option<String>, Tuners)>,
}

/// Builds `config` on `sources`.
pub(super) fn build(config: &Config, sources: &Sources) -> Built {
    let server = Pieces::of(&config.server, "server", sources);
    let mut tuners = vec![(None, server.tuners())];
    let mut routes = HashMap::with_capacity(config.routes.len());
    for (path, own) in &config.routes {
        // A route's pieces report under its path, which lives as long as the process: a
        // metric label is `'static`, and a stack is built once, never on a reload.
        let name: &'static str = Box::leak(path.clone().into_boxed_str());
        let pieces = Pieces::of(own, name, sources);
        tuners.push((Some(path.clone()), pieces.tuners()));
        routes.insert(path.clone(), Route::new(&pieces.over(&server)));
    }
    Built {
        server: Route::new(&server),
        routes,
        tuners,
    }
}

impl Pieces {
    /// The pieces `stack` gives, reporting under `name`.
    fn of(stack: &Stack, name: &'static str, sources: &Sources) -> Self {
        let clock = sources.clock.as_ref();
        Self {
            shed: stack.shed.map(|shed| {
                let layer = ShedLayer::new(shed, sources.cpu.clone()).with_name(name);
                match clock {
                    Some(clock) => layer.with_clock(clock.clone()),
                    None => layer,
                }
            }),
            quota: stack.quota.as_ref().map(|quota| {
                let layer = quota_layer(quota).with_name(name);
                match clock {
                    Some(clock) => layer.with_clock(clock.clone()),
                    None => layer,
                }
            }),
            limiter: stack.limiter.map(|policy| {
                let mut layer = LimiterLayer::new(policy).with_name(name);
                if let Some(queue) = stack.queue {
                    layer = layer.with_queue(queue);
                }
                match clock {
                    Some(clock) => layer.with_clock(clock.clone()),
                    None => layer,
                }
            }),
            gate: stack
                .gate
                .map(|limit| GateLayer::new(limit).with_name(name)),
            deadline: stack
                .deadline
                .map(|budget| DeadlineLayer::tuned(budget).with_name(name)),
            chaos: stack.chaos.as_ref().map(|chaos| chaos_piece(chaos, name)),
        }
    }

    /// This section's own pieces, and the server's for the rest: a route's stack. The
    /// limiter and the gate are one piece, the concurrency limit.
    fn over(&self, server: &Self) -> Self {
        let own_concurrency = self.limiter.is_some() || self.gate.is_some();
        let concurrency = if own_concurrency { self } else { server };
        Self {
            shed: self.shed.clone().or_else(|| server.shed.clone()),
            quota: self.quota.clone().or_else(|| server.quota.clone()),
            limiter: concurrency.limiter.clone(),
            gate: concurrency.gate.clone(),
            deadline: self.deadline.clone().or_else(|| server.deadline.clone()),
            chaos: self.chaos.clone().or_else(|| server.chaos.clone()),
        }
    }

    /// The stack of these pieces, in [`ProtectLayer`]'s order.
    fn stack(&self) -> ProtectLayer {
        let mut stack = ProtectLayer::new();
        if let Some(shed) = &self.shed {
            stack = stack.shed(shed.clone());
        }
        if let Some(quota) = &self.quota {
            stack = stack.quota(quota.clone());
        }
        if let Some(limiter) = &self.limiter {
            stack = stack.limiter(limiter.clone());
        }
        if let Some(gate) = &self.gate {
            stack = stack.gate(gate.clone());
        }
        if let Some(deadline) = &self.deadline {
            stack = stack.deadline(deadline.clone());
        }
        stack
    }

    /// The tuners of these pieces, taken once every builder has run.
    fn tuners(&self) -> Tuners {
        Tuners {
            shed: self.shed.as_ref().map(ShedLayer::tuner),
            quota: self.quota.as_ref().map(QuotaLayer::tuner),
            limiter: self
                .limiter
                .as_ref()
                .map(|layer| (layer.tuner(), layer.queue_tuner())),
            gate: self.gate.as_ref().map(GateLayer::tuner),
            deadline: self.deadline.as_ref().and_then(DeadlineLayer::tuner),
            chaos: self.chaos.clone(),
        }
    }
}

/// The chaos piece `chaos` describes, reporting under its own name or the section's
/// `name`.
fn chaos_piece(chaos: &ChaosConfig, name: &'static str) -> SharedChaos {
    let piece = match SharedChaos::new(chaos.policy.clone()) {
        Ok(piece) => piece,
        // A policy read from a file was checked as it was read; one a program changed in
        // code may be refused here, where there is no error to return: the piece is then
        // off rather than the server down, and says so.
        Err(error) => {
            tracing::warn!(%error, name, "a chaos policy was refused: the piece is off");
            SharedChaos::new(ironward::chaos::Chaos::default())
                .unwrap_or_else(|_| unreachable!("the default policy is valid"))
        }
    };
    // A name of the file's lives as long as the process, as a route's does: a stack is
    // built once, never on a reload, which refuses a changed name.
    let name = match &chaos.name {
        Some(own) => Box::leak(own.clone().into_boxed_str()),
        None => name,
    };
    let piece = piece.with_name(name);
    match chaos.seed {
        Some(seed) => piece.with_seed(seed),
        None => piece,
    }
}

/// The rate limit `quota` describes, keyed as it says.
fn quota_layer(quota: &QuotaConfig) -> QuotaLayer {
    let (limit, keys) = (quota.limit, quota.max_keys);
    let layer = match &quota.key {
        QuotaKey::Global => QuotaLayer::new(limit),
        QuotaKey::Peer => QuotaLayer::by_peer(limit, keys),
        QuotaKey::Client(client) => QuotaLayer::by_client(limit, keys, *client),
        QuotaKey::Header(name) => QuotaLayer::by_header(limit, keys, name.clone()),
    };
    layer.with_headers(quota.headers)
}
