//! The built-in scenarios: what each compares, and what to look for in its run.
//!
//! Each is a TOML file that ships with the simulator ([`Builtin`]); `ironward-sim show NAME`
//! prints it, to copy and change, and `ironward-sim run NAME` runs it and prints a summary whose
//! verdict is worked out from the run's own figures. Every variant of a scenario sees the same
//! traffic, so a difference between two lines is the policies' alone.
//!
//! - **`outage`**: a backend fails for a while, then comes back cold, slow at first, offered
//!   steady traffic by clients that retry. Four clients see the same traffic: behind the SRE
//!   breaker, behind the classic open, half-open and closed breaker
//!   ([`ClassicBreaker`]), and behind each with the adaptive limiter in front. While the
//!   backend fails, the open classic breaker lets through its probes alone and the SRE
//!   breaker a share that takes its window to climb. When the backend returns, the classic
//!   breaker closes at once and floods it, opening and closing again until it warms; the SRE
//!   breaker's load rises gradually, yet past what the cold backend serves in time. With the
//!   limiter in front, either breaker's flood all but vanishes. The verdict opens with a
//!   table of the figures a choice of breaker turns on; [`ironward::_guide::breakers`] reads
//!   them.
//! - **`overload`**: more traffic than the backend can serve, with a deep queue. Without a
//!   shedder the queue fills and every call waits past its timeout: the backend works for
//!   nobody. With the adaptive shedder the backend refuses what it cannot serve in time once
//!   its CPU reading turns hot, and most calls succeed with a short latency.
//! - **`retry-storm`**: many clients fail at once and retry against a backend with little room
//!   and no queue, the experiment of AWS's "Exponential Backoff and Jitter". With no jitter
//!   (`Rigid`) they collide again at every retry; `Full` and `Decorrelated` jitter spread them
//!   out, with far fewer attempts and an earlier end.
//! - **`quota`**: a quota a second and a client that sends bursts around each period boundary.
//!   The fixed `Period` lets a quota through before the boundary and another after it, close to
//!   twice the quota in one second; the exact `Sliding` window never lets more than the quota
//!   through in any window-long stretch; the `Bucket` lets its burst through, then its rate.
//! - **`scale`**: an hour of heavy Poisson traffic through an SRE breaker and an adaptive
//!   shedder, with an outage halfway: the simulator's own speed test. Its memory does not grow
//!   with the run's length, since nothing is kept per call.
//! - **`cold-recovery`**: the outage's four clients, read from the recovery on for what the
//!   adaptive limiter adds to either breaker. A breaker decides on failures, and a cold
//!   backend is slow rather than failing; the limiter keeps the calls inside it close to what
//!   it completes within the client's timeout at its coldest, so almost no attempt times out,
//!   and more calls succeed than with the same breaker alone.
//! - **`latency-shift`**: a backend offered more than it serves, whose latency rises for a while
//!   and then returns. By Little's law the same number of calls in flight keeps it busy at
//!   either latency. Vegas with a probe every 10 s (`vegas-probe`) holds the limit near that
//!   number after each shift; Vegas as Netflix runs it (`vegas-no-probe`) reads the slower backend as a queue
//!   and falls, and Gradient2 reads its own noise as a queue.
//! - **`priorities`**: twice the capacity, in four criticalities. With the limiter, no second
//!   admits a sheddable attempt while refusing a critical one, and the sheddable classes absorb
//!   the refusals; without it each class loses alike to the full queue, with a far worse tail
//!   latency.
//! - **`sharing`**, **`mmc`**, **`capacity-halves`**, **`bimodal`**, **`drops`**,
//!   **`runaway`**: one backend model each, offered three times its capacity (`runaway`:
//!   Tripwire's exactly saturated backend): processor sharing on one core (5 ms times the
//!   calls in flight, a new user's first handler), M/M/20, a sharing backend that loses half
//!   its cores for 40 s, a cache's hits and misses, a queue that times calls out, and
//!   Tripwire's runaway limits. Each runs ironward's default limiter from its initial limit
//!   and from either end of its bounds, and beside it Vegas, Gradient2 and AIMD as Netflix
//!   runs them and failsafe-go's adaptive limiter as failsafe-go does. The verdict prints the backend's Little's-law optimum (what it serves a
//!   second times its unloaded latency) and a table of the figures a default is held to:
//!   how soon the limit is within 2× of the optimum (10 s at most), its worst error from 30 s
//!   on (25 % or one call at most), the 99th percentile against the unloaded one (twice at
//!   most), the goodput against the capacity (90 % at least), and whether the limit runs
//!   away. The picture draws the optimum dashed in the limit's panel. The default, Little,
//!   meets every verdict from every start in `mmc`, `capacity-halves`, `bimodal`, `drops`
//!   and `sharing-closed`; in `sharing` no whole limit serves 90 % within twice the unloaded
//!   p99, and in `runaway` none within a quarter of the optimum serves 90 %. Vegas moves a
//!   step of about `log10(limit)` a second, Gradient2 and AIMD climb without end, and
//!   failsafe-go's, a call a window too, ends above the optimum in every one.
//! - **`sharing-closed`**: the `sharing` backend as a new user load-tests it, under a load
//!   generator's 500 connections, each sending its next request once its last is answered
//!   (closed-loop [`Closed`] traffic, no think time; a refused client sends again 1 ms after
//!   its refused call started). Open-loop traffic leaves the core idle between a completion
//!   and the next arrival, so at a limit of 1 it could not also serve 90 % of the capacity;
//!   here the refused clients keep the core busy, and the optimum of 1 and full goodput can
//!   both be met. The verdict is the same table, then what the same clients get with no
//!   limiter: every call waits behind the other 499, 2.5 s.
//! - **`chaos`**: a healthy backend, and a client whose chaos policy ([`ChaosPolicy`])
//!   injects faults into 15 % of the attempts that leave it, past its own breaker: 5 %
//!   fail unsent, 5 % wait 100 ms to 1.5 s before they are sent, 2 % are never answered
//!   (the client's 1 s timeout ends them), 3 % are served and answered with a failure. Three
//!   clients see the same traffic: with no chaos (`calm`), with chaos and up to three
//!   attempts behind an SRE breaker (`retries`), and with chaos and one attempt
//!   (`no-retries`). The retries win back nearly every call a fault hit (about 99.7 % of the
//!   calls succeed, against 88 % without them), at the cost of a tail latency of a timeout
//!   and a backoff; the breaker hears every injected failure and refuses nothing, as it
//!   should for scattered faults that are no outage. The faults come from the policy's own
//!   seed attempt by attempt, so an `ironward` chaos edge seeded alike injects the same.
//!
//! [`Builtin`]'s docs say in a line what each compares, and its tests hold each verdict.
//!
//! [`Builtin`]: crate::Builtin
//! [`Closed`]: crate::Closed
//! [`ChaosPolicy`]: crate::ChaosPolicy
//! [`ClassicBreaker`]: ironward::ClassicBreaker
