//! The backend's model drawn one call at a time, outside the engine: for a caller that
//! runs calls of its own (an async pipeline on a manual clock) against the same latency
//! distribution and failure schedule a scenario gives.

use core::time::Duration;

use super::latency::Draw;
use super::{Backend, fails, slowed};
use crate::dice::Dice;
use ironward::clock::nanos;

/// One call's service, drawn by [`Sampler::serve`]: how long it takes and whether it fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Service {
    /// How long the call takes: a draw from the [`LatencyModel`](super::LatencyModel), times
    /// the schedule's slowdown in force when it arrives.
    pub latency: Duration,
    /// Whether it fails, after its latency: the backend does the work, then errs.
    pub fails: bool,
}

/// A [`Backend`]'s latency distribution and failure schedule, made ready to draw one call at
/// a time ([`Backend::sampler`]).
///
/// The simulator's engine draws each call's service this way inside its event loop; a
/// sampler gives the same draws to a caller that runs its own calls: an async pipeline on a
/// manual clock can sleep each call's latency and answer its failure, so the front door's
/// pieces (`ironward_tokio::call`) meet the backend a scenario models. What a sampler leaves
/// out is the backend's workers and queue: each call is served at once, and the caller's own
/// concurrency stands for the rest. For the same reason it draws a processor-sharing
/// backend's latency unloaded, without the stretch of the calls sharing its cores, and its
/// schedule's `capacity` does not apply.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward_sim::{Backend, Change, Dice, LatencyModel, Phase};
///
/// let backend = Backend {
///     latency: LatencyModel::Constant { value: Duration::from_millis(20) },
///     schedule: vec![Phase {
///         start: Duration::from_secs(60),
///         end: Duration::from_secs(120),
///         failure: Some(Change { from: 1.0, to: 1.0 }),
///         slowdown: Some(Change { from: 2.0, to: 2.0 }),
///         capacity: None,
///     }],
///     ..Backend::default()
/// };
/// let (sampler, mut dice) = (backend.sampler(), Dice::new(7));
/// let calm = sampler.serve(Duration::from_secs(10), &mut dice);
/// assert_eq!((calm.latency, calm.fails), (Duration::from_millis(20), false));
/// let outage = sampler.serve(Duration::from_secs(90), &mut dice);
/// assert_eq!((outage.latency, outage.fails), (Duration::from_millis(40), true));
/// ```
#[derive(Debug, Clone)]
pub struct Sampler {
    backend: Backend,
    latency: Draw,
}

impl Backend {
    /// This backend's latency and failure schedule, ready to draw one call at a time outside
    /// the engine ([`Sampler`]); a log-normal's quantile table is built here, once.
    pub fn sampler(&self) -> Sampler {
        Sampler {
            backend: self.clone(),
            latency: self.latency.prepare(),
        }
    }
}

impl Sampler {
    /// The service of a call arriving `at` (since the run's start), drawn from `dice`.
    ///
    /// As the engine's backend draws it: a service time from the latency distribution,
    /// multiplied by the slowdown in force at `at`, then, only while the failure probability
    /// in force is above 0, a roll that fails the call when it is below that probability. So
    /// a backend that never fails draws one number a call, and a failure probability of 1
    /// fails every call. A slowdown that is negative or NaN gives no latency at all, and one
    /// that takes a drawn latency past `u64::MAX` nanoseconds (about 584 years) gives that
    /// most. A phase's NaN failure probability is passed over for the base rate, and a NaN
    /// base rate fails every call, as in a scenario run. An `at` past
    /// `u64::MAX` nanoseconds is read as that instant.
    pub fn serve(&self, at: Duration, dice: &mut Dice) -> Service {
        let (failure, slowdown) = self.backend.conditions(nanos(at));
        let latency = Duration::from_nanos(slowed(self.latency.draw(dice), slowdown));
        Service {
            latency,
            fails: fails(failure, || dice.roll()),
        }
    }

    /// The backend it draws from.
    pub fn backend(&self) -> &Backend {
        &self.backend
    }
}
