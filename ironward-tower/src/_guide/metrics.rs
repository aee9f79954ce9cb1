//! Metrics and events: what each layer counts with the `metrics` feature, and what it logs.
//!
//! With the `metrics` feature, every refusing layer counts its decisions through the
//! [`metrics`](https://docs.rs/metrics) facade, to whichever recorder the application installs
//! (a Prometheus or OpenTelemetry exporter); without it nothing is recorded and no dependency
//! is pulled in. Each layer registers its handles once, when it first makes a service
//! (`Layer::layer`), its name then final: a layer renamed with `with_name` leaves no series
//! under `name="default"`; the limiter's series split by criticality register on their first
//! count, so only the classes a service sees appear. A decision then costs an increment on a handle, and nothing at all
//! while no recorder is installed. Names follow the OpenTelemetry
//! conventions: dot-separated, lower case, the unit in braces for a count of things.
//!
//! | name | kind | unit | labels | what |
//! | --- | --- | --- | --- | --- |
//! | `ironward.requests` | counter | `{request}` | `piece`, `name`, `outcome`, `reason` (refused and shadowed only) | calls a layer decided on |
//! | `ironward.breaker.ratio` | gauge | `1` | `name` | the drop fraction the breaker's last refusal computed, in `[0, 1]` (1 for a classic breaker's refusal) |
//! | `ironward.breaker.state` | gauge | `1` | `name` | a classic breaker's state, as resilience4j's `CircuitBreaker.State` numbers it: closed 0, open 1, half-open 2, disabled 3, forced open 4, metrics only 5; set when the breaker changes state |
//! | `ironward.breaker.transitions` | counter | `{transition}` | `name`, `from`, `to` (`closed`, `open`, `half_open`, ...) | a classic breaker's changes of state |
//! | `ironward.shed.in_flight` | gauge | `{request}` | `name` | calls the shedder admitted and has not yet seen complete, set on each decision and each completion |
//! | `ironward.limiter.limit` | gauge | `{request}` | `name` | the limiter's limit, set when its layer makes a service, after each completion and at each retune |
//! | `ironward.retry.attempts` | counter | `{attempt}` | `name`, `kind` (`first` or `retry`) | attempts [`HttpRetryLayer`] sent, as [`Retried::attempts`] counts them |
//! | `ironward.retry.calls` | counter | `{call}` | `name`, `outcome` (`success` or the stop's label: `not_retryable`, `not_replayable`, `attempts_exhausted`, `budget_exhausted`, `server_delay_exceeds_cap`, `invalid_retry_after`, `invalid_settings`, `invalid_input`, `throttled`, `refused`) | calls [`HttpRetryLayer`] finished, labelled by [`Retried::outcome`] |
//! | `ironward.retry.wait` | histogram | `s` | `name` | each wait [`HttpRetryLayer`] decided before a retry, in seconds |
//! | `ironward.chaos.injected` | counter | `{request}` | `name`, `fault` (`error`, `latency`, `abort` or `replace`), `shadow` (`true` or `false`) | faults [`ChaosLayer`] injected into calls on purpose (`shadow="false"`), or a policy in shadow mode decided and only reported (`shadow="true"`) |
//! | `ironward.config.reloads` | counter | `{reload}` | `outcome` (`applied` or `refused`) | reloads of a configured stack (the `config` feature's `Protection`), applied or refused |
//!
//! The labels take a small fixed set of values:
//!
//! - `piece`: `breaker`, `shed`, `rate_limit`, `gate`, `limiter` or `deadline`;
//! - `outcome`: `admitted`, `refused`, or `shadowed`: a call a layer in [`Mode::Shadow`]
//!   would have refused and let through (a shadow layer counts no `refused`);
//! - `reason`, on refusals and shadowed calls: `throttled` (the SRE breaker), `open`,
//!   `half_open` (every probe out) or `forced_open` (the classic breaker), `overloaded`, `cooling`
//!   or `floor` (shed: the [`ShedReason`](ironward::ShedReason)'s heat, or a class held
//!   under the floor a more critical class's refusal raised), `limited` (rate limit), `full`
//!   (gate), `full`, `floor`, `queue` or `expired` (limiter: no room for the class, a class
//!   under the floor, turned away by the queue, or out of time in it), `exceeded` or
//!   `elapsed` (deadline: the time had run out when the request arrived, or it
//!   ran out while the inner service worked on the call, which the enforcing layer cuts and
//!   a shadow one lets finish). A call with a deadline is counted once, when it ends:
//!   `admitted` if it answered in time (a response ready at the deadline is in time) or was
//!   dropped before its deadline, `elapsed` if it was cut or dropped after it;
//! - `criticality`, on the limiter's series only: the request's class, `sheddable`,
//!   `sheddable_concurrent`, `critical` or `critical_plus`;
//! - `name`: the layer's name, `"default"` unless set with [`BreakerLayer::with_name`],
//!   [`ShedLayer::with_name`], [`GateLayer::with_name`], [`LimiterLayer::with_name`],
//!   [`DeadlineLayer::with_name`],
//!   [`HttpRetryLayer::with_name`], [`ChaosLayer::with_name`] or, for
//!   a rate limit, its policy name, [`QuotaLayer::with_name`], so that two breakers in one
//!   process are told apart.
//!
//! The breaker's ratio gauge is set on refusals only: an admitted call's drop fraction is not
//! returned by the core, and reading it would scan the window a second time on every call.
//! For the standing throttle now, read [`BreakerLayer::ratio`].
//!
//! The state gauge and the transitions counter are a classic breaker's, whose states are
//! what an operator alerts on; the SRE breaker, whose refusals follow its record by degrees,
//! registers neither. Both are registered with the ratio (the gauge at 0, closed, and the
//! four changes the record makes, closed to open, open to half-open, half-open to closed
//! and half-open to open, at zero), and reported after the decision that made the change:
//! the call that tripped the breaker, the first call after its open wait (which turns it
//! half-open and is its first probe), the last probe's outcome. A state put by hand
//! (`Force`, a policy, changed by a retune) is no change the breaker makes, and shows in
//! neither: the gauge reads the state its record put it in.
//!
//! Each change of state is also a `tracing` event at `INFO`, `breaker changed state`, with
//! the layer's `name`, `from` and `to` (the states' names) and `from_number` and
//! `to_number` (the gauge's numbers): a breaker that opens or closes is news an operator
//! acts on, where a refusal is one answer among many.
//!
//! A chaos layer counts nothing itself: its decisions come from
//! [`SharedChaos::next`](ironward_tokio::SharedChaos::next), which counts them for every
//! chaos edge alike (this layer, the front door's `Faults`, the reqwest middleware). Shadow
//! decisions are a `shadow` label on the one counter, not a counter of their own, so that a
//! dashboard compares what a shadow run would have injected with what a live one does by
//! one label; a query of the calls harmed on purpose filters `shadow="false"`. Each series
//! registers when it first counts: a policy injects only the faults it lists. Each fault
//! decided is a `tracing` event at `DEBUG`, `chaos decided a fault`, with the `name`, the
//! `fault`, the request's `index` in arrival order, `shadow` and the drawn `delay`.
//!
//! Whatever the feature, each refusal is a `tracing` event at the `DEBUG` level (a refusal is
//! an answer, not an error), with the layer's `name`, its `outcome` (`refused` or `shadowed`)
//! and the numbers that decided it as fields.
//!
//! [`HttpRetryLayer`]: crate::HttpRetryLayer
//! [`ChaosLayer`]: crate::ChaosLayer
//! [`ChaosLayer::with_name`]: crate::ChaosLayer::with_name
//! [`Retried::attempts`]: crate::Retried::attempts
//! [`Retried::outcome`]: crate::Retried::outcome
//! [`Mode::Shadow`]: crate::Mode::Shadow
//! [`BreakerLayer::with_name`]: crate::BreakerLayer::with_name
//! [`ShedLayer::with_name`]: crate::ShedLayer::with_name
//! [`GateLayer::with_name`]: crate::GateLayer::with_name
//! [`LimiterLayer::with_name`]: crate::LimiterLayer::with_name
//! [`DeadlineLayer::with_name`]: crate::DeadlineLayer::with_name
//! [`HttpRetryLayer::with_name`]: crate::HttpRetryLayer::with_name
//! [`QuotaLayer::with_name`]: crate::QuotaLayer::with_name
//! [`BreakerLayer::ratio`]: crate::BreakerLayer::ratio
