//! A classic breaker's half-open trial: its probes, then the progressive stages of a growing
//! share of calls, and the verdict that ends each step.

use alloc::vec::Vec;

use super::counts::Tallies;
use crate::internal::float::round_nanos;

/// A share counts its calls in billionths: `admitted · PARTS ≤ asked · parts` is exact in
/// integers, where a float product such as `30 · 0.1` can land on either side of a whole
/// number.
const PARTS: u128 = 1_000_000_000;

/// The leases reserved when a trial starts, at most: a probe count of `u32::MAX` must not
/// reserve 64 GiB up front (the list grows as probes go out).
const RESERVED: usize = 64;

/// Where the half-open trial stands.
#[derive(Debug, Clone)]
pub(crate) enum Trial {
    /// The probes: those out, with their lease numbers and when each runs out, and those
    /// that reported.
    Probes {
        leases: Vec<(u64, u64)>,
        heard: Tallies,
    },
    /// A progressive stage: its number, its share in billionths, when it ends, the calls
    /// asked and admitted since it began, and the outcomes heard since.
    Share {
        stage: u32,
        parts: u64,
        until: u64,
        asked: u64,
        admitted: u64,
        heard: Tallies,
    },
}

/// What the outcomes heard so far say of the step the trial is in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Verdict {
    /// Nothing yet: the step goes on.
    Pending,
    /// The failed and slow shares heard, one of which reached its rate: open again.
    Reopen((f64, f64)),
    /// The step passed: the next stage starts, or the breaker closes after the last.
    Pass,
    /// A stage reached its end without hearing an outcome: it starts again.
    Restart,
}

impl Trial {
    /// The first step: `probes` probes, none out yet.
    pub(crate) fn probes(probes: u32) -> Self {
        Self::Probes {
            leases: Vec::with_capacity((probes as usize).min(RESERVED)),
            heard: Tallies::default(),
        }
    }

    /// Progressive stage `stage`, admitting `share` of the calls from `t` until `until`.
    pub(crate) fn stage(stage: u32, share: f64, until: u64) -> Self {
        // A share in [0, 1] (the policy's reading holds it there): at most `PARTS` parts.
        let parts = round_nanos(share * PARTS as f64).min(PARTS) as u64;
        Self::fresh(stage, parts, until)
    }

    /// A stage with nothing asked or heard yet.
    fn fresh(stage: u32, parts: u64, until: u64) -> Self {
        Self::Share {
            stage,
            parts,
            until,
            asked: 0,
            admitted: 0,
            heard: Tallies::default(),
        }
    }

    /// The number of the stage that follows this step.
    pub(crate) fn next_stage(&self) -> u32 {
        match self {
            Self::Probes { .. } => 0,
            Self::Share { stage, .. } => stage.saturating_add(1),
        }
    }

    /// What the trial says at `t`, with `probes` probes and the failure and slow rates
    /// `rates`. Reads nothing but the trial: the breaker applies it.
    pub(crate) fn verdict(&self, t: u64, probes: u32, rates: (f64, f64)) -> Verdict {
        let heard = match self {
            Self::Probes { heard, .. } if heard.calls >= u64::from(probes) => heard,
            Self::Probes { .. } => return Verdict::Pending,
            Self::Share { until, .. } if t < *until => return Verdict::Pending,
            Self::Share { heard, .. } if heard.calls == 0 => return Verdict::Restart,
            Self::Share { heard, .. } => heard,
        };
        if heard.reach(rates) {
            Verdict::Reopen(heard.shares())
        } else {
            Verdict::Pass
        }
    }

    /// Whether the next call at `t` would be let through: `Ok`, or the nanoseconds until a
    /// probe's place frees up (0 in a stage, where a later call may fall in the share).
    pub(crate) fn room(&self, t: u64, probes: u32) -> Result<(), u64> {
        match self {
            Self::Probes { leases, heard } => {
                let live = leases
                    .iter()
                    .map(|&(_, expires)| expires)
                    .filter(|&e| e > t);
                let out = live.clone().count() as u64;
                if out.saturating_add(heard.calls) < u64::from(probes) {
                    Ok(())
                } else {
                    Err(live.min().map_or(0, |soonest| soonest - t))
                }
            }
            Self::Share {
                parts,
                asked,
                admitted,
                ..
            } => {
                let within =
                    u128::from(*admitted) * PARTS <= u128::from(*asked) * u128::from(*parts);
                if within { Ok(()) } else { Err(0) }
            }
        }
    }

    /// Takes the call asked at `t`: `Ok(Some(lease))` for a probe holding its place until
    /// `expires` under the lease number `id`, `Ok(None)` for a call a stage admits, or the
    /// refusal of [`room`](Self::room).
    pub(crate) fn admit(
        &mut self,
        t: u64,
        probes: u32,
        expires: u64,
        id: u64,
    ) -> Result<Option<u64>, u64> {
        let room = self.room(t, probes);
        match self {
            Self::Probes { leases, .. } => {
                // A probe whose lease ran out gives its place up.
                leases.retain(|&(_, e)| e > t);
                room?;
                leases.push((id, expires));
                Ok(Some(id))
            }
            Self::Share {
                asked, admitted, ..
            } => {
                *asked = asked.saturating_add(1);
                room?;
                *admitted = admitted.saturating_add(1);
                Ok(None)
            }
        }
    }

    /// Counts the outcome of a call let through half-open, `probe` its lease: a probe counts
    /// only while its lease still holds its place, a stage counts every call of the trial.
    /// Whether it counted.
    pub(crate) fn hear(&mut self, probe: Option<u64>, failed: bool, slow: bool) -> bool {
        match self {
            Self::Probes { leases, heard } => {
                let Some(i) = leases.iter().position(|&(id, _)| Some(id) == probe) else {
                    // Its lease ran out, and its place went to another probe.
                    return false;
                };
                leases.swap_remove(i);
                heard.add(failed, slow);
            }
            Self::Share { heard, .. } => heard.add(failed, slow),
        }
        true
    }

    /// Starts a stage again, until `until`, with nothing asked or heard.
    pub(crate) fn restart(&mut self, until: u64) {
        if let Self::Share { stage, parts, .. } = *self {
            *self = Self::fresh(stage, parts, until);
        }
    }
}
