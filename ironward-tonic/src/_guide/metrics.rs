//! Metrics and events: what the layer counts with the `metrics` feature, and what it logs.
//!
//! With the `metrics` feature, the layer counts what it does through the
//! [`metrics`](https://docs.rs/metrics) facade, to whichever recorder the application installs
//! (a Prometheus or OpenTelemetry exporter); without it nothing is recorded and no dependency
//! is pulled in. It registers its handles once, when it first makes a service
//! (`Layer::layer`), its name then final: a layer renamed with
//! [`GrpcRetryLayer::with_name`] leaves no series under `name="default"`. An attempt then
//! costs an increment on a handle. The names, units and labels are those of
//! `ironward-tower`'s and `ironward-reqwest`'s retries
//! ([`ironward_tokio::meter::Retries`]), so one query reads the HTTP and the gRPC edges.
//!
//! | name | kind | unit | labels | what |
//! | --- | --- | --- | --- | --- |
//! | `ironward.retry.attempts` | counter | `{attempt}` | `name`, `kind` (`first`, `retry` or `hedge`) | attempts the layer sent: a call's first, each retry of a retry policy, each hedge after a hedged call's first |
//! | `ironward.retry.calls` | counter | `{call}` | `name`, `outcome` (`success` or the stop's label) | calls the layer finished, by how they ended |
//! | `ironward.retry.wait` | histogram | `s` | `name` | each wait the layer decided before a retry (the backoff or the pushback), in seconds |
//!
//! The `outcome` of a call is `success` (its status `OK`), or the label of the gRPC
//! [`Halt`](ironward::grpc::Halt) that ended it: `not_retryable` (a code the policy does not
//! retry, or a hedging policy's fatal code), `attempts_exhausted` (`maxAttempts` made),
//! `throttled` (the channel's `retryThrottling`), `pushback` (the server said stop),
//! `committed` (its response headers came, or its body was past the retry buffer, and its
//! status was not `OK`) or `deadline` (the next attempt would start past the deadline, or the
//! deadline passed and the layer cut the call, its body's included). A
//! call committed by its response headers is counted when its body's trailers come, `success`
//! or `committed`; one whose body is dropped before them, like a call whose future is dropped
//! before it ends, counts its attempts but no outcome. A method without a retry or hedging
//! policy is not a retried call: the layer sends it once and counts nothing. A hedged call's
//! attempts overlap, so it records no wait. Every label is registered when the layer makes its
//! first service, at zero.
//!
//! Whatever the feature, each retry is a `tracing` event at `DEBUG`, "retrying request", with
//! the layer's `name`, the failed `attempt` (1 for the first), the `wait`, the `status` (the
//! code's number) and the `reason` (its name, `UNAVAILABLE`); each hedge is one, "hedging
//! request", with its `attempt` (2 for the first hedge) and the time `elapsed` since the call
//! began; a call that stops without succeeding is one, "not retrying", with the `attempts`,
//! the time `waited`, the last `status`, the `stop`'s label and the `reason` as a phrase. None
//! is an error: a refusal to retry is an answer.
//!
//! ```
//! use ironward_tonic::GrpcRetryLayer;
//!
//! // Two channels in one process, told apart by the `name` label.
//! let json = r#"{"methodConfig": [{"name": [{}], "retryPolicy": {"maxAttempts": 3,
//!     "initialBackoff": "0.1s", "maxBackoff": "1s", "backoffMultiplier": 2,
//!     "retryableStatusCodes": ["UNAVAILABLE"]}}]}"#;
//! let payments = GrpcRetryLayer::from_json(json)?.with_name("payments");
//! let search = GrpcRetryLayer::from_json(json)?.with_name("search");
//! assert_eq!((payments.name(), search.name()), ("payments", "search"));
//! # Ok::<(), serde_json::Error>(())
//! ```
//!
//! [`GrpcRetryLayer::with_name`]: crate::GrpcRetryLayer::with_name
