//! [`Headroom`]: what an admitted request left of its rate limit.

use std::fmt;
use std::time::Duration;

use super::error::told_window;
use super::error::{DEFAULT_POLICY, policy, policy_name};

/// What an admitted request left of its rate limit: how many more the limit admits now, and
/// how long until the whole quota is available again.
///
/// A [`QuotaService`](super::QuotaService) whose layer sends the fields (made
/// [`with_headers(true)`](super::QuotaLayer::with_headers)) computes it on every
/// admission and adds it to the
/// response as the `RateLimit-Policy` and `RateLimit` fields of the IETF httpapi draft
/// "RateLimit header fields for HTTP" (draft-ietf-httpapi-ratelimit-headers-11), so that a
/// client sees its headroom before it runs out, not only in the `429` that tells it so
/// ([`Limited`](super::Limited) carries the same two fields with `r=0`).
///
/// - [`remaining`](Headroom::remaining) is the draft's `r`: a bucket's whole tokens, what is
///   left of a window's or a period's quota, after this request took its share.
/// - [`reset`](Headroom::reset) is the draft's `t`: how long until the limit holds its
///   whole quota again if nothing more is taken. For a bucket, the time to refill to its
///   burst; for a sliding window, the window (the request just taken is the newest in it);
///   for a period, the time until it ends. A client that spreads its `r` requests over `t`
///   is never refused.
/// - [`quota`](Headroom::quota), [`window`](Headroom::window) and
///   [`policy`](Headroom::policy) describe the policy, as [`Limited`](super::Limited)'s do
///   and as [`Quota`'s docs](super::Quota#what-a-client-is-told) say: `r` counts down from
///   the quota, in the same units.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward_tower::Headroom;
///
/// let minute = Some(Duration::from_secs(60));
/// let headroom = Headroom::new(99, Duration::from_secs(60), 100, minute).named("api");
/// assert_eq!((headroom.remaining(), headroom.quota()), (99, 100));
/// assert_eq!(headroom.headers()["ratelimit"], r#""api";r=99;t=60"#);
/// assert_eq!(headroom.to_string(), "99 of 100 requests left per 60s, all back in 60s");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Headroom {
    remaining: u64,
    reset: Duration,
    quota: u64,
    window: Option<Duration>,
    policy: &'static str,
}

impl Headroom {
    /// `remaining` requests left of a policy of `quota` per `window` named `"default"`, all
    /// of it back after `reset`. The window is read in whole seconds, rounded up, at least
    /// 1 s, as [`Limited::new`](super::Limited::new) reads it.
    ///
    /// The layer makes these; this is for other limiters and for tests of the HTTP mapping.
    pub const fn new(
        remaining: u64,
        reset: Duration,
        quota: u64,
        window: Option<Duration>,
    ) -> Self {
        Self::of(remaining, reset, quota, window, DEFAULT_POLICY)
    }

    /// `remaining` left of a policy of `quota` per `window` named `policy`, a name already
    /// read as [`named`](Headroom::named) reads it, all of it back after `reset`.
    pub(super) const fn of(
        remaining: u64,
        reset: Duration,
        quota: u64,
        window: Option<Duration>,
        policy: &'static str,
    ) -> Self {
        Self {
            remaining,
            reset,
            quota,
            window: told_window(window),
            policy,
        }
    }

    /// The same headroom under the policy named `policy`, read as
    /// [`Limited::named`](super::Limited::named) reads it.
    #[must_use]
    pub const fn named(mut self, policy: &'static str) -> Self {
        self.policy = policy_name(policy);
        self
    }

    /// How many more requests the limit admits now: the draft's `r`.
    pub const fn remaining(&self) -> u64 {
        self.remaining
    }

    /// How long until the limit holds its whole quota again, if nothing more is taken: the
    /// draft's `t`. `Duration::MAX` when it never does (a bucket that does not refill).
    pub const fn reset(&self) -> Duration {
        self.reset
    }

    /// How many requests the policy allows per [`window`](Headroom::window), as
    /// [`Limited::quota`](super::Limited::quota).
    pub const fn quota(&self) -> u64 {
        self.quota
    }

    /// The span the quota is counted over, as [`Limited::window`](super::Limited::window):
    /// whole seconds, rounded up, at least 1 s.
    pub const fn window(&self) -> Option<Duration> {
        self.window
    }

    /// The policy's name, as the `RateLimit` and `RateLimit-Policy` fields give it.
    pub const fn policy(&self) -> &'static str {
        self.policy
    }
}

impl fmt::Display for Headroom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} of ", self.remaining)?;
        policy(f, self.quota, " left", self.window)?;
        match self.reset {
            Duration::MAX => f.write_str("never all back"),
            reset => write!(f, "all back in {reset:?}"),
        }
    }
}
