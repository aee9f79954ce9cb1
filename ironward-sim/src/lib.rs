//! Replays traffic through ironward's policies against a modelled backend, on a simulated
//! clock with reproducible dice, and says what happened: a CSV row per interval, a picture,
//! and a one-screen summary. An hour of traffic runs in seconds.
//!
//! Because every `ironward` decision takes the clock, the draw and the CPU reading as
//! arguments, the policies run here exactly as they run in a server; only the world around
//! them is modelled.
//!
//! # The model
//!
//! | piece | module | what it is |
//! | --- | --- | --- |
//! | [`Scenario`], [`Variant`] | `scenario` | the setups to compare, read from TOML; every value has a default |
//! | [`Traffic`], [`Closed`] | `arrivals` | constant, Poisson, ramping and bursty traffic; closed-loop clients |
//! | [`Backend`], [`Sampler`] | `backend` | workers, a queue, a latency distribution, a failure and slowdown schedule, a CPU meter; its calls drawn one at a time outside the engine |
//! | [`Client`], [`Policies`] | `policy` | timeouts, retries with a [`Backoff`](ironward::Backoff) and a [`Budget`](ironward::Budget); the breaker (SRE or classic, [`BreakerPolicy`]), limiter, shedder, bucket, sliding window, period and gate in front; faults injected on purpose ([`ChaosPolicy`]) |
//! | [`Dice`] | `dice` | SplitMix64, the only source of chance |
//! | [`Report`], [`VariantRun`], [`Row`] | `report` | what a run comes to, and its CSV |
//! | [`Builtin`] | `builtin` | the scenarios that ship, each with a verdict in figures |
//! | [`summary`], [`draw_svg`] | `summary`, `plot` | the text summary and the picture |
//!
//! A call arrives, asks the client's limiter and breaker, meets the client's chaos policy if
//! any (which may fail it, delay it, never answer it or fail its answer: [`ChaosPolicy`]),
//! then the server's pieces in order (shedder, bucket, sliding window, period, gate), then
//! the backend's queue; each refusal is an immediate error. The backend serves it first come first served and it succeeds or fails
//! after its service time; the client gives up on it at its timeout. A failed attempt is
//! retried after the backoff's delay while the backoff, the budget and the deadline allow.
//! Calls arrive on their own (open-loop sources), or from [`Closed`] loops of clients that
//! each send their next call once the last has ended and a think time has passed.
//!
//! The simulation is an event loop over a simulated clock in whole nanoseconds, not a fixed
//! tick: it takes whichever comes first of a CPU sample, the end of an interval, a scheduled
//! event (an attempt finishing, a client giving up on one, a retry starting) and the next
//! arrival. So a 100 µs gap between arrivals is 100 µs, nothing is rounded to a tick, and an
//! idle stretch costs nothing. Events wait in a timing wheel of quarter-millisecond slots,
//! which makes scheduling a call's completion a vector push; every policy sees the simulated
//! `now`, its own stream of draws, and the backend's smoothed CPU reading.
//!
//! The backend model also serves calls outside the engine: [`Backend::sampler`] draws one
//! call's [`Service`] (latency, failure) at an instant, as the engine does, so an
//! `ironward_tokio::call` pipeline on a manual clock can meet a scenario's backend (the test
//! `tests/sim/drive.rs` runs one through an outage, the same from the same seed).
//!
//! # Determinism
//!
//! A scenario gives the same bytes of CSV on every run and platform: every draw
//! comes from a [`Dice`] stream, the deviates use the pure-Rust `libm`, ties between events
//! are broken by the order they were scheduled in, and nothing iterates a hash map.
//!
//! # Examples
//!
//! ```
//! use ironward_sim::Scenario;
//!
//! // Two breakers against a backend that fails for 20 s, on the same traffic.
//! let scenario = Scenario::from_toml(r#"
//!     duration = "60s"
//!     arrivals = [{ kind = "poisson", rate = 200.0 }]
//!     backend.schedule = [{ start = "20s", end = "40s", failure = 1.0 }]
//!     [[variant]]
//!     name = "sre"
//!     policies.breaker = { kind = "sre" }
//!     [[variant]]
//!     name = "none"
//! "#).unwrap();
//! let report = scenario.run(|_| {});
//! let (sre, none) = (report.runs[0].total(), report.runs[1].total());
//! assert_eq!(sre.offered, none.offered, "both see the same arrivals");
//! assert!(sre.admitted < none.admitted, "the breaker spares the failing backend");
//! ```
//!
//! # Features
//!
//! - `png` (off by default): `draw_png`, the picture as PNG through plotters' bitmap
//!   backend, with its text drawn by `ab_glyph` from a font file read at run time.
//!
//! # Guide
//!
//! The [`_guide`] says what each [built-in scenario](_guide::scenarios) compares and what its
//! run shows, and how to use [the command](_guide::command) and read what it writes.

#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod _guide;
mod ahead;
mod arrivals;
mod backend;
mod builtin;
mod column;
mod dice;
mod engine;
mod histogram;
mod humane;
mod layout;
mod optimum;
mod plot;
#[cfg(feature = "png")]
mod png;
mod policy;
mod queue;
mod quotas;
mod report;
mod scenario;
mod summary;
mod words;

pub use arrivals::{Bursts, Closed, Ramp, Steady, Think, Traffic};
pub use backend::{Backend, Change, Discipline, LatencyModel, Meter, Phase, Sampler, Service};
pub use builtin::Builtin;
pub use dice::Dice;
pub use humane::parse_duration;
pub use plot::{PlotError, draw_svg};
#[cfg(feature = "png")]
#[cfg_attr(docsrs, doc(cfg(feature = "png")))]
pub use png::draw_png;
pub use policy::{
    BreakerPolicy, BucketPolicy, BudgetPolicy, ChaosPolicy, Client, GatePolicy, PeriodPolicy,
    Policies, SlidingPolicy,
};
pub use report::{Column, Injections, Refused, Report, Row, Sum, VariantRun};
pub use scenario::{Focus, Scenario, ScenarioError, Variant};
pub use summary::summary;

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
