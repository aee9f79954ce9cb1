//! Fidelity to the references: what each piece reproduces, and where the differences are stated.
//!
//! Each piece follows a published design or a reference implementation, and each type's own
//! documentation says where it departs from it and why ("Differs from ..."). This page is the
//! map.
//!
//! | piece | follows | what is the same | where it differs |
//! | --- | --- | --- | --- |
//! | [`SreBreaker`] | Google SRE book, "Handling Overload", eq. 21-1; go-zero `core/breaker/googlebreaker.go` | the drop probability, go-zero's decaying `k`, its protection, probe and recovery scaling | [`SreBreaker`]'s docs: the failing and working runs are divided by the window's size; a refused call is recorded, so a refusing breaker never reads as idle |
//! | [`Shedder`] | go-zero `core/load/adaptiveshedder.go` | hot and full together, the moving average of calls in flight, the cooling time after a refusal | [`Shedder`]'s docs: response times in nanoseconds, the window's extremes kept as buckets complete rather than scanned, classes of [`Criticality`] |
//! | [`Period`] | go-zero `core/limit/periodlimit.go` | `Under`, `Hit` (the event that reaches the quota) and `Over`; aligned periods | costs per request (`take_n`), reservations |
//! | [`Window`] | go-zero `core/collection/rollingwindow.go` | buckets swept by the gap since the last write; `each_past` is go-zero's `ignoreCurrent` | reading never changes the window |
//! | [`Limiter`] | Netflix concurrency-limits: `AIMDLimit`, `VegasLimit`, `Gradient2Limit`, `WindowedLimit`, `AbstractPartitionedLimiter`; failsafe-go `adaptivelimiter` | each algorithm's update, checked against the reference's own unit-test vectors; partitions that borrow up to the limit and a bypass, checked against `AbstractPartitionedLimiterTest`'s vectors | the probe that drains the limit to measure the latency with no queue (BBR's `ProbeRTT`; `probe = 0` decides as Netflix does); classes of [`Criticality`], after the SRE book, as ceilings by default; partitions are the four classes, a fraction of 0 reserves nothing, and fractions over 1 in all are scaled down rather than refused |
//! | [`Backoff`] | gRPC A6's backoff; AWS "Exponential Backoff and Jitter" | A6's schedule and spread; `Full`, `Equal` and `Decorrelated` jitter | the AWS SDKs' attempt count in the preset |
//! | [`Budget`] | gRPC A6 retry throttling | tokens, the ratio truncated to three decimal places, retries stopped at half | none |
//! | [`http_retry`] | RFC 9110 (§9.2.2 idempotent methods, §10.2.3 `Retry-After`); the MoonBit package `http_retry` | the package's rules and scenarios (`cargo run -p ironward --example http_retry`) | [`http_retry`]'s docs |
//! | [`grpc`] | gRPC A6 ("gRPC Retry Design"); grpc-go `stream.go` and `service_config.go` | the order in which grpc-go decides, pushback, throttling, hedging, service-config validation | [`grpc`]'s docs |
//! | [`Ward`] | the MoonBit package `moonward`; gRPC connection backoff | a ward in front of a pool, so that it stops connecting to a failing backend and spaces out its reconnections | a bucket and the SRE breaker beside the backoff |
//!
//! The edges keep the same discipline: `ironward-tonic` says where it differs from grpc-go,
//! `ironward-tower`'s HTTP mapping follows RFC 9110, RFC 9457 problem details and the IETF
//! `RateLimit` header fields draft, and `ironward-reqwest` and `ironward-tower`'s retry layer
//! are checked against the MoonBit package `http_retry`'s HTTP simulation.
//!
//! [`SreBreaker`]: crate::SreBreaker
//! [`Shedder`]: crate::Shedder
//! [`Criticality`]: crate::Criticality
//! [`Period`]: crate::Period
//! [`Window`]: crate::Window
//! [`Limiter`]: crate::Limiter
//! [`Backoff`]: crate::Backoff
//! [`Budget`]: crate::Budget
//! [`http_retry`]: crate::http_retry
//! [`grpc`]: crate::grpc
//! [`Ward`]: crate::Ward
