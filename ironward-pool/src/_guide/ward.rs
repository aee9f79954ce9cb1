//! What the ward does: the backoff, the bucket and the breaker in front of every connect, their defaults, and when to use which.
//!
//! Every connect asks, in order ([`Ward`](ironward::Ward) has the details):
//!
//! - **the backoff**: after a failed connect, none until a wait has passed (growing with each
//!   failure in a row, by [`Backoff::delay`](ironward::Backoff::delay), forgotten on a
//!   success), and while connects are failing only one at a time. This is what stops a pool
//!   from hammering a database that is down.
//! - **the bucket**: at most `burst` connects at once and `rate` a second. This is what stops
//!   a reconnect storm when it comes back.
//! - **the breaker**: the SRE throttle, fed by connects, by the pool's checks of the
//!   connections it holds (a recycle, a validity check) and by the commands a caller reports
//!   ([`Handle::record`]). This is what thins the connects to a backend that flaps, which the
//!   backoff forgets on each success. A pool checks a connection once before it drops it, so
//!   a backend that accepts connections and fails their commands shows as one failed check
//!   per successful connect: two calls a success, which the breaker (refusing past 5 calls
//!   plus 1.5 × its successes) refuses on only once its window holds more than 10 such pairs,
//!   and then a small share. Report the commands' outcomes to it, and each connect is one
//!   success among three calls or more.
//!
//! The policy is a [`Reconnect`](ironward::Reconnect); its default, [`RECONNECT`](ironward::RECONNECT):
//!
//! | piece | default |
//! | --- | --- |
//! | breaker | go-zero's SRE preset: 5 calls never refused, `k` 1.5, a probe after 1 s, 10 s of history |
//! | bucket | 4 connects a second, 4 at once |
//! | backoff | 250 ms, growing by 1.6 to 4 s, spread by a fifth either way (gRPC's connection backoff, with a shorter start and cap) |
//! | checkouts | open: the pool's size bounds them |
//!
//! **The classic breaker instead.** `Warded::with_policy(manager, RECONNECT_CLASSIC)` runs
//! the classic breaker ([`RECONNECT_CLASSIC`](ironward::RECONNECT_CLASSIC): the last 20
//! outcomes, open at half failed, 1 s open growing to the backoff's 4 s, one probe) with the
//! same bucket and backoff: a hard stop instead of a share, with each change of state counted
//! and logged ([metrics](super::metrics)). Pick it when the team's alerts speak of open and
//! closed, or when a database that fails should see no connect at all but the probe; its
//! table of values says why each is what it is.
//!
//! **When to use which piece.** Keep all three for a database or a cache: the backoff is the
//! one that matters while it is down, the bucket when it comes back, the breaker when it
//! flaps. Lower `rate` and `burst` for a backend whose connects are expensive (TLS, auth, a
//! process per connection); raise `backoff.cap` for one whose outages last minutes. A gate
//! on checkouts ([`Checkouts::Gate`](ironward::Checkouts::Gate), through
//! [`Handle::checkout`]) turns a backlog of waiters into fast refusals; a shedder
//! ([`Checkouts::Shed`](ironward::Checkouts::Shed)) refuses checkouts when this server is hot
//! and full, by the CPU reading given to [`Warded::with_cpu`].
//!
//! **What differs from the pools' own retry.** deadpool tries a fresh connect on every
//! checkout that finds no idle connection. bb8 retries each failed connect on its own, after
//! 400 ms doubling to half its connection timeout, while the checkout waits up to that timeout
//! (30 s by default). Neither knows that the last hundred connects failed, nor how many of its
//! connects are in flight at once. With the ward, the database sees one connect per backoff
//! wait, a deadpool checkout during an outage fails in microseconds with the ward's refusal
//! instead of waiting out a connect, and when the database is back the pool refills at the
//! bucket's pace. bb8's own retry loop stays: each of its attempts asks the ward, which
//! refuses those that come too soon.
//!
//! [`Handle::record`]: crate::Handle::record
//! [`Handle::checkout`]: crate::Handle::checkout
//! [`Warded::with_cpu`]: crate::Warded::with_cpu
