//! [`Warded`] as a bb8 [`ManageConnection`].

use bb8::ManageConnection;

use ironward::{CircuitBreaker, Outcome};

use crate::error::WardError;
use crate::warded::Warded;

/// A bb8 manager behind a ward: `connect` asks the ward first and fails fast with
/// [`WardError::Refused`] when it refuses; `is_valid` and `has_broken` pass through to the
/// inner manager and tell the ward's breaker how they went.
///
/// bb8 sends a failed connect's error to the pool's `error_sink`, never to the checkout,
/// which waits up to the pool's `connection_timeout`: set it short for checkouts to fail
/// fast while the ward refuses.
///
/// A failed `is_valid`, and a connection `has_broken` reports broken, count as backend
/// failures in the breaker; a passed `is_valid` as a success. Neither moves the backoff,
/// which counts connects alone.
impl<M, B> ManageConnection for Warded<M, B>
where
    M: ManageConnection,
    B: CircuitBreaker + Send + 'static,
    B::Policy: Send,
    B::Permit: Send,
    B::Reason: Send + Sync + 'static,
{
    type Connection = M::Connection;
    type Error = WardError<M::Error, B::Reason>;

    async fn connect(&self) -> Result<Self::Connection, Self::Error> {
        self.attempt(self.inner().connect()).await
    }

    async fn is_valid(&self, conn: &mut Self::Connection) -> Result<(), Self::Error> {
        let result = self.inner().is_valid(conn).await;
        self.record(if result.is_ok() {
            Outcome::Success
        } else {
            Outcome::Failure
        });
        result.map_err(WardError::Backend)
    }

    fn has_broken(&self, conn: &mut Self::Connection) -> bool {
        let broken = self.inner().has_broken(conn);
        if broken {
            self.record(Outcome::Failure);
        }
        broken
    }
}
