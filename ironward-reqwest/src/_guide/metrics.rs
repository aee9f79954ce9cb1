//! Metrics and events: what the middleware and the breaker count with the `metrics` feature, and what they log.
//!
//! With the `metrics` feature, the middleware and the breaker count what they do through the
//! [`metrics`](https://docs.rs/metrics) facade, to whichever recorder the application installs
//! (a Prometheus or OpenTelemetry exporter); without it nothing is recorded and no dependency
//! is pulled in. Each registers its handles once, on first use (the middleware's first
//! attempt, the breaker's first decision), its name then final: a middleware or a breaker
//! renamed with [`RetryMiddleware::with_name`] or [`ClientBreaker::with_name`] leaves no
//! series under `name="default"`. An attempt then costs an increment on a handle. The names, units and labels are `ironward-tower`'s, and the stop
//! labels are the core's ([`Stop::as_str`], [`Retried::outcome`]), so a call counts the same
//! through either edge.
//!
//! | name | kind | unit | labels | what |
//! | --- | --- | --- | --- | --- |
//! | `ironward.retry.attempts` | counter | `{attempt}` | `name`, `kind` (`first` or `retry`) | attempts the middleware sent, as [`Retried::attempts`] counts them (an attempt the breaker refuses is not sent) |
//! | `ironward.retry.calls` | counter | `{call}` | `name`, `outcome` (`success` or the stop's label) | calls the middleware finished, labelled by [`Retried::outcome`] |
//! | `ironward.retry.wait` | histogram | `s` | `name` | each wait the middleware decided before a retry, in seconds |
//! | `ironward.requests` | counter | `{request}` | `piece` (`breaker`), `name`, `outcome` (`admitted` or `refused`), `reason` (refused only: `throttled` for the SRE breaker; `open`, `half_open` or `forced_open` for the classic one) | attempts the [`ClientBreaker`] decided on |
//! | `ironward.breaker.ratio` | gauge | `1` | `name` | the drop fraction the breaker's last refusal computed, in `[0, 1]` (1 for a classic breaker's refusal) |
//! | `ironward.breaker.state` | gauge | `1` | `name` | a classic breaker's state, as resilience4j's `CircuitBreaker.State` numbers it: closed 0, open 1, half-open 2, disabled 3, forced open 4, metrics only 5; set when the breaker changes state |
//! | `ironward.breaker.transitions` | counter | `{transition}` | `name`, `from`, `to` (`closed`, `open`, `half_open`, ...) | a classic breaker's changes of state |
//! | `ironward.chaos.injected` | counter | `{request}` | `name` (the [`SharedChaos`]'s), `fault` (`error`, `latency`, `abort`, `replace`), `shadow` (`true` for a fault only reported, `false` for one injected) | faults the [`ChaosMiddleware`]'s shared piece decided, each also a `tracing` event at `DEBUG` with the request's `index` |
//!
//! The `outcome` of a call is `success`, or one of `not_retryable`, `not_replayable`,
//! `attempts_exhausted`, `budget_exhausted`, `server_delay_exceeds_cap`,
//! `invalid_retry_after`, `invalid_settings`, `invalid_input` (the rules' stops),
//! `throttled` (the retry budget) or `refused` (the breaker). Every label is registered with
//! the middleware's first attempt, at zero. A call whose future is dropped before it ends counts its
//! attempts but no outcome.
//!
//! Whatever the feature, each retry is a `tracing` event at `DEBUG` with the middleware's
//! `name`, the failed `attempt`, the `wait`, the `status` and the `reason`; giving up is one
//! with the `attempts`, the time `waited`, the `stop`'s label and the `reason` as a phrase; a
//! breaker refusal is one with the numbers that decided it. None is an error: a refusal to
//! retry is an answer.
//!
//! A classic breaker's state and changes are registered with its first decision (the gauge
//! at 0, closed, and the four changes its record makes at zero) and reported after the
//! decision that made each change, each also a `tracing` event at `INFO`, `breaker changed
//! state`, with the breaker's `name`, `from` and `to` (the states' names) and `from_number`
//! and `to_number` (the gauge's numbers): an operator acts on a breaker that opens or
//! closes. The SRE breaker has no states, and registers neither series. A state put by hand
//! (`Force`, changed by a policy) is no change the breaker makes, and shows in neither.
//!
//! ```
//! use std::time::Duration;
//! use ironward::http_retry::Settings;
//! use ironward_reqwest::RetryMiddleware;
//!
//! // Two policies in one process, told apart by the `name` label.
//! let search = RetryMiddleware::new(Settings { max_retries: 1, ..Settings::default() })
//!     .with_attempt_timeout(Duration::from_millis(300))
//!     .with_name("search");
//! let reports = RetryMiddleware::default().with_name("reports");
//! assert_eq!((search.name(), reports.name()), ("search", "reports"));
//! ```
//!
//! [`RetryMiddleware::with_name`]: crate::RetryMiddleware::with_name
//! [`SharedChaos`]: crate::SharedChaos
//! [`ChaosMiddleware`]: crate::ChaosMiddleware
//! [`ClientBreaker::with_name`]: crate::ClientBreaker::with_name
//! [`Stop::as_str`]: crate::Stop::as_str
//! [`Retried::outcome`]: crate::Retried::outcome
//! [`Retried::attempts`]: crate::Retried::attempts
//! [`ClientBreaker`]: crate::ClientBreaker
