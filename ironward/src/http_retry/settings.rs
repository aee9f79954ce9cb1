//! The retry settings, with the MoonBit package's defaults.

use core::time::Duration;

#[cfg(doc)]
use super::{StopReason, decide, decide_response, sample_ppm};
use crate::retry::Rules;
use crate::{Backoff, Jitter};

/// The most retries [`Settings::valid`] accepts (the initial request not counted).
const MAX_RETRIES: u32 = 1000;

/// The defaults of the MoonBit package `http_retry`: 3 retries, 200 ms base, 30 s cap, 120 s
/// budget, 1 s reserve.
///
/// The same value as [`Settings::default()`], usable in `const` contexts.
///
/// # Examples
///
/// ```
/// use ironward::http_retry::{Settings, SETTINGS};
///
/// assert_eq!(SETTINGS, Settings::default());
/// assert_eq!(SETTINGS.max_retries, 3);
/// ```
pub const SETTINGS: Settings = Settings {
    max_retries: 3,
    base_delay: Duration::from_millis(200),
    max_delay: Duration::from_secs(30),
    total_budget: Duration::from_secs(120),
    request_reserve: Duration::from_secs(1),
};

/// How patient a client is: retry count, backoff and time budget.
///
/// A plain record: change it with `Settings { max_retries: 5, ..Settings::default() }`.
/// [`decide`] and [`decide_response`] check it on every call and stop with
/// [`StopReason::InvalidSettings`] when [`valid`](Settings::valid) fails, so a bad record
/// never panics and never retries.
///
/// # Default
///
/// The MoonBit package's contract, kept as is:
///
/// | field | value |
/// | --- | --- |
/// | `max_retries` | 3 |
/// | `base_delay` | 200 ms |
/// | `max_delay` | 30 s |
/// | `total_budget` | 120 s |
/// | `request_reserve` | 1 s |
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::http_retry::Settings;
///
/// let patient = Settings { total_budget: Duration::from_secs(600), ..Settings::default() };
/// assert!(patient.valid());
/// assert_eq!(patient.base_delay, Duration::from_millis(200));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default, deny_unknown_fields)
)]
pub struct Settings {
    /// Retries allowed after the initial request, which is not counted; 0..=1000.
    pub max_retries: u32,
    /// The client delay before the first retry, doubled on each later one; at most
    /// `max_delay`.
    #[cfg_attr(feature = "serde", serde(with = "crate::internal::humane"))]
    pub base_delay: Duration,
    /// The cap on the client delay, and the most a server may ask a client to wait: a
    /// longer `Retry-After` stops the retry.
    #[cfg_attr(feature = "serde", serde(with = "crate::internal::humane"))]
    pub max_delay: Duration,
    /// The time allowed for the whole call, from the start of the first attempt to the end of
    /// the last.
    #[cfg_attr(feature = "serde", serde(with = "crate::internal::humane"))]
    pub total_budget: Duration,
    /// The time set aside for the next attempt itself when judging whether a wait fits the
    /// budget; less than `total_budget`. An estimate, not a timeout.
    #[cfg_attr(feature = "serde", serde(with = "crate::internal::humane"))]
    pub request_reserve: Duration,
}

impl Default for Settings {
    fn default() -> Self {
        SETTINGS
    }
}

impl Settings {
    /// Whether the settings can be used: `max_retries ≤ 1000`, `base_delay ≤ max_delay` and
    /// `request_reserve < total_budget`.
    ///
    /// The bound on retries is the MoonBit package's; the other two keep the backoff and the
    /// budget meaningful (a reserve that fills the whole budget would make every retry stop).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::http_retry::Settings;
    ///
    /// assert!(Settings::default().valid());
    /// assert!(!Settings { max_retries: 1001, ..Settings::default() }.valid());
    /// let no_room = Settings { request_reserve: Duration::from_secs(120), ..Settings::default() };
    /// assert!(!no_room.valid());
    /// ```
    #[must_use]
    pub fn valid(&self) -> bool {
        self.max_retries <= MAX_RETRIES
            && self.base_delay <= self.max_delay
            && self.request_reserve < self.total_budget
    }

    /// The client delay as a [`Backoff`]: `base_delay` doubling to `max_delay`, full jitter,
    /// `max_retries + 1` attempts.
    ///
    /// Rule 6's client delay before retry `retry_index` is exactly
    /// `self.backoff().delay(retry_index + 1, roll, None)` when the attempt's `sample_ppm` is
    /// [`sample_ppm`]`(roll)`: one computation, in exact integer nanoseconds, so a caller that
    /// plans with [`Backoff::schedule`] sees the waits this module decides.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::Jitter;
    /// use ironward::http_retry::Settings;
    ///
    /// let backoff = Settings::default().backoff();
    /// assert_eq!(backoff.jitter, Jitter::Full);
    /// assert_eq!(backoff.attempts, 4);
    /// assert_eq!(backoff.ceiling(3), Duration::from_millis(800));
    /// assert_eq!(backoff.delay(3, 0.5, None), Duration::from_millis(400));
    /// ```
    #[must_use]
    pub fn backoff(&self) -> Backoff {
        Backoff {
            base: self.base_delay,
            factor: 2.0,
            cap: self.max_delay,
            attempts: self.max_retries.saturating_add(1),
            jitter: Jitter::Full,
        }
    }

    /// The retry engine's rules these settings decide by: [`backoff`](Self::backoff), the
    /// total budget and the request reserve.
    ///
    /// A [`Run`](super::Run) is the engine under these rules, with rules 1 to 4 of the
    /// [rule order](super#rule-order) in front of it; a caller that wants HTTP's timing for
    /// a loop of its own starts an [`Engine`](crate::retry::Engine) with them.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::http_retry::SETTINGS;
    ///
    /// let rules = SETTINGS.rules();
    /// assert_eq!(rules.backoff, SETTINGS.backoff());
    /// assert_eq!(rules.total_budget, Duration::from_secs(120));
    /// assert_eq!(rules.request_reserve, Duration::from_secs(1));
    /// ```
    pub fn rules(&self) -> Rules {
        Rules {
            backoff: self.backoff(),
            total_budget: self.total_budget,
            request_reserve: self.request_reserve,
        }
    }
}
