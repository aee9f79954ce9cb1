//! Where calls come from: steady, Poisson, ramping and bursty sources, and closed-loop
//! clients.

mod closed;

use core::time::Duration;

use ironward::Criticality;
use ironward::clock::nanos;
use serde::Deserialize;

use crate::ahead::Ahead;
use crate::dice::Dice;

pub use closed::{Closed, Think};

/// Nanoseconds in a second, as the float a rate divides.
const NS: f64 = 1e9;

/// One source of calls; a variant's sources add up.
///
/// In a scenario file each is a table whose `kind` picks the shape. The first four are
/// open-loop: their calls come when they come, whatever becomes of the calls before them.
/// The last, `closed`, is clients that each wait for an answer before sending again (see
/// [`Closed`]).
///
/// Every source's calls are of one [`Criticality`], `critical` unless its table says
/// `criticality = "sheddable"` (or `sheddable_concurrent`, `critical_plus`): the class the
/// limiter and the shedder admit them by.
///
/// ```toml
/// arrivals = [
///     { kind = "poisson", rate = 800.0 },                              # calls a second
///     { kind = "poisson", rate = 200.0, criticality = "sheddable" },
///     { kind = "constant", rate = 50.0, start = "10s", end = "20s" },  # evenly spaced
///     { kind = "ramp", from = 0.0, to = 2000.0, start = "60s", end = "120s" },
///     { kind = "bursts", size = 1000, every = "30s", spread = "0s", count = 1 },
///     { kind = "closed", clients = 500, think = { fixed = "0s" } },
/// ]
/// ```
///
/// # Default
///
/// Poisson arrivals at 100 calls a second for the whole run.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Traffic {
    /// Evenly spaced calls, `1/rate` apart: the steadiest traffic there is.
    Constant(Steady),
    /// Calls whose gaps are exponential with mean `1/rate`: independent callers.
    Poisson(Steady),
    /// Poisson calls whose rate moves linearly from `from` to `to` over the stretch.
    Ramp(Ramp),
    /// `size` calls at once (or spread evenly over `spread`), every `every`: synchronised
    /// callers, a cron job, a retry wave.
    Bursts(Bursts),
    /// `clients` callers, each sending its next call once its last is answered and its
    /// think time has passed: a load generator's connections.
    Closed(Closed),
}

impl Default for Traffic {
    fn default() -> Self {
        Self::Poisson(Steady::default())
    }
}

impl Traffic {
    /// The class of the source's calls.
    pub fn criticality(&self) -> Criticality {
        match self {
            Self::Constant(s) | Self::Poisson(s) => s.criticality,
            Self::Ramp(r) => r.criticality,
            Self::Bursts(b) => b.criticality,
            Self::Closed(c) => c.criticality,
        }
    }

    /// What cannot be simulated in this source, if anything.
    pub(crate) fn check(&self) -> Result<(), String> {
        let rates = match self {
            Self::Constant(s) | Self::Poisson(s) => [s.rate, 0.0],
            Self::Ramp(r) => [r.from, r.to],
            Self::Bursts(_) => [0.0, 0.0],
            Self::Closed(c) => return c.check(),
        };
        if rates.iter().all(|r| r.is_finite() && *r >= 0.0) {
            Ok(())
        } else {
            Err(format!(
                "arrival rates must be finite and not negative: {rates:?}"
            ))
        }
    }
}

/// A constant rate over a stretch of the run.
///
/// # Default
///
/// 100 calls a second from the start to the end of the run.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Steady {
    /// Calls a second.
    pub rate: f64,
    /// When the source starts.
    #[serde(deserialize_with = "crate::humane::read")]
    pub start: Duration,
    /// When it stops (exclusive); zero for the end of the run.
    #[serde(deserialize_with = "crate::humane::read")]
    pub end: Duration,
    /// The class of its calls.
    pub criticality: Criticality,
}

impl Default for Steady {
    fn default() -> Self {
        Self {
            rate: 100.0,
            start: Duration::ZERO,
            end: Duration::ZERO,
            criticality: Criticality::Critical,
        }
    }
}

/// A rate that moves linearly over a stretch of the run; nothing arrives outside it.
///
/// # Default
///
/// From 0 to 100 calls a second over the whole run.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Ramp {
    /// Calls a second at `start`.
    pub from: f64,
    /// Calls a second at `end`.
    pub to: f64,
    /// When the ramp starts.
    #[serde(deserialize_with = "crate::humane::read")]
    pub start: Duration,
    /// When it ends (exclusive); zero for the end of the run.
    #[serde(deserialize_with = "crate::humane::read")]
    pub end: Duration,
    /// The class of its calls.
    pub criticality: Criticality,
}

impl Default for Ramp {
    fn default() -> Self {
        Self {
            from: 0.0,
            to: 100.0,
            start: Duration::ZERO,
            end: Duration::ZERO,
            criticality: Criticality::Critical,
        }
    }
}

/// Waves of calls.
///
/// # Default
///
/// 100 calls at once every 10 s from the start, for the whole run.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Bursts {
    /// Calls in one burst.
    pub size: u32,
    /// Time from one burst's start to the next; zero for a single burst.
    #[serde(deserialize_with = "crate::humane::read")]
    pub every: Duration,
    /// When the first burst starts.
    #[serde(deserialize_with = "crate::humane::read")]
    pub start: Duration,
    /// The stretch a burst's calls are spread over, evenly; zero for all at once.
    #[serde(deserialize_with = "crate::humane::read")]
    pub spread: Duration,
    /// How many bursts; zero for as many as the run holds.
    pub count: u32,
    /// The class of its calls.
    pub criticality: Criticality,
}

impl Default for Bursts {
    fn default() -> Self {
        Self {
            size: 100,
            every: Duration::from_secs(10),
            start: Duration::ZERO,
            spread: Duration::ZERO,
            count: 0,
            criticality: Criticality::Critical,
        }
    }
}

/// The calls of every open-loop source in time order, each with its class, drawn ahead (see
/// [`Ahead`]): the sources and their dice answer to nothing the simulation does. Closed-loop
/// sources answer to it, and the engine runs them.
#[derive(Debug)]
pub(crate) struct Arrivals(Ahead<(u64, Criticality)>);

impl Arrivals {
    /// The calls of the open-loop `sources` over a run of `run` nanoseconds, drawn from
    /// `dice`.
    pub(crate) fn new(sources: &[Traffic], run: u64, dice: Dice) -> Self {
        let mut merge = Merge::new(sources, run, dice);
        Self(Ahead::new(move |block, wanted| {
            while block.len() < wanted {
                let Some(at) = merge.peek() else { break };
                block.push((at, merge.pop()));
            }
        }))
    }

    /// When the next call arrives, if one does.
    #[inline]
    pub(crate) fn peek(&self) -> Option<u64> {
        self.0.peek().map(|(at, _)| at)
    }

    /// Moves past the next call, and says its class (`Critical` if there is none).
    #[inline]
    pub(crate) fn pop(&mut self) -> Criticality {
        self.0
            .take()
            .map_or(Criticality::Critical, |(_, class)| class)
    }
}

/// The merged stream of calls from every source, in time order.
#[derive(Debug)]
struct Merge {
    feeds: Vec<Feed>,
    dice: Dice,
    /// The feed whose call comes next, and when; `None` once every feed has run dry.
    next: Option<(usize, u64)>,
}

/// One source and where it stands.
#[derive(Debug)]
struct Feed {
    source: Traffic,
    /// The class of the source's calls.
    class: Criticality,
    /// A Poisson source's mean gap in nanoseconds, `1e9 / rate`: divided once, not at
    /// each of its calls.
    gap: f64,
    /// When the source stops, in nanoseconds.
    end: u64,
    /// Calls generated so far (constant and bursts count; Poisson and ramps keep the time).
    k: u64,
    /// The time of the next call, if there is one.
    next: Option<u64>,
}

impl Merge {
    /// The calls of `sources` over a run of `run` nanoseconds, drawn from `dice`.
    fn new(sources: &[Traffic], run: u64, mut dice: Dice) -> Self {
        let feeds = sources
            .iter()
            .filter_map(|&source| {
                let (start, end) = match source {
                    Traffic::Constant(s) | Traffic::Poisson(s) => (s.start, s.end),
                    Traffic::Ramp(r) => (r.start, r.end),
                    Traffic::Bursts(b) => (b.start, Duration::ZERO),
                    Traffic::Closed(_) => return None,
                };
                let end = match nanos(end) {
                    0 => run,
                    end => end.min(run),
                };
                let gap = match source {
                    Traffic::Poisson(s) => NS / s.rate,
                    _ => 0.0,
                };
                let mut feed = Feed {
                    source,
                    class: source.criticality(),
                    gap,
                    end,
                    k: 0,
                    next: None,
                };
                feed.next = feed.after(nanos(start), &mut dice);
                Some(feed)
            })
            .collect();
        let mut merge = Self {
            feeds,
            dice,
            next: None,
        };
        merge.next = merge.earliest();
        merge
    }

    /// When the next call arrives, if one does.
    #[inline]
    fn peek(&self) -> Option<u64> {
        self.next.map(|(_, at)| at)
    }

    /// Moves past the next call, and says its class.
    #[inline]
    fn pop(&mut self) -> Criticality {
        let Some((i, at)) = self.next else {
            return Criticality::Critical;
        };
        if let [feed] = &mut self.feeds[..] {
            // One source, as most runs have: its next call is the next, with no search.
            feed.next = feed.after(at, &mut self.dice);
            self.next = feed.next.map(|at| (0, at));
            return feed.class;
        }
        let feed = &mut self.feeds[i];
        let class = feed.class;
        feed.next = feed.after(at, &mut self.dice);
        self.next = self.earliest();
        class
    }

    /// The feed with the earliest next call; ties go to the feed listed first.
    fn earliest(&self) -> Option<(usize, u64)> {
        if let [feed] = &self.feeds[..] {
            return feed.next.map(|at| (0, at));
        }
        self.feeds
            .iter()
            .enumerate()
            .filter_map(|(i, f)| f.next.map(|at| (i, at)))
            .min_by_key(|&(i, at)| (at, i))
    }
}

impl Feed {
    /// The call after one at `at`; for the first call, `at` is the source's start.
    #[inline]
    fn after(&mut self, at: u64, dice: &mut Dice) -> Option<u64> {
        let next = match self.source {
            Traffic::Constant(s) => {
                if s.rate <= 0.0 {
                    return None;
                }
                let start = nanos(s.start);
                // Computed from the count, not by adding gaps, so no rounding accumulates.
                let t = start.saturating_add((self.k as f64 * NS / s.rate) as u64);
                self.k += 1;
                t
            }
            Traffic::Poisson(s) => {
                if s.rate <= 0.0 {
                    return None;
                }
                at.saturating_add(dice.exponential(self.gap) as u64)
            }
            Traffic::Ramp(r) => self.thinned(r, at, dice)?,
            Traffic::Bursts(b) => {
                let size = u64::from(b.size);
                if size == 0 {
                    return None;
                }
                let (burst, within) = (self.k / size, self.k % size);
                let last = b.every.is_zero() || (b.count > 0 && burst >= u64::from(b.count));
                if burst > 0 && last {
                    return None;
                }
                self.k += 1;
                let offset = (nanos(b.spread) as f64 * within as f64 / size as f64) as u64;
                nanos(b.start)
                    .saturating_add(burst.saturating_mul(nanos(b.every)))
                    .saturating_add(offset)
            }
            // Left out of the merge: the engine sends a closed loop's calls.
            Traffic::Closed(_) => return None,
        };
        (next < self.end).then_some(next)
    }

    /// The next call of a ramp after `at`, by thinning a Poisson stream at the peak rate
    /// (Lewis and Shedler, 1979): a candidate is kept with probability `rate(t) / peak`.
    fn thinned(&self, r: Ramp, at: u64, dice: &mut Dice) -> Option<u64> {
        let peak = r.from.max(r.to);
        if peak <= 0.0 {
            return None;
        }
        let start = nanos(r.start);
        let span = self.end.saturating_sub(start).max(1) as f64;
        let mut t = at.max(start);
        loop {
            t = t.saturating_add(dice.exponential(NS / peak) as u64);
            if t >= self.end {
                return Some(t);
            }
            let along = (t - start) as f64 / span;
            let rate = r.from + (r.to - r.from) * along;
            if dice.roll() * peak < rate {
                return Some(t);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    fn all(sources: &[Traffic], run: u64) -> Vec<u64> {
        let mut arrivals = Arrivals::new(sources, run, Dice::new(3));
        let mut out = Vec::new();
        while let Some(at) = arrivals.peek() {
            out.push(at);
            arrivals.pop();
        }
        out
    }

    #[test]
    fn a_constant_source_spaces_calls_evenly() {
        let calls = all(
            &[Traffic::Constant(Steady {
                rate: 4.0,
                ..Steady::default()
            })],
            S,
        );
        assert_eq!(calls, [0, S / 4, S / 2, 3 * S / 4]);
    }

    #[test]
    fn a_poisson_source_averages_its_rate() {
        let calls = all(&[Traffic::default()], 100 * S);
        assert!((9_700..10_300).contains(&calls.len()), "{}", calls.len());
        assert!(calls.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn a_ramp_grows_linearly() {
        let calls = all(
            &[Traffic::Ramp(Ramp {
                from: 0.0,
                to: 2000.0,
                ..Ramp::default()
            })],
            10 * S,
        );
        // 10 s averaging 1000 a second; the second half carries three quarters of them.
        let late = calls.iter().filter(|&&t| t >= 5 * S).count();
        assert!((9_500..10_500).contains(&calls.len()), "{}", calls.len());
        assert!((late as f64 / calls.len() as f64 - 0.75).abs() < 0.02);
    }

    #[test]
    fn bursts_come_at_once_or_spread_and_stop_after_their_count() {
        let once = all(
            &[Traffic::Bursts(Bursts {
                size: 3,
                every: Duration::ZERO,
                start: Duration::from_secs(1),
                ..Bursts::default()
            })],
            10 * S,
        );
        assert_eq!(once, [S, S, S]);
        let spread = all(
            &[Traffic::Bursts(Bursts {
                size: 2,
                every: Duration::from_secs(2),
                spread: Duration::from_millis(100),
                count: 2,
                ..Bursts::default()
            })],
            10 * S,
        );
        assert_eq!(spread, [0, S / 20, 2 * S, 2 * S + S / 20]);
    }

    #[test]
    fn each_call_carries_its_source_class() {
        let sources = [
            Traffic::Constant(Steady {
                rate: 1.0,
                criticality: Criticality::Sheddable,
                ..Steady::default()
            }),
            Traffic::Bursts(Bursts {
                size: 1,
                every: Duration::ZERO,
                start: Duration::from_millis(500),
                criticality: Criticality::CriticalPlus,
                ..Bursts::default()
            }),
        ];
        let mut arrivals = Arrivals::new(&sources, 2 * S, Dice::new(1));
        let mut seen = Vec::new();
        while let Some(at) = arrivals.peek() {
            seen.push((at, arrivals.pop()));
        }
        assert_eq!(
            seen,
            [
                (0, Criticality::Sheddable),
                (S / 2, Criticality::CriticalPlus),
                (S, Criticality::Sheddable),
            ]
        );
        let read: Traffic =
            toml::from_str("kind = \"poisson\"\ncriticality = \"sheddable_concurrent\"").unwrap();
        assert_eq!(read.criticality(), Criticality::SheddableConcurrent);
        assert_eq!(Traffic::default().criticality(), Criticality::Critical);
    }

    #[test]
    fn sources_merge_in_time_order_and_stop_at_their_end() {
        let calls = all(
            &[
                Traffic::Constant(Steady {
                    rate: 2.0,
                    start: Duration::from_millis(250),
                    end: Duration::from_secs(1),
                    criticality: Criticality::Sheddable,
                }),
                Traffic::Constant(Steady {
                    rate: 2.0,
                    ..Steady::default()
                }),
            ],
            2 * S,
        );
        assert_eq!(calls, [0, S / 4, S / 2, 3 * S / 4, S, 3 * S / 2]);
    }
}
