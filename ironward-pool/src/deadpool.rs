//! [`Warded`] as a deadpool [`Manager`].

use deadpool::managed::{Manager, Metrics, RecycleError, RecycleResult};

use ironward::{CircuitBreaker, Outcome};

use crate::error::WardError;
use crate::warded::Warded;

/// A deadpool manager behind a ward: `create` asks the ward first and fails fast with
/// [`WardError::Refused`] when it refuses; `recycle` passes through to the inner manager and
/// tells the ward's breaker how it went.
///
/// A recycle that fails with the backend's error counts as a backend failure in the
/// breaker (a connection that broke is the backend failing), and one that succeeds as a
/// success; a recycle refused with a message (deadpool's `RecycleError::Message`, a
/// manager's own judgement such as a connection too old) is not counted. Neither moves the
/// backoff, which counts connects alone.
impl<M, B> Manager for Warded<M, B>
where
    M: Manager,
    B: CircuitBreaker + Send + 'static,
    B::Policy: Send,
    B::Permit: Send,
    B::Reason: Send + Sync + 'static,
{
    type Type = M::Type;
    type Error = WardError<M::Error, B::Reason>;

    async fn create(&self) -> Result<Self::Type, Self::Error> {
        self.attempt(self.inner().create()).await
    }

    async fn recycle(&self, obj: &mut Self::Type, metrics: &Metrics) -> RecycleResult<Self::Error> {
        match self.inner().recycle(obj, metrics).await {
            Ok(()) => {
                self.record(Outcome::Success);
                Ok(())
            }
            Err(RecycleError::Backend(err)) => {
                self.record(Outcome::Failure);
                Err(RecycleError::Backend(WardError::Backend(err)))
            }
            Err(RecycleError::Message(message)) => Err(RecycleError::Message(message)),
        }
    }

    fn detach(&self, obj: &mut Self::Type) {
        self.inner().detach(obj);
    }
}
