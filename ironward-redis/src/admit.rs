//! [`OnKey`]: a Redis limiter on one key, as ironward-tokio's `call::RateLimit` runs it.

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use ironward::Usage;
use ironward_tokio::Quota;
use ironward_tokio::call::{Admit, Admitted, Denied};

use crate::meter::Admits;
use crate::{Answer, Bucket, Period, Sliding, Store, StoreError};

/// One key of a Redis limiter ([`Bucket`], [`Sliding`] or [`Period`]), as an
/// [`Admit`] for ironward-tokio's `call::RateLimit`: a rate limit around any async call,
/// shared by every process that names the limiter.
///
/// A call takes its cost from the key at the piece's clock reading (`take_n`, one script),
/// and a refusal says how long until room, from the same script. It holds nothing ahead:
/// a script decides at the reading it is given, and a slot held for a later instant would
/// be another process's to take. So a `RateLimit` made to
/// [`wait_up_to`](ironward_tokio::call::RateLimit::wait_up_to) a bound sleeps the wait it
/// was told and takes again, within the same bound and deadline: as fair as the store, which
/// other processes share, and not first come first served. A waiter dropped holds nothing,
/// so nothing is given back.
///
/// **When Redis fails.** A Redis that is down is not a failure here: the limiter fails
/// over and decides on its local fallback (see [`Store`]), and the call is admitted or
/// refused by it. A Redis that does not answer within [`Options::timeout`](crate::Options::timeout),
/// or answers what no script gives ([`StoreError`]), has the call refused as
/// [`Denied::Unavailable`], its wait the store's timeout, as `FleetQuotaLayer` refuses it:
/// a limit that is not known to have room admits nothing. (Made
/// [`OnTimeout::Fallback`](crate::OnTimeout::Fallback), a store answers such a call from
/// its fallback instead.)
///
/// The piece reads its own clock for `now`: give it [`Clock::unix`](ironward_tokio::Clock::unix)
/// so that every process reads one clock (or set [`Time::Server`](crate::Time::Server) on the
/// store, to read Redis's). The limit is fixed: a retune is refused.
///
/// It is an [`Admit`] for `OnKey<Bucket>`, `OnKey<Sliding>` and `OnKey<Period>`.
/// `Clone` is cheap: the limiter is an `Arc`, the key shared.
///
/// # Examples
///
/// With no Redis at the address, the limiter decides on its local fallback (this example
/// runs without a server):
///
/// ```
/// use std::time::Duration;
/// use ironward_redis::{Bucket, OnKey, Options, Store};
/// use ironward_tokio::Clock;
/// use ironward_tokio::call::{CallError, RateLimit};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> redis::RedisResult<()> {
/// let options = Options { start_local: true, share: 1.0, ..Options::default() };
/// let store = Store::connect("redis+unix:///nonexistent/redis.sock", options).await?;
/// let (clock, _hand) = Clock::manual(Duration::ZERO);
/// // One call a second for the client "10.0.0.7", fleet-wide.
/// let bucket = Bucket::new(&store, "api", 1.0, 1.0);
/// let limit = RateLimit::over(OnKey::new(bucket, "10.0.0.7")).with_clock(clock.clone());
/// let ok = || async { Ok::<_, std::io::Error>(()) };
/// assert!(limit.call(ok).await.is_ok());
/// let Err(CallError::Refused(refused)) = limit.call(ok).await else { panic!() };
/// assert_eq!(refused.retry_after(), Duration::from_secs(1));
/// // Made to wait, it sleeps the second on the clock and takes again.
/// assert!(limit.clone().wait_up_to(Duration::from_secs(2)).call(ok).await.is_ok());
/// assert_eq!(clock.now(), Duration::from_secs(1));
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct OnKey<L> {
    limiter: L,
    key: Arc<[u8]>,
}

impl<L> OnKey<L> {
    /// `key` of `limiter`.
    pub fn new(limiter: L, key: impl AsRef<[u8]>) -> Self {
        Self {
            limiter,
            key: key.as_ref().into(),
        }
    }

    /// The limiter.
    pub fn limiter(&self) -> &L {
        &self.limiter
    }

    /// The key.
    pub fn key(&self) -> &[u8] {
        &self.key
    }
}

/// What [`OnKey`] asks of a Redis limiter: a take of a cost on a key, and the limit.
pub(crate) trait Takes: Send + Sync + 'static {
    /// What a take answers: a `bool` or a [`Usage`](ironward::Usage).
    type Value: Admits;

    /// `take_n` of `cost` on `key` at `now`.
    fn take_cost(
        &self,
        key: &[u8],
        now: Duration,
        cost: u32,
    ) -> impl Future<Output = Result<Answer<Self::Value>, StoreError>> + Send;

    /// The limit, as a [`Quota`].
    fn quota(&self) -> Quota;

    /// The store the keys are in.
    fn home(&self) -> &Store;
}

impl Takes for Bucket {
    type Value = bool;

    async fn take_cost(
        &self,
        key: &[u8],
        now: Duration,
        cost: u32,
    ) -> Result<Answer<bool>, StoreError> {
        self.take(key, now, f64::from(cost)).await
    }

    fn quota(&self) -> Quota {
        Quota::bucket(self.rate(), self.burst())
    }

    fn home(&self) -> &Store {
        self.store()
    }
}

impl Takes for Sliding {
    type Value = bool;

    async fn take_cost(
        &self,
        key: &[u8],
        now: Duration,
        cost: u32,
    ) -> Result<Answer<bool>, StoreError> {
        self.take_n(key, now, cost).await
    }

    fn quota(&self) -> Quota {
        Quota::sliding(Sliding::quota(self), self.window())
    }

    fn home(&self) -> &Store {
        self.store()
    }
}

impl Takes for Period {
    type Value = Usage;

    async fn take_cost(
        &self,
        key: &[u8],
        now: Duration,
        cost: u32,
    ) -> Result<Answer<Usage>, StoreError> {
        self.take_n(key, now, cost).await
    }

    fn quota(&self) -> Quota {
        let (quota, period) = (Period::quota(self), self.period());
        if self.0.align {
            Quota::aligned(quota, period)
        } else {
            Quota::period(quota, period)
        }
    }

    fn home(&self) -> &Store {
        self.store()
    }
}

/// A take on the key, now; a refusal with the script's wait; a store that did not decide
/// refused as unavailable for its timeout. Nothing is held ahead, so nothing is given back.
impl<L: Takes> Admit for OnKey<L> {
    type Slot = ();

    async fn admit(
        &self,
        now: Duration,
        cost: u32,
        _within: Duration,
    ) -> Result<Admitted<()>, Denied> {
        match self.limiter.take_cost(&self.key, now, cost).await {
            Ok(answer) if answer.value.admits() => Ok(Admitted {
                wait: Duration::ZERO,
                slot: None,
            }),
            Ok(answer) => Err(Denied::Later { wait: answer.next }),
            Err(_) => Err(Denied::Unavailable {
                retry_after: self.limiter.home().options().timeout,
            }),
        }
    }

    fn give_back(&self, (): (), _now: Duration) {}

    fn limit(&self) -> Quota {
        self.limiter.quota()
    }
}

impl<L: fmt::Debug> fmt::Debug for OnKey<L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OnKey")
            .field("limiter", &self.limiter)
            .field("key", &String::from_utf8_lossy(&self.key))
            .finish()
    }
}
