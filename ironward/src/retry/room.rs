//! The wait arithmetic every retry loop of the core shares: whether a wait fits what is left of
//! a time budget, and how a wait the failure names meets the backoff. The engine, the HTTP
//! per-response rules and the gRPC plan's deadline all answer by these, so near
//! `Duration::MAX` they saturate alike.

use core::time::Duration;

use super::Rules;

/// Whether `wait`, and then `reserve` for the attempt after it, fit strictly inside `left`.
///
/// Strict, because an attempt that would start with nothing left could only time out. A sum
/// past `Duration::MAX` saturates there, which is never less than `left`, so an enormous wait
/// never fits by overflow.
#[inline]
pub(crate) fn fits(wait: Duration, reserve: Duration, left: Duration) -> bool {
    wait.saturating_add(reserve) < left
}

/// What a wait must fit: what is left of the time budget, the reserve set aside for the next
/// attempt, and the longest wait a failure may name.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Room {
    /// What is left of the total time budget when the failure is decided.
    pub(crate) left: Duration,
    /// The time set aside for the next attempt itself.
    pub(crate) reserve: Duration,
    /// The most a named wait may ask for: the backoff's cap.
    pub(crate) cap: Duration,
}

/// Why a wait does not fit its [`Room`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Short<E> {
    /// The wait and the reserve do not fit what is left of the budget.
    Budget,
    /// The failure named a wait its caller could not read, for this reason.
    Named(E),
    /// The named wait is longer than the cap.
    Cap,
}

impl Room {
    /// The room `rules` leave a failure decided `elapsed` after the call started.
    #[inline]
    pub(crate) fn of(rules: &Rules, elapsed: Duration) -> Self {
        Self {
            left: rules.total_budget.saturating_sub(elapsed),
            reserve: rules.request_reserve,
            cap: rules.backoff.cap,
        }
    }

    /// The wait after a failure whose backoff drew `client`, and which named the wait `named`
    /// returns (read only once the backoff alone fits):
    ///
    /// 1. `client` must fit the budget with the reserve, else [`Short::Budget`];
    /// 2. a named wait that could not be read is [`Short::Named`], one above the cap
    ///    [`Short::Cap`]: a server's minimum is never clipped to the cap;
    /// 3. the wait is the longer of the two, and it must fit the budget with the reserve.
    ///
    /// HTTP's rule order (rules 6 to 9 of `http_retry`) is this order, which is why the
    /// budget is checked twice: a retry the backoff alone could not fit stops for the budget
    /// whatever the server said.
    pub(crate) fn settle<E>(
        &self,
        client: Duration,
        named: impl FnOnce() -> Result<Option<Duration>, E>,
    ) -> Result<Duration, Short<E>> {
        if !fits(client, self.reserve, self.left) {
            return Err(Short::Budget);
        }
        let server = named().map_err(Short::Named)?.unwrap_or(Duration::ZERO);
        if server > self.cap {
            return Err(Short::Cap);
        }
        let wait = client.max(server);
        if !fits(wait, self.reserve, self.left) {
            return Err(Short::Budget);
        }
        Ok(wait)
    }
}
