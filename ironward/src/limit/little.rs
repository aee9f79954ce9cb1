//! Little: the limit moved to the concurrency Little's law says the backend serves, not by a
//! fixed few calls a window. Vegas' steps are counts (3 to 6 queued calls, a step of
//! `⌊log10 L⌋`), so it cannot settle near a small optimum nor leave a large limit quickly;
//! every rule here is a share of the limit, with a floor of one call. It is the default
//! ([`ADAPTIVE`](crate::ADAPTIVE)).

use super::Sample;
use super::sample::{Bounds, whole};
use crate::clock::nanos;
use crate::internal::constant::constant;
use crate::internal::rank::percentile;

/// The constants of Little: a limit that jumps to Little's-law estimate of the backend's
/// concurrency when a queue shows, and grows by a share of itself when none does.
///
/// With `L` the unrounded limit, `rtt` the window's latency and `base` the baseline (the
/// `quantile` of the latencies of the last `memory` windows, this one included, or the last
/// probe's latency if lower and no older than `memory` windows), each window:
///
/// 1. A zero latency is ignored. A first window with no probe before it only measures:
///    there is nothing yet to compare it with.
/// 2. By Little's law (`N = X × W`: calls in flight are throughput times latency), the
///    window's calls, started with `N` in flight (the sample's `in_flight`, or `L` if 0),
///    were served at `X = N / rtt` a second; of them, `X × base` were being served and the
///    rest were queued. That is the estimate `E = N × base / rtt` of the concurrency the
///    backend serves without a queue, and `q = 1 − base / rtt` the share queued: `q × L`
///    calls at the limit. `N` is not `L`: after a fall, the calls still finishing were
///    let in under the higher limit, and their latency is that of the calls then in
///    flight (read against `L`, a fall from 1000 would go on to a limit of 2 in an M/M/20
///    backend whose optimum is 20).
/// 3. A window with a drop takes `min(headroom × E, backoff × min(L, in_flight))`: the
///    backend refused with `in_flight` calls inside, so the limit falls at least to
///    `backoff` of what it held (a backend that refuses when its own queue is full shows
///    drops, not latency), and to the estimate at once when the latency shows how far it is
///    above it.
/// 4. A queue of at least `max(1, high × L)` calls in this window and the one before, or of
///    half the limit in this one, takes `min(headroom × E, L)`: one window moves the limit
///    the whole way, where Vegas takes `⌊log10 L⌋` a window (minutes from 1000). A smaller
///    queue must show twice: one slow window is as often chance as queue.
/// 5. A queue of at least `max(1, low × L)` calls holds: the limit is near the optimum. So
///    does a window that never reached the limit (`in_flight < ⌊L⌋`): the limit held nothing
///    back, and growing it would only let a burst queue later.
/// 6. Otherwise the limit grows. Rules 3 and 4 remember where they left the limit, the
///    ceiling: under it the limit grows by `max(1, growth × L)`, up to it (a limit of 1
///    reaches 20 in 8 windows); at or above it by one call a window, since the queue began
///    just above. Two windows in a row above the ceiling with under `low / 2` queued forget
///    it: capacity has come back, or the fall that set it was a backlog draining.
/// 7. The new limit is held to `min ..= max`; the limit is `⌊L⌋`.
///
/// Little also steers a [`Limiter`](super::Limiter)'s probes
/// ([`Adaptive::probe`](super::Adaptive::probe)): the first comes at once, with one call in
/// flight, so that the baseline is the latency with no queue whatever the initial limit; a
/// probe whose latency is under `1 − high` of the baseline found the windows queued, so the
/// next comes one window later, at a quarter of the limit rather than half, until a probe
/// finds no queue. A limit far above the optimum comes down in a few windows this way: in a
/// backend that always queues at the limit (processor sharing, a limit far above the
/// optimum) only a probe shows a lower latency. Each probe's latency is handed to
/// [`Estimator::rebase`](super::Estimator::rebase): the baseline if lower than the windows'.
///
/// # Why these figures
///
/// - `headroom` 1.15: goodput needs the limit at or a little above the optimum (a fixed
///   limit 10 % under it serves 86 % of an M/M/20 backend's capacity), and the settled
///   error is held within 25 %: after a jump the queue is about `1 − 1 / 1.15 ≈ 13 %` of the
///   limit, between `low` and `high`, where the limit holds.
/// - `high` 0.2 and `low` 0.1: a queue over a fifth is a limit 25 % above the optimum; under
///   a tenth is the noise of a window's mean on an idle backend.
/// - `growth` 0.5: from 1, an optimum of 20 is near in 8 windows. The ceiling keeps the
///   overshoot to one jump.
/// - `backoff` 0.9: AIMD's backoff (Netflix's `AIMDLimit`), for drops that the latency
///   does not explain.
/// - `quantile` 0.1 over `memory` 16 windows: the least latency seen (Vegas' baseline)
///   underestimates the unloaded latency of a noisy backend, so every window then reads as
///   queued and the limit shrinks below the optimum; a low percentile of recent windows
///   ignores the luckiest window, and forgets latencies older than `memory` windows, so a
///   backend that slows for good gets a new baseline without a probe.
///
/// # Measured
///
/// `ironward-sim`'s convergence scenarios (`ironward-sim/scenarios/`, each in `ironward-sim
/// list`) hold the default to a bar: from any start, within 2× of Little's-law optimum by
/// 10 s, within 25 % (or one call) after 30 s, a p99 at most twice the unloaded one, 90 % of
/// the capacity served, no runaway. The verdicts each start meets are tests in
/// `ironward-sim/src/builtin/converge_tests.rs`, and `ironward-sim run <scenario>` prints
/// them beside Netflix's Vegas, Gradient2 and AIMD and failsafe-go's
/// [`Failsafe`](super::Failsafe).
///
/// # Bad constants
///
/// Nothing panics. Each constant is held to its range, and NaN is read as the value that
/// refuses least, as for every policy constant of the crate: `headroom` to `[1, 10]` (NaN
/// 10), `low`, `high`, `growth` and `backoff` to `[0, 1]` (NaN 1: never a jump, growth by the
/// whole limit, no cut on a drop), `high` under `low` as `low`, and `quantile` to `[0, 1]`
/// (NaN 1, the slowest window). `memory` is held to `1 ..= 32` (0 is 1). `min` and
/// `max` are read as the [`Estimator`](super::Estimator) docs say.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::limit::{Algorithm, Estimator, LITTLE, Little, Sample};
///
/// let ms = Duration::from_millis;
/// let mut estimator = Estimator::new(Algorithm::Little(Little { initial: 100, ..LITTLE }));
/// estimator.update(Sample { rtt: ms(10), in_flight: 100, dropped: false });
/// let slow = Sample { rtt: ms(100), in_flight: 100, dropped: false };
/// // 100 ms against 10 ms: 90 % queued, half the limit and more: the backend serves 10 at
/// // once (Little's law), 11 with headroom.
/// assert_eq!(estimator.update(slow), 11);
/// assert_eq!(Little::default(), LITTLE);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default, deny_unknown_fields)
)]
pub struct Little {
    /// The limit before any sample.
    pub initial: u32,
    /// The least limit: at least 1, and at most `max`.
    pub min: u32,
    /// The greatest limit: at least 1.
    pub max: u32,
    /// The estimate a jump goes to, as a multiple of Little's: held to `[1, 10]`.
    pub headroom: f64,
    /// A queued share under this grows the limit.
    pub low: f64,
    /// A queued share over this jumps the limit down to the estimate.
    pub high: f64,
    /// What a growing window adds, as a share of the limit (at least 1 call).
    pub growth: f64,
    /// The most of the limit a window with a drop keeps.
    pub backoff: f64,
    /// How many windows' latencies the baseline is taken from: `1 ..= 32`.
    pub memory: u32,
    /// Which percentile of them is the baseline, as a fraction: `0.1` is the 10th.
    pub quantile: f64,
}

/// Little's defaults: from 20 within `1 ..= 1000` as Vegas, a jump to 1.15 × Little's
/// estimate over 20 % queued, growth of half under 10 %, a baseline at the 10th
/// percentile of 16 windows.
pub const LITTLE: Little = Little {
    initial: 20,
    min: 1,
    max: 1000,
    headroom: 1.15,
    low: 0.1,
    high: 0.2,
    growth: 0.5,
    backoff: 0.9,
    memory: 16,
    quantile: 0.1,
};

impl Default for Little {
    fn default() -> Self {
        LITTLE
    }
}

impl Little {
    /// The constants as the algorithm reads them: `(headroom, low, high, growth, backoff)`,
    /// each NaN as the value that refuses least.
    fn read(&self) -> (f64, f64, f64, f64, f64) {
        let low = constant(self.low, 0.0, 1.0, 1.0);
        (
            constant(self.headroom, 1.0, 10.0, 10.0),
            low,
            constant(self.high, 0.0, 1.0, 1.0).max(low),
            constant(self.growth, 0.0, 1.0, 1.0),
            constant(self.backoff, 0.0, 1.0, 1.0),
        )
    }

    /// `quantile` as the algorithm reads it: in `[0, 1]`, NaN as 1 (the slowest window, the
    /// baseline that reads least queue).
    fn quantile(&self) -> f64 {
        constant(self.quantile, 0.0, 1.0, 1.0)
    }

    /// `memory` as the algorithm reads it: `1 ..= MEMORY`.
    fn memory(&self) -> usize {
        (self.memory as usize).clamp(1, MEMORY)
    }
}

/// The most windows the baseline remembers.
const MEMORY: usize = 32;

/// What Little remembers besides its whole limit.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct State {
    /// The unrounded limit.
    estimate: f64,
    /// The latencies of the last windows in nanoseconds, oldest overwritten first.
    seen: [u64; MEMORY],
    /// How many of `seen` hold a latency.
    held: usize,
    /// Where the next latency goes.
    next: usize,
    /// The latency of the last probe in nanoseconds (0 for none), and the windows since.
    probed: u64,
    since: usize,
    /// Whether the last window's queued share was over `high`.
    queued: bool,
    /// Whether the last probe found the windows' baseline queued: probe again soon, deeper.
    again: bool,
    /// The limit the last jump or drop went to (infinite before any): growth under it is a
    /// share of the limit, over it one call a window.
    ceiling: f64,
    /// Windows in a row grown past `ceiling` with no queue at all.
    clear: u32,
    /// The limit and latency in nanoseconds before a jump on a moderate queue, until the
    /// window after it shows whether the latency fell.
    jumped: Option<(f64, u64)>,
}

impl State {
    /// Little starting from `limit`, remembering no latency.
    pub(super) fn new(limit: u32) -> Self {
        Self {
            estimate: f64::from(limit),
            seen: [0; MEMORY],
            held: 0,
            next: 0,
            probed: 0,
            since: 0,
            queued: false,
            again: false,
            ceiling: f64::INFINITY,
            clear: 0,
            jumped: None,
        }
    }

    /// The room a probe holds admissions to under `limit`: one call before any probe (the
    /// latency with no queue in any backend), a quarter of the limit after a probe that
    /// found a queue, half otherwise.
    pub(super) fn probe_room(&self, limit: u32) -> u32 {
        let room = if self.probed == 0 {
            1
        } else if self.again {
            limit / 4
        } else {
            limit / 2
        };
        room.max(1)
    }

    /// Whether the next probe should come at once: none has been, or the last found a queue.
    pub(super) fn probe_soon(&self) -> bool {
        self.probed == 0 || self.again
    }

    /// The baseline in nanoseconds, once a latency is remembered: the `quantile` of the
    /// windows' latencies, or the last probe's if it is lower and no older than `memory`
    /// windows.
    pub(super) fn baseline(&self, policy: &Little) -> Option<u64> {
        let mut kept = self.seen;
        let windows = percentile(&mut kept[..self.held], policy.quantile())?;
        let fresh = self.probed > 0 && self.since < policy.memory();
        Some(if fresh {
            windows.min(self.probed)
        } else {
            windows
        })
    }

    /// Remembers `rtt` nanoseconds as one window's latency, forgetting the oldest past
    /// `memory`.
    fn remember(&mut self, policy: &Little, rtt: u64) {
        let memory = policy.memory();
        // A ring laid out for another `memory` (retuned) is laid out again for this one.
        if !(self.held == memory || (self.held < memory && self.next == self.held)) {
            self.compact(memory);
        }
        self.seen[self.next] = rtt;
        self.next = (self.next + 1) % memory;
        self.held = (self.held + 1).min(memory);
    }

    /// Keeps the newest `min(held, memory)` latencies, oldest first from `seen[0]`.
    fn compact(&mut self, memory: usize) {
        let keep = self.held.min(memory);
        let mut newest = [0; MEMORY];
        for k in 1..=keep {
            // The k-th newest: the ring wraps at `held` whether or not it is full.
            newest[keep - k] = self.seen[(self.next + self.held - k) % self.held];
        }
        self.seen = newest;
        self.held = keep;
        self.next = keep % memory;
    }

    /// Takes `rtt` nanoseconds, measured with the queue drained, as the baseline if it is
    /// lower than the windows' percentile, for the next `memory` windows, and remembers it as
    /// one more window's latency. A probe is one window, but the one that shows the queue
    /// gone: a backend that always queues at the limit (processor sharing, or a limit far
    /// above the optimum) shows no lower latency otherwise, and the percentile alone would
    /// need as many probes as its rank to read it. A zero `rtt` is ignored.
    pub(super) fn rebase(&mut self, policy: &Little, rtt: u64) {
        if rtt > 0 {
            let (_, _, high, _, _) = policy.read();
            self.again = self
                .baseline(policy)
                .is_some_and(|base| (rtt as f64) < (1.0 - high) * base as f64);
            self.remember(policy, rtt);
            self.probed = rtt;
            self.since = 0;
        }
    }

    /// Holds the unrounded limit to new bounds and returns the whole limit.
    pub(super) fn retune(&mut self, bounds: Bounds) -> u32 {
        self.estimate = bounds.clamp_f64(self.estimate);
        whole(self.estimate)
    }

    /// The whole limit after one window's sample.
    pub(super) fn update(&mut self, policy: &Little, bounds: Bounds, sample: Sample) -> u32 {
        let rtt = nanos(sample.rtt);
        if rtt == 0 {
            return whole(self.estimate);
        }
        let first = self.held == 0;
        self.remember(policy, rtt);
        self.since = self.since.saturating_add(1);
        let Some(base) = self.baseline(policy).filter(|_| !first) else {
            return whole(self.estimate);
        };
        let (headroom, low, high, growth, backoff) = policy.read();
        if let Some((before, slow)) = self.jumped.take() {
            // A queue drains as the limit falls; a latency that did not fall with it was no
            // queue but a baseline read too low (a lucky probe of few calls): the probe no
            // longer stands for the baseline (it stays one window of the percentile), and
            // the jump is undone, the limit it left the ceiling.
            if rtt as f64 >= 0.95 * slow as f64 {
                self.probed = 0;
                self.ceiling = before;
                self.estimate = bounds.clamp_f64(before);
                return whole(self.estimate);
            }
        }
        let limit = self.estimate;
        let started = match sample.in_flight {
            0 => limit,
            n => f64::from(n),
        };
        // `base` may exceed `rtt` (a window faster than the percentile): no queue.
        let served = (base as f64 / rtt as f64).min(1.0);
        let queued = 1.0 - served;
        let little = headroom * started * served;
        let queue = limit * queued;
        let over = queue >= (high * limit).max(1.0);
        let confirmed = core::mem::replace(&mut self.queued, over);
        let new = if sample.dropped {
            let cut = little.min(backoff * limit.min(f64::from(sample.in_flight)));
            self.ceiling = cut;
            cut
        } else if over && (confirmed || queued >= 0.5) {
            let cut = little.min(limit);
            if queued < 0.5 {
                self.jumped = Some((limit, rtt));
            }
            self.ceiling = cut;
            cut
        } else if queue >= (low * limit).max(1.0)
            || f64::from(sample.in_flight) < whole(limit).into()
        {
            // `high >= low`: an unconfirmed queue over `high` holds here too.
            return whole(limit);
        } else {
            let step = (growth * limit).max(1.0);
            if limit + 1.0 <= self.ceiling {
                (limit + step).min(self.ceiling)
            } else {
                self.clear = if queued < low / 2.0 {
                    self.clear + 1
                } else {
                    0
                };
                if self.clear >= 2 {
                    self.ceiling = f64::INFINITY;
                    self.clear = 0;
                }
                limit + 1.0
            }
        };
        self.estimate = bounds.clamp_f64(new);
        whole(self.estimate)
    }
}

#[cfg(test)]
mod tests;
