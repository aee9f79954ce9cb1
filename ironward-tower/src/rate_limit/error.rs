//! The refusal of a rate limit, and the error of a retune that cannot be made.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::time::Duration;

use ironward::BucketReason;

use super::Quota;

/// The window a client is told of for a quota counted over `span`: whole seconds, rounded
/// up, at least 1 s, as [what a client is told](Limited#what-a-client-is-told) says; `None`
/// stays `None`.
///
/// Every reading of a policy's window ([`Limited`]'s, [`Headroom`](super::Headroom)'s)
/// passes through here, so that the fields, the numbers and the text agree.
pub(super) const fn told_window(span: Option<Duration>) -> Option<Duration> {
    let Some(span) = span else {
        return None;
    };
    let whole = span.as_secs();
    let whole = if span.subsec_nanos() > 0 {
        whole.saturating_add(1)
    } else {
        whole
    };
    Some(Duration::from_secs(if whole == 0 { 1 } else { whole }))
}

/// The policy name used when none is given, or when the one given cannot be sent.
pub(super) const DEFAULT_POLICY: &str = "default";

/// The request was over its rate limit: refused at once, it never reached the inner service.
///
/// It carries what a reply needs and nothing else, so it is `Copy` and small (at most 72
/// bytes on a 64-bit target), and the one `Box` that turns it into the service's
/// `Box<dyn Error + Send + Sync>` is the only allocation a refusal makes. Test for it with
/// `err.is::<Limited>()` and read it with `err.downcast_ref::<Limited>()`, as with tower's
/// `load_shed::error::Overloaded`.
///
/// - [`retry_after`](Limited::retry_after) is the limiter's own `next()`: the wait after
///   which the same request would have been admitted, as governor's `NotUntil` gives it. A
///   token bucket's wait is the costliest part of a refusal (an exact search for the first
///   whole nanosecond at which the refill suffices, several times the decision itself), so
///   a bucket's refusal keeps the numbers it decided by and works the wait out when
///   `retry_after` is first asked, which the HTTP mapping does and a caller that only counts
///   refusals never does.
/// - [`quota`](Limited::quota) and [`window`](Limited::window) describe the policy, as the
///   `q` and `w` of the `RateLimit-Policy` field of the IETF httpapi draft "RateLimit header
///   fields for HTTP" (draft-ietf-httpapi-ratelimit-headers-11) describe it: the one
///   description of a limit that [what a client is told](Limited#what-a-client-is-told)
///   gives, which the fields and `Display` share.
/// - [`policy`](Limited::policy) names it.
///
/// What is left of the quota is 0, or the request would have passed, and the draft's
/// effective window (`t`) is the wait itself: the draft (§6) wants a `Retry-After` no earlier
/// than the end of that window, and the limiter has no room before the wait is over. Over
/// HTTP it is `429 Too Many Requests` (RFC 6585 §4) with `Retry-After` and both draft fields:
/// [`headers`](Limited::headers), [`into_response`](Limited::into_response). `Display` gives
/// the same numbers on one line.
///
/// It does not expose the core's [`QuotaReason`](ironward::QuotaReason) or
/// [`BucketReason`]: a Redis limiter makes the same refusal without either, and the numbers a
/// reply needs are these three (the layer's wait is the reason's own, read from the refusal
/// the core made). Two refusals are equal when they give the same four numbers, however the
/// wait was kept.
///
/// # What a client is told
///
/// A limit is described to a client one way, as the IETF httpapi draft "RateLimit header
/// fields for HTTP" (draft-ietf-httpapi-ratelimit-headers-11, §3 and §4) describes a policy:
/// a quota `q` of requests over a window `w` of whole seconds, and `r`, what is left of that
/// quota now. The `RateLimit-Policy` field (`q`, `w`), the `RateLimit` field (`r`),
/// [`quota`](Limited::quota) and [`window`](Limited::window), a refusal's `Display` (the `detail` of its
/// problem details, `"rate limit reached: 20 requests per 1s, …"`) and
/// [`Headroom`](super::Headroom) all give these numbers:
///
/// | limit | `q` | `w`, before rounding | `r` |
/// | --- | --- | --- | --- |
/// | [`Quota::Bucket`] | the burst, in whole tokens (rounded down) | the time to refill from empty, `burst / rate` | the whole tokens left |
/// | [`Quota::Sliding`] | `quota` | `window` | `quota` less the requests in the window |
/// | [`Quota::Period`] | `quota` | `period` | `quota` less the requests in the open period |
///
/// The draft's `w` is whole seconds, at least 1 (it has no sub-second precision), so the
/// window is rounded up to whole seconds, and one under a second is 1 s; the quota is never
/// scaled to fit it. Rounding up errs on the client's side: the rate it reads, `q` per `w`,
/// is never above the limit's, and `r` is never above `q`. So a bucket of 50 a second with a
/// burst of 20 (refilled in 400 ms) is 20 requests per 1 s (`q=20;w=1`), its `r` counting
/// down from 19 after the first request; a window of 3 per 400 ms is 3 per 1 s; a bucket of
/// 0.4 a second with a burst of 3 (refilled in 7.5 s) is 3 per 8 s. A bucket that refills
/// in under a second is told as less than its rate: give it a burst of at least a second's
/// worth (`burst >= rate`) for the rate to show. A quota that never comes back (a bucket of
/// rate 0, an infinite burst) has no window, and `w` is left out.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward_tower::Limited;
///
/// let limited = Limited::new(Duration::from_millis(2500), 100, Some(Duration::from_secs(60)));
/// let err: Box<dyn std::error::Error + Send + Sync> = Box::new(limited);
/// assert!(err.is::<Limited>());
/// let limited = err.downcast_ref::<Limited>().unwrap();
/// assert_eq!(limited.retry_after(), Duration::from_millis(2500));
/// assert_eq!((limited.quota(), limited.window()), (100, Some(Duration::from_secs(60))));
/// assert_eq!(limited.policy(), "default");
/// assert_eq!(err.to_string(), "rate limit reached: 100 requests per 60s, retry after 2.5s");
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Limited {
    said: Said,
    policy: &'static str,
}

/// What a refusal says: its wait and its policy's quota and window, known when it was made,
/// or a token bucket's reason, from which they are worked out when asked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Said {
    /// The numbers themselves: a window's or a period's, or those given to [`Limited::new`].
    Known {
        wait: Duration,
        quota: u64,
        window: Option<Duration>,
    },
    /// A bucket's refusal: [`BucketReason::next`] is the wait, and its burst and rate are the
    /// policy, as [`Limited::for_limit`] reports a bucket's.
    Bucket(BucketReason),
}

impl Said {
    /// The wait, worked out now if it is a bucket's.
    pub(super) fn wait(&self) -> Duration {
        match self {
            Self::Known { wait, .. } => *wait,
            Self::Bucket(reason) => reason.next(),
        }
    }

    /// The quota and the window as a client is told of them ([`told_window`]), worked out
    /// now if they are a bucket's.
    fn policy(&self) -> (u64, Option<Duration>) {
        let (quota, span) = match *self {
            Self::Known { quota, window, .. } => (quota, window),
            Self::Bucket(reason) => Quota::bucket(reason.rate, reason.burst).policy(),
        };
        (quota, told_window(span))
    }
}

impl Limited {
    /// A refusal that says to wait `retry_after`, under a policy of `quota` requests per
    /// `window` named `"default"`. The window is read in whole seconds, rounded up, at least
    /// 1 s, as every window a client is told of ([`Quota`'s
    /// docs](Quota#what-a-client-is-told)): 400 ms is 1 s.
    ///
    /// The layer makes these; this is for other limiters and for tests of the HTTP mapping.
    pub const fn new(retry_after: Duration, quota: u64, window: Option<Duration>) -> Self {
        Self {
            said: Said::Known {
                wait: retry_after,
                quota,
                window,
            },
            policy: DEFAULT_POLICY,
        }
    }

    /// The refusal of a request under `limit` that would be admitted after `retry_after`,
    /// with the limit's quota and window, under the policy name `"default"`
    /// ([`named`](Self::named) changes it): for a limiter kept elsewhere (ironward-redis
    /// keeps the same limits in Redis), so that its refusals, and their HTTP fields, are this
    /// crate's.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward_tower::{Limited, Quota};
    ///
    /// let hundred = Quota::sliding(100, Duration::from_secs(60));
    /// let limited = Limited::for_limit(&hundred, Duration::from_secs(5));
    /// assert_eq!(limited.retry_after(), Duration::from_secs(5));
    /// assert_eq!((limited.quota(), limited.window()), (100, Some(Duration::from_secs(60))));
    /// assert_eq!(limited.headers()["retry-after"], "5");
    /// ```
    #[must_use]
    pub fn for_limit(limit: &Quota, retry_after: Duration) -> Self {
        let (quota, window) = limit.policy();
        Self::new(retry_after, quota, window)
    }

    /// The same refusal with its numbers worked out once: a bucket's wait, quota and window,
    /// which [`retry_after`](Self::retry_after), [`quota`](Self::quota) and
    /// [`window`](Self::window) would each work out again from its reason, as a response's
    /// fields and its line ask for them. It says the same, word for word.
    pub(crate) fn settled(&self) -> Self {
        match self.said {
            Said::Known { .. } => *self,
            Said::Bucket(reason) => {
                let (quota, window) = self.said.policy();
                let wait = reason.next();
                Self::of(
                    Said::Known {
                        wait,
                        quota,
                        window,
                    },
                    self.policy,
                )
            }
        }
    }

    /// The same refusal under the policy named `policy`.
    ///
    /// The name is sent as a structured-field string, so it must be printable ASCII
    /// (`' '` to `'~'`) and at most 64 bytes; any other name is read as `"default"`.
    #[must_use]
    pub const fn named(mut self, policy: &'static str) -> Self {
        self.policy = policy_name(policy);
        self
    }

    /// How long after the refusal the same request would have been admitted: the limiter's
    /// `next()`. `Duration::MAX` when it never would be (a quota of 0, a bucket that does
    /// not refill).
    ///
    /// A token bucket's refusal works this out from the numbers it decided by each time it
    /// is asked (a few tens of nanoseconds); every other refusal keeps it.
    #[must_use]
    pub fn retry_after(&self) -> Duration {
        self.said.wait()
    }

    /// How many requests the policy allows per [`window`](Limited::window): a window's or a
    /// period's quota, a bucket's burst (rounded down); the `q` of
    /// [what a client is told](Quota#what-a-client-is-told).
    #[must_use]
    pub fn quota(&self) -> u64 {
        self.said.policy().0
    }

    /// The span the quota is counted over, in whole seconds, rounded up, at least 1 s: the
    /// window, the period, or the time a bucket takes to refill from empty (`burst /
    /// rate`); the `w` of [what a client is told](Quota#what-a-client-is-told). `None` when
    /// the quota never comes back (a bucket with a rate of 0 or an infinite burst).
    #[must_use]
    pub fn window(&self) -> Option<Duration> {
        self.said.policy().1
    }

    /// The policy's name, as the `RateLimit` and `RateLimit-Policy` fields give it.
    pub const fn policy(&self) -> &'static str {
        self.policy
    }

    /// The refusal that says `said` under the policy named `policy`, a name already read as
    /// [`named`](Limited::named) reads it.
    pub(super) const fn of(said: Said, policy: &'static str) -> Self {
        Self { said, policy }
    }

    /// The four numbers a refusal gives, which are what make two refusals the same.
    fn key(&self) -> (Duration, Option<Duration>, u64, &'static str) {
        let (quota, window) = self.said.policy();
        (self.retry_after(), window, quota, self.policy)
    }
}

impl PartialEq for Limited {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for Limited {}

impl Hash for Limited {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.key().hash(state);
    }
}

/// Writes `quota` requests `what` `window`: "5 requests left per 60s, ", with `what` between
/// the count and the window, as `Limited` and `Headroom` print their policy.
pub(super) fn policy(
    f: &mut fmt::Formatter<'_>,
    quota: u64,
    what: &str,
    window: Option<Duration>,
) -> fmt::Result {
    let noun = if quota == 1 { "request" } else { "requests" };
    write!(f, "{quota} {noun}{what}")?;
    match window {
        Some(window) => write!(f, " per {window:?}, "),
        None => f.write_str(" that never come back, "),
    }
}

impl fmt::Display for Limited {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("rate limit reached: ")?;
        let (quota, window) = self.said.policy();
        policy(f, quota, "", window)?;
        match self.retry_after() {
            Duration::MAX => f.write_str("no retry will pass"),
            wait => write!(f, "retry after {wait:?}"),
        }
    }
}

impl std::error::Error for Limited {}

/// A [`QuotaTuner`](super::QuotaTuner) was asked to retune a limit into one of another
/// kind: a token bucket into a sliding window, say, or a fixed period into an aligned one.
/// Nothing was changed.
///
/// A retune keeps each budget's history (a bucket's tokens, a window's stamps, a period's
/// count), and there is no faithful way to carry one kind's history into another's: a bucket
/// retuned into a window would have to make up the stamps, and rebuilding every budget fresh
/// would hand every key its whole allowance again in the middle of the window, which is
/// what live retuning exists to avoid. So the tuner refuses, and a change of kind is made
/// the way a new policy is: a new layer (and the services made from it), whose budgets
/// start fresh on purpose. A period keeps its alignment for life in the core, so a change
/// between [`Quota::period`] and [`Quota::aligned`] is a change of kind too.
///
/// It carries both limits, for the log line of a configuration reload that failed.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward_tower::{KindMismatch, Quota, QuotaLayer};
///
/// let layer = QuotaLayer::new(Quota::bucket(10.0, 20.0));
/// let window = Quota::sliding(100, Duration::from_secs(10));
/// let err: KindMismatch = layer.tuner().retune(window).unwrap_err();
/// assert_eq!((err.in_force(), err.offered()), (Quota::bucket(10.0, 20.0), window));
/// assert_eq!(err.to_string(), "a token bucket cannot be retuned into a sliding window");
/// assert_eq!(layer.limit(), Quota::bucket(10.0, 20.0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KindMismatch {
    in_force: Quota,
    offered: Quota,
}

impl KindMismatch {
    /// The refusal to retune `in_force` into `offered`.
    ///
    /// The tuner makes these; this is for tests of what a caller does with one.
    pub const fn new(in_force: Quota, offered: Quota) -> Self {
        Self { in_force, offered }
    }

    /// The limit in force, which stays.
    pub const fn in_force(&self) -> Quota {
        self.in_force
    }

    /// The limit the tuner was given, of another kind.
    pub const fn offered(&self) -> Quota {
        self.offered
    }
}

impl fmt::Display for KindMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} cannot be retuned into {}",
            self.in_force.kind(),
            self.offered.kind()
        )
    }
}

impl std::error::Error for KindMismatch {}

/// `name` if it can be sent as a policy name, `"default"` if not.
pub(super) const fn policy_name(name: &'static str) -> &'static str {
    let bytes = name.as_bytes();
    if bytes.is_empty() || bytes.len() > 64 {
        return DEFAULT_POLICY;
    }
    let mut i = 0;
    while i < bytes.len() {
        if !matches!(bytes[i], b' '..=b'~') {
            return DEFAULT_POLICY;
        }
        i += 1;
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(n: u64) -> Duration {
        Duration::from_secs(n)
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn is_small_and_copy() {
        assert!(size_of::<Limited>() <= 72, "{}", size_of::<Limited>());
        let limited = Limited::new(Duration::from_secs(1), 5, None);
        let copy = limited;
        assert_eq!(copy, limited);
    }

    // A bucket's refusal keeps its reason and works the wait out when asked: it is the
    // reason's `next`, and the refusal equals (and hashes as) one made with that wait.
    #[test]
    fn a_bucket_refusal_works_its_wait_out_when_asked() {
        use std::hash::BuildHasher;

        let ms = Duration::from_millis;
        let mut bucket = ironward::Bucket::new(4.0, 1.0, ms(0));
        assert!(bucket.take(ms(0), 1.0));
        let reason = bucket.check(ms(100), 1.0).expect_err("a token is 250 ms");
        let lazy = Limited::of(Said::Bucket(reason), DEFAULT_POLICY);
        assert_eq!(lazy.retry_after(), ms(150));
        let known = Limited::new(ms(150), 1, Some(ms(250)));
        assert_eq!(lazy, known);
        let hasher = std::hash::RandomState::new();
        assert_eq!(hasher.hash_one(lazy), hasher.hash_one(known));
        assert_ne!(lazy, Limited::new(ms(151), 1, Some(ms(250))));
        assert_eq!(lazy.to_string(), known.to_string());
    }

    #[test]
    fn displays_its_numbers_on_one_line_in_lower_case_without_a_full_stop() {
        let secs = Duration::from_secs;
        let cases = [
            (
                Limited::new(Duration::from_millis(1500), 5, Some(secs(10))),
                "rate limit reached: 5 requests per 10s, retry after 1.5s",
            ),
            (
                Limited::new(secs(1), 1, Some(secs(1))),
                "rate limit reached: 1 request per 1s, retry after 1s",
            ),
            (
                Limited::new(Duration::MAX, 20, None),
                "rate limit reached: 20 requests that never come back, no retry will pass",
            ),
        ];
        for (limited, line) in cases {
            let shown = limited.to_string();
            assert_eq!(shown, line);
            assert!(!shown.contains('\n') && !shown.ends_with('.'));
            assert_eq!(shown, shown.to_lowercase());
        }
    }

    #[test]
    fn a_kind_mismatch_names_both_kinds() {
        let secs = Duration::from_secs;
        let err = KindMismatch::new(Quota::period(1, secs(1)), Quota::aligned(1, secs(1)));
        assert_eq!(
            err.to_string(),
            "a fixed period cannot be retuned into an aligned period"
        );
        let err = KindMismatch::new(Quota::sliding(1, secs(1)), Quota::bucket(1.0, 1.0));
        assert_eq!(
            err.to_string(),
            "a sliding window cannot be retuned into a token bucket"
        );
    }

    #[test]
    fn a_name_that_cannot_be_sent_is_read_as_default() {
        let limited = Limited::new(Duration::ZERO, 1, None);
        assert_eq!(
            limited.named("per-user \"api\"").policy(),
            "per-user \"api\""
        );
        assert_eq!(limited.named("").policy(), "default");
        assert_eq!(limited.named("tab\there").policy(), "default");
        assert_eq!(limited.named("café").policy(), "default");
        assert_eq!(limited.named("x".repeat(65).leak()).policy(), "default");
    }

    // draft-ietf-httpapi-ratelimit-headers-11 §3.1.3: `w` is whole seconds, not zero.
    #[test]
    fn a_window_is_told_in_whole_seconds_rounded_up() {
        assert_eq!(told_window(None), None);
        for (span, told) in [
            (Duration::ZERO, secs(1)),
            (Duration::from_nanos(1), secs(1)),
            (ms(400), secs(1)),
            (secs(1), secs(1)),
            (ms(1001), secs(2)),
            (ms(6667), secs(7)),
            (secs(3600), secs(3600)),
            (Duration::MAX, secs(u64::MAX)),
        ] {
            assert_eq!(told_window(Some(span)), Some(told), "{span:?}");
        }
    }
}
