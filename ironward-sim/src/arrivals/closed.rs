//! Closed-loop traffic: clients that each send their next call once their last is answered.

use core::time::Duration;

use ironward::Criticality;
use ironward::clock::nanos;
use serde::Deserialize;

use crate::dice::Dice;

/// The most clients one closed-loop source may have: each is an event waiting from the
/// start, and a source of more is better written as open-loop traffic.
pub(crate) const MOST_CLIENTS: u32 = 1_000_000;

/// `clients` callers, each with one call under way at a time: a load generator's
/// connections (`wrk -c`, `hey -c`), a pool of worker threads.
///
/// A client sends its first call at `start`. When that call ends (a success, a refusal, an
/// error or a timeout that the client's backoff does not retry, or its last retry), the
/// client waits its `think` time and sends the next; so the traffic slows as the backend
/// does, which open-loop sources never do. A refused call ends like any other: its client
/// sends again after its think time. A call that ends the instant it starts (refused by a
/// policy in front, with no think time) would have its client send again at the same
/// instant for ever, so a client never sends two calls less than `floor` apart (from the
/// first's start to the second's): the round trip a refusal costs over a network. Calls
/// that take longer than `floor`, the backend's, are not delayed by it.
///
/// ```toml
/// arrivals = [
///     { kind = "closed", clients = 500 },                                  # no think time
///     { kind = "closed", clients = 50, think = { exponential = "100ms" } },  # mean 100 ms
///     { kind = "closed", clients = 10, think = { fixed = "1s" }, floor = "5ms", start = "10s" },
/// ]
/// ```
///
/// # Default
///
/// 10 clients for the whole run, no think time, a floor of 1 ms.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Closed {
    /// Callers, each with at most one call under way; at most a million.
    pub clients: u32,
    /// What a client waits after a call ends before sending its next.
    pub think: Think,
    /// The least time from the start of a client's call to the start of its next: what a
    /// call answered at once still costs. Longer than zero.
    #[serde(deserialize_with = "crate::humane::read")]
    pub floor: Duration,
    /// When the clients send their first calls.
    #[serde(deserialize_with = "crate::humane::read")]
    pub start: Duration,
    /// When they stop sending (exclusive); zero for the end of the run. Calls under way
    /// then go on to their end.
    #[serde(deserialize_with = "crate::humane::read")]
    pub end: Duration,
    /// The class of their calls.
    pub criticality: Criticality,
}

impl Default for Closed {
    fn default() -> Self {
        Self {
            clients: 10,
            think: Think::default(),
            floor: Duration::from_millis(1),
            start: Duration::ZERO,
            end: Duration::ZERO,
            criticality: Criticality::Critical,
        }
    }
}

impl Closed {
    /// What cannot be simulated in this source, if anything.
    pub(crate) fn check(&self) -> Result<(), String> {
        if self.floor.is_zero() {
            return Err(
                "a closed-loop source's `floor` must be longer than zero: a client whose calls \
                 are refused at once would send again at the same instant for ever"
                    .into(),
            );
        }
        if self.clients > MOST_CLIENTS {
            return Err(format!(
                "a closed-loop source has at most {MOST_CLIENTS} clients, not {}: use an \
                 open-loop source for more",
                self.clients
            ));
        }
        Ok(())
    }

    /// When a client whose call started at `start` and ended at `now` sends its next, or
    /// `None` once that is at or past `end` nanoseconds (the source's end or the run's).
    pub(crate) fn next(&self, start: u64, now: u64, end: u64, dice: &mut Dice) -> Option<u64> {
        let think = match self.think {
            Think::Fixed(d) => nanos(d),
            Think::Exponential(mean) => dice.exponential(nanos(mean) as f64) as u64,
        };
        let at = now
            .saturating_add(think)
            .max(start.saturating_add(nanos(self.floor)));
        (at < end).then_some(at)
    }

    /// When the source stops, in nanoseconds, in a run of `run`.
    pub(crate) fn end(&self, run: u64) -> u64 {
        match nanos(self.end) {
            0 => run,
            end => end.min(run),
        }
    }
}

/// What a closed-loop client waits between a call's end and its next call.
///
/// # Default
///
/// No wait: `{ fixed = "0s" }`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub enum Think {
    /// The same wait every time.
    Fixed(#[serde(deserialize_with = "crate::humane::read")] Duration),
    /// An exponential wait of this mean, drawn for each call from the run's dice: users who
    /// each come back at random.
    Exponential(#[serde(deserialize_with = "crate::humane::read")] Duration),
}

impl Default for Think {
    fn default() -> Self {
        Self::Fixed(Duration::ZERO)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn reads_from_toml_with_humane_durations() {
        let read: Closed =
            toml::from_str("clients = 5\nthink = { exponential = \"100ms\" }\nfloor = \"2ms\"")
                .unwrap();
        assert_eq!(read.clients, 5);
        assert_eq!(read.think, Think::Exponential(Duration::from_millis(100)));
        assert_eq!(read.floor, Duration::from_millis(2));
        let fixed: Closed = toml::from_str("think = { fixed = \"1s\" }").unwrap();
        assert_eq!(fixed.think, Think::Fixed(Duration::from_secs(1)));
        assert_eq!(Closed::default().think, Think::Fixed(Duration::ZERO));
        assert!(toml::from_str::<Closed>("think = { gamma = \"1s\" }").is_err());
        assert!(toml::from_str::<Closed>("think = \"1s\"").is_err());
    }

    #[test]
    fn a_zero_floor_and_too_many_clients_are_refused() {
        let zero = Closed {
            floor: Duration::ZERO,
            ..Closed::default()
        };
        assert!(zero.check().unwrap_err().contains("floor"));
        let many = Closed {
            clients: u32::MAX,
            ..Closed::default()
        };
        assert!(many.check().unwrap_err().contains("clients"));
        assert_eq!(Closed::default().check(), Ok(()));
    }

    #[test]
    fn the_next_call_waits_the_think_time_and_at_least_the_floor() {
        let mut dice = Dice::new(1);
        let think = Closed {
            think: Think::Fixed(Duration::from_millis(10)),
            ..Closed::default()
        };
        assert_eq!(think.next(0, 5 * MS, 1_000 * MS, &mut dice), Some(15 * MS));
        // Answered at once: the floor from the call's start, not the think time from its end.
        let none = Closed::default();
        assert_eq!(
            none.next(7 * MS, 7 * MS, 1_000 * MS, &mut dice),
            Some(8 * MS)
        );
        assert_eq!(none.next(0, 5 * MS, 1_000 * MS, &mut dice), Some(5 * MS));
        // Nothing at or past the end, and no overflow near it.
        assert_eq!(none.next(0, 1_000 * MS, 1_000 * MS, &mut dice), None);
        assert_eq!(none.next(999 * MS, 999 * MS, 1_000 * MS, &mut dice), None);
        assert_eq!(none.next(u64::MAX, u64::MAX, u64::MAX, &mut dice), None);
    }

    #[test]
    fn an_exponential_think_time_averages_its_mean() {
        let mut dice = Dice::new(3);
        let source = Closed {
            think: Think::Exponential(Duration::from_millis(100)),
            ..Closed::default()
        };
        let n = 10_000;
        let total: u64 = (0..n)
            .map(|_| source.next(0, 0, u64::MAX, &mut dice).unwrap())
            .sum();
        let mean = total as f64 / f64::from(n) / MS as f64;
        assert!((97.0..103.0).contains(&mean), "{mean} ms");
    }

    #[test]
    fn a_source_ends_at_its_end_or_the_run_s() {
        let source = Closed {
            end: Duration::from_secs(5),
            ..Closed::default()
        };
        assert_eq!(source.end(10_000 * MS), 5_000 * MS);
        assert_eq!(source.end(2_000 * MS), 2_000 * MS);
        assert_eq!(Closed::default().end(2_000 * MS), 2_000 * MS);
    }
}
