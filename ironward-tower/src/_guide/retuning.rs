//! Live retuning: a tuner per stateful layer changes the policy of every clone at once.
//!
//! Every layer that holds a core value hands out a tuner ([`BreakerLayer::tuner`],
//! [`ShedLayer::tuner`], [`QuotaLayer::tuner`], [`GateLayer::tuner`],
//! [`LimiterLayer::tuner`], [`HttpRetryLayer::tuner`] for a retry's settings, and
//! [`DeadlineLayer::tuner`] for a [`tuned`](crate::DeadlineLayer::tuned) deadline): one `Arc` clone of the shared state, whose `retune` changes the policy in place for every service and clone
//! at once, on their next request, and keeps the core's history (the breaker's window, the
//! requests in flight, a bucket's tokens, a window's stamps, the holders of a gate), so a
//! configuration reload neither forgets an outage nor hands out a fresh allowance. A rate
//! limit of another kind than the one in force is refused with [`KindMismatch`]. A
//! [`ChaosLayer`](crate::ChaosLayer) is retuned through the layer itself,
//! [`ChaosLayer::retune`](crate::ChaosLayer::retune), which refuses a policy the core's
//! `Injector` refuses and keeps the one in force, with the requests' numbering.
//!
//! A stack shares its layers' state, so the same tuners retune it: a
//! [`ProtectLayer`](crate::ProtectLayer) or a [`ClientLayer`](crate::ClientLayer) built from
//! layers whose tuners were taken first. With the `config` feature, a client stack read from a
//! file is reloaded by `ClientReload::apply`, which refuses, before any piece is touched, a
//! file that adds or removes a piece or changes the breaker's family.
//!
//! [`BreakerLayer::tuner`]: crate::BreakerLayer::tuner
//! [`ShedLayer::tuner`]: crate::ShedLayer::tuner
//! [`QuotaLayer::tuner`]: crate::QuotaLayer::tuner
//! [`GateLayer::tuner`]: crate::GateLayer::tuner
//! [`LimiterLayer::tuner`]: crate::LimiterLayer::tuner
//! [`DeadlineLayer::tuner`]: crate::DeadlineLayer::tuner
//! [`HttpRetryLayer::tuner`]: crate::HttpRetryLayer::tuner
//! [`KindMismatch`]: crate::KindMismatch
