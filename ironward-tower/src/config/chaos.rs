//! [`ChaosConfig`]: a section's chaos piece as the file gives it, checked as it is read.

use ironward::chaos::{Chaos, Fault, Injection, Injector};
use serde::{Deserialize, Serialize};

/// A chaos piece (`[server.chaos]`, `[routes."/path".chaos]`): the core's [`Chaos`] policy,
/// written with its own fields (`enabled`, `shadow`, `faults`), and how the piece numbers
/// and names its requests.
///
/// Read, it is checked as [`Injector::new`] checks a policy: a rate outside `[0, 1]` is an
/// error at the rate itself ([`ConfigError::field`](super::ConfigError::field)
/// `server.chaos.faults[1].rate`, its line and column), rates adding up to more than 1 or a
/// delay's bounds reversed an error at the section. A `ChaosConfig` read is a policy the
/// piece takes; one changed in code is checked again when it is built (an off piece, and a
/// warning, for a bad one) or reloaded (refused).
///
/// A reload retunes the policy live, keeping the request numbering; the `seed` and the
/// `name` are the piece's own and change only with a restart.
///
/// # Examples
///
/// ```
/// use ironward::chaos::Fault;
/// use ironward_tower::config::Config;
///
/// let config = Config::from_toml(r#"
/// [server.chaos]
/// enabled = true
/// seed = 7
/// name = "staging"
/// faults = [
///     { fault = "error", rate = 0.01 },
///     { fault = { latency = { uniform = { low = "100ms", high = "300ms" } } }, rate = 0.05 },
/// ]
/// "#).unwrap();
/// let chaos = config.server.chaos.unwrap();
/// assert_eq!((chaos.seed, chaos.name.as_deref()), (Some(7), Some("staging")));
/// assert_eq!(chaos.policy.faults[0].fault, Fault::Error);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawChaos", into = "RawChaos")]
#[non_exhaustive]
pub struct ChaosConfig {
    /// The policy: `enabled` (off unless true), `shadow` and the `faults` with their rates.
    pub policy: Chaos,
    /// The run's seed: request `i` reaching the piece draws
    /// [`ironward::chaos::draw`]`(seed, i)`, so a run replays. Without one each request
    /// rolls real randomness.
    pub seed: Option<u64>,
    /// The name the piece reports under (the `name` label of `ironward.chaos.injected`); by
    /// default the section's, `server` or the route's path, as the other pieces do.
    pub name: Option<String>,
}

/// The section as written.
#[derive(Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawChaos {
    #[serde(default)]
    enabled: bool,
    #[serde(default)]
    shadow: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    seed: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(default)]
    faults: Vec<RawInjection>,
}

/// One fault as written: its rate checked where it stands, so that the error points at it.
#[derive(Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawInjection {
    fault: Fault,
    rate: Share,
}

/// A share of requests: a finite number from 0 to 1.
#[derive(Clone, Copy, Serialize, Deserialize)]
#[serde(try_from = "f64", into = "f64")]
struct Share(f64);

impl TryFrom<f64> for Share {
    type Error = String;

    fn try_from(rate: f64) -> Result<Self, String> {
        if (0.0..=1.0).contains(&rate) {
            Ok(Self(rate))
        } else {
            Err(format!(
                "{rate} is no chaos rate: expected the share of requests the fault is \
                 injected into, a number from 0 to 1"
            ))
        }
    }
}

impl From<Share> for f64 {
    fn from(share: Share) -> Self {
        share.0
    }
}

impl TryFrom<RawChaos> for ChaosConfig {
    type Error = String;

    fn try_from(raw: RawChaos) -> Result<Self, String> {
        if raw.name.as_deref().is_some_and(str::is_empty) {
            return Err(
                "the chaos `name` is empty: it labels the piece's metrics; give a \
                        name or leave it out for the section's"
                    .into(),
            );
        }
        let policy = Chaos {
            enabled: raw.enabled,
            shadow: raw.shadow,
            faults: raw
                .faults
                .into_iter()
                .map(|injection| Injection {
                    fault: injection.fault,
                    rate: injection.rate.0,
                })
                .collect(),
        };
        // The core's rules across the faults: the rates' sum, each delay's bounds.
        Injector::new(policy.clone()).map_err(|error| format!("{error}"))?;
        Ok(Self {
            policy,
            seed: raw.seed,
            name: raw.name,
        })
    }
}

impl From<ChaosConfig> for RawChaos {
    fn from(config: ChaosConfig) -> Self {
        Self {
            enabled: config.policy.enabled,
            shadow: config.policy.shadow,
            seed: config.seed,
            name: config.name,
            faults: config
                .policy
                .faults
                .into_iter()
                .map(|injection| RawInjection {
                    fault: injection.fault,
                    rate: Share(injection.rate),
                })
                .collect(),
        }
    }
}
