//! [`ClientConfig`]: the client stack as a record a configuration file holds, built into a
//! [`ClientLayer`] and reloaded live through the pieces' tuners.

use std::fmt;
use std::time::Duration;

use ironward::http_retry::Settings;
use ironward::{Adaptive, Classic, Sre};
use ironward_tokio::{SharedCircuitBreaker, SharedClassicBreaker, SharedSreBreaker};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};

use crate::retry::FinalErrors;
use crate::{
    BreakerLayer, ClientLayer, DeadlineLayer, HttpFailures, HttpRetryLayer, LimiterLayer, Tuner,
};

/// The client stack as a configuration file says it: each piece optional, each the core's
/// own serde record, durations as humane strings (`"2s"`, `"100ms"`).
///
/// A piece left out is not in the stack. [`build`](Self::build) makes the stack, with the
/// pieces' defaults for everything a file does not say (the clocks, the dice, the
/// classifiers); [`ClientReload::apply`] changes it live.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward_tower::config::{BreakerConfig, ClientConfig, SharedSreBreaker};
///
/// let config: ClientConfig = serde_json::from_str(r#"{
///     "deadline": "2s",
///     "retry": { "max_retries": 2, "base_delay": "50ms" },
///     "breaker": { "sre": { "k": 2.0 } }
/// }"#).unwrap();
/// assert_eq!(config.deadline, Some(Duration::from_secs(2)));
/// assert_eq!(config.retry.unwrap().max_retries, 2);
/// assert!(matches!(config.breaker, Some(BreakerConfig::Sre(sre)) if sre.k == 2.0));
/// assert!(config.limiter.is_none());
///
/// let (layer, reload) = config.build::<SharedSreBreaker>().unwrap();
/// # drop(layer);
/// // The retry waits longer from the next call on; the stack's shape is the same.
/// let mut slower = config.clone();
/// slower.retry.as_mut().unwrap().base_delay = Duration::from_millis(200);
/// reload.apply(&slower).unwrap();
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ClientConfig {
    /// The whole call's budget ([`DeadlineLayer`]); zero is no deadline, as for the layer.
    #[serde(
        with = "super::value::optional",
        skip_serializing_if = "Option::is_none"
    )]
    pub deadline: Option<Duration>,
    /// The retry's settings ([`HttpRetryLayer`]), refused as they are read when not
    /// [`valid`](Settings::valid).
    #[serde(
        deserialize_with = "valid_retry",
        skip_serializing_if = "Option::is_none"
    )]
    pub retry: Option<Settings>,
    /// The breaker's family and policy ([`BreakerLayer`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub breaker: Option<BreakerConfig>,
    /// The adaptive concurrency limit ([`LimiterLayer`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limiter: Option<Adaptive>,
}

/// Reads a retry's settings, and refuses them there (so that the format's error names the
/// field and its place) when they are not valid.
fn valid_retry<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Settings>, D::Error> {
    let settings = Option::<Settings>::deserialize(d)?;
    if settings.is_some_and(|settings| !settings.valid()) {
        return Err(D::Error::custom(ClientConfigError::InvalidRetry));
    }
    Ok(settings)
}

/// A breaker's family and policy, written `{"sre": {...}}` or `{"classic": {...}}`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BreakerConfig {
    /// The SRE breaker ([`ironward::SreBreaker`]).
    Sre(Sre),
    /// The classic breaker ([`ironward::ClassicBreaker`]).
    Classic(Classic),
}

impl BreakerConfig {
    /// The family's name, as a file writes it.
    pub fn family(&self) -> &'static str {
        match self {
            Self::Sre(_) => "sre",
            Self::Classic(_) => "classic",
        }
    }
}

/// A breaker family a [`ClientConfig`] can build: the shared SRE or classic breaker.
///
/// The family is a type of the stack ([`ClientLayer`]'s `BB`), so a program names the one
/// its file is written for ([`SharedSreBreaker`] or [`SharedClassicBreaker`], re-exported beside it); a file
/// naming the other is refused when built, and when reloaded.
pub trait ConfigFamily: SharedCircuitBreaker<Policy: Copy> {
    /// The family's name, as a file writes it.
    const FAMILY: &'static str;

    /// The policy `config` gives this family, if it names it.
    fn policy_of(config: &BreakerConfig) -> Option<Self::Policy>;

    /// `policy` as a configuration writes it.
    fn config(policy: Self::Policy) -> BreakerConfig;
}

impl ConfigFamily for SharedSreBreaker {
    const FAMILY: &'static str = "sre";

    fn policy_of(config: &BreakerConfig) -> Option<Sre> {
        match config {
            BreakerConfig::Sre(policy) => Some(*policy),
            BreakerConfig::Classic(_) => None,
        }
    }

    fn config(policy: Sre) -> BreakerConfig {
        BreakerConfig::Sre(policy)
    }
}

impl ConfigFamily for SharedClassicBreaker {
    const FAMILY: &'static str = "classic";

    fn policy_of(config: &BreakerConfig) -> Option<Classic> {
        match config {
            BreakerConfig::Classic(policy) => Some(*policy),
            BreakerConfig::Sre(_) => None,
        }
    }

    fn config(policy: Classic) -> BreakerConfig {
        BreakerConfig::Classic(policy)
    }
}

/// Why a [`ClientConfig`] could not be built or applied; nothing of it was.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClientConfigError {
    /// The retry's settings are not [`valid`](Settings::valid).
    InvalidRetry,
    /// The breaker's family is not the stack's: `wanted` is the stack's, `found` the file's.
    Family {
        /// The stack's family.
        wanted: &'static str,
        /// The family the configuration names.
        found: &'static str,
    },
    /// A piece was added or removed, which changes the stack's shape: it cannot be applied
    /// live, only by building the stack anew.
    Shape {
        /// The piece: `deadline`, `retry`, `breaker` or `limiter`.
        piece: &'static str,
        /// Whether the new configuration adds it (else it removes it).
        added: bool,
    },
}

impl fmt::Display for ClientConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidRetry => f.write_str(
                "retry settings are invalid: max_retries over 1000, base_delay over max_delay, \
                 or request_reserve not under total_budget",
            ),
            Self::Family { wanted, found } => write!(
                f,
                "the breaker family is {found}, but this stack runs the {wanted} breaker: \
                 build the stack anew for another family"
            ),
            Self::Shape { piece, added } => write!(
                f,
                "the new configuration {} the {piece}, which cannot be applied live: build \
                 the stack anew",
                if *added { "adds" } else { "removes" }
            ),
        }
    }
}

impl std::error::Error for ClientConfigError {}

/// The stack a [`ClientConfig`] builds: the pieces' defaults besides the configuration.
pub type ConfiguredLayer<B> = ClientLayer<FinalErrors, HttpFailures, B>;

impl ClientConfig {
    /// Checks what can be checked before anything is built: the retry's settings, and that
    /// the breaker, if any, is of the family `B`.
    ///
    /// # Errors
    ///
    /// [`ClientConfigError::InvalidRetry`] or [`ClientConfigError::Family`].
    pub fn check<B: ConfigFamily>(&self) -> Result<(), ClientConfigError> {
        if self.retry.is_some_and(|settings| !settings.valid()) {
            return Err(ClientConfigError::InvalidRetry);
        }
        match &self.breaker {
            Some(breaker) if B::policy_of(breaker).is_none() => Err(ClientConfigError::Family {
                wanted: B::FAMILY,
                found: breaker.family(),
            }),
            _ => Ok(()),
        }
    }

    /// The stack this configuration says, with the breaker family `B`
    /// ([`SharedSreBreaker`] or [`SharedClassicBreaker`]), and the handle that reloads it.
    ///
    /// The deadline is a [`tuned`](DeadlineLayer::tuned) one, so that it too changes live.
    ///
    /// # Errors
    ///
    /// What [`check`](Self::check) finds; then nothing is built.
    pub fn build<B: ConfigFamily>(
        &self,
    ) -> Result<(ConfiguredLayer<B>, ClientReload<B>), ClientConfigError> {
        self.check::<B>()?;
        let mut layer = ClientLayer::new();
        let mut reload = ClientReload {
            shape: self.clone(),
            deadline: None,
            retry: None,
            breaker: None,
            limiter: None,
        };
        if let Some(budget) = self.deadline {
            let deadline = DeadlineLayer::tuned(budget);
            reload.deadline = deadline.tuner();
            layer = layer.deadline(deadline);
        }
        let layer = match self.retry {
            Some(settings) => {
                let retry = HttpRetryLayer::new(settings);
                reload.retry = Some(retry.tuner());
                layer.retry(retry)
            }
            None => layer,
        };
        let layer = match self.breaker.as_ref().and_then(B::policy_of) {
            Some(policy) => {
                let breaker = BreakerLayer::for_breaker::<B>(policy);
                reload.breaker = Some(breaker.tuner());
                layer.breaker(breaker)
            }
            None => layer.no_breaker::<HttpFailures, B>(),
        };
        let layer = match self.limiter {
            Some(policy) => {
                let limiter = LimiterLayer::new(policy);
                reload.limiter = Some(limiter.tuner());
                layer.limiter(limiter)
            }
            None => layer,
        };
        Ok((layer, reload))
    }
}

/// Applies a new [`ClientConfig`] to the stack [`ClientConfig::build`] made, live, through
/// the pieces' tuners: every service and clone of the stack sees it from its next call.
///
/// `Clone` shares the tuners; the shape it checks against is the one it was built with.
pub struct ClientReload<B: ConfigFamily> {
    /// The pieces the stack holds, and its breaker's family.
    shape: ClientConfig,
    deadline: Option<Tuner<Duration>>,
    retry: Option<Tuner<Settings>>,
    breaker: Option<Tuner<B::Policy>>,
    limiter: Option<Tuner<Adaptive>>,
}

impl<B: ConfigFamily> ClientReload<B> {
    /// Whether `config` can be applied live: its retry settings valid, its breaker of the
    /// stack's family, and the same pieces as the stack holds.
    ///
    /// # Errors
    ///
    /// [`ClientConfigError::Shape`], [`ClientConfigError::Family`] or [`ClientConfigError::InvalidRetry`].
    pub fn check(&self, config: &ClientConfig) -> Result<(), ClientConfigError> {
        config.check::<B>()?;
        let shape = &self.shape;
        for (piece, was, now) in [
            (
                "deadline",
                shape.deadline.is_some(),
                config.deadline.is_some(),
            ),
            ("retry", shape.retry.is_some(), config.retry.is_some()),
            ("breaker", shape.breaker.is_some(), config.breaker.is_some()),
            ("limiter", shape.limiter.is_some(), config.limiter.is_some()),
        ] {
            if was != now {
                return Err(ClientConfigError::Shape { piece, added: now });
            }
        }
        Ok(())
    }

    /// Applies `config` to every piece, all or nothing: a configuration that adds or removes
    /// a piece, changes the breaker's family or holds invalid retry settings is refused
    /// before any piece is touched ([`check`](Self::check)).
    ///
    /// # Errors
    ///
    /// [`ClientConfigError::Shape`], [`ClientConfigError::Family`] or [`ClientConfigError::InvalidRetry`].
    pub fn apply(&self, config: &ClientConfig) -> Result<(), ClientConfigError> {
        self.check(config)?;
        self.retune(config);
        Ok(())
    }

    /// Retunes every piece to `config`, which [`check`](Self::check) passed.
    pub(super) fn retune(&self, config: &ClientConfig) {
        if let (Some(tuner), Some(budget)) = (&self.deadline, config.deadline) {
            tuner.retune(budget);
        }
        if let (Some(tuner), Some(settings)) = (&self.retry, config.retry) {
            tuner.retune(settings);
        }
        if let (Some(tuner), Some(policy)) = (
            &self.breaker,
            config.breaker.as_ref().and_then(B::policy_of),
        ) {
            tuner.retune(policy);
        }
        if let (Some(tuner), Some(policy)) = (&self.limiter, config.limiter) {
            tuner.retune(policy);
        }
    }

    /// The configuration in force: each piece's policy as its tuner reads it.
    pub fn config(&self) -> ClientConfig {
        ClientConfig {
            deadline: self.deadline.as_ref().map(Tuner::policy),
            retry: self.retry.as_ref().map(Tuner::policy),
            breaker: self.breaker.as_ref().map(|tuner| B::config(tuner.policy())),
            limiter: self.limiter.as_ref().map(Tuner::policy),
        }
    }
}

impl<B: ConfigFamily> Clone for ClientReload<B> {
    fn clone(&self) -> Self {
        Self {
            shape: self.shape.clone(),
            deadline: self.deadline.clone(),
            retry: self.retry.clone(),
            breaker: self.breaker.clone(),
            limiter: self.limiter.clone(),
        }
    }
}

impl<B: ConfigFamily> fmt::Debug for ClientReload<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientReload")
            .field("config", &self.config())
            .finish()
    }
}
