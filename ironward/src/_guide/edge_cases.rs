//! Edge cases: how every out-of-range input is read, so that nothing panics.
//!
//! No operation panics, for any input. Where an input is out of range it is read as follows:
//!
//! - **Clocks going backwards.** A `now` earlier than one a piece has already seen is read as
//!   the latest seen; read-only queries use the later of `now` and the latest seen. A clock
//!   that steps back therefore never frees capacity, never measures a negative span, and never
//!   triggers a probe. A [`Window`] reads a `now` before its newest bucket as falling in it; a
//!   [`Deadline`] reads a `now` before its start as no time elapsed. A [`SharedPeriod`] keeps
//!   no latest reading (it would make every refusal write): an earlier `now` counts in the
//!   open period, so it decides as [`Period`] does, and only the wait it reports is counted
//!   from it.
//! - **Huge times.** Times and spans are held in whole nanoseconds as `u64`, which covers about
//!   584 years; a later reading (up to `Duration::MAX`) saturates there, which stops time
//!   rather than wrapping it.
//! - **Draws.** NaN and negative draws read as 0; 1 and above as the largest `f64` below 1.
//! - **CPU readings** over 1000 ‰ read as 1000. A [`Shed::cpu`] threshold of 1000 or more
//!   leaves the overload factor at 1 instead of dividing by zero.
//! - **Sizes and widths.** A window size ([`Window::new`], [`Sre::size`], [`Shed::size`])
//!   is held to 1 ..= 65 536 buckets, so no size panics or aborts on an allocation it could
//!   never make; a bucket width, sliding window or period below 1 ns is raised to 1 ns.
//!   Memory is proportional to the sizes the caller chooses: a [`Window`] allocates its
//!   buckets once, in `new`; a [`Sliding`] log reserves up to 4096 entries in `new` and grows
//!   on demand up to its quota beyond that, one entry per reading that admitted a cost inside the
//!   window.
//! - **Policy constants** follow one rule: a constant outside its meaningful range is read as
//!   the nearest value in range, and NaN as the value at which it does least (the one that
//!   refuses least). The ranges, and what NaN is read as:
//!
//!   | constant | range | NaN is | so a NaN |
//!   | --- | --- | --- | --- |
//!   | [`Sre::k`], [`Sre::floor`], [`Sre::protection`] | 0 to infinity | infinity | lets every call through: an infinite one turns the throttle off |
//!   | [`Shed::beta`] | 0 to 1 | 1 | never sheds: the average in flight stays 0 |
//!   | [`Shed::floor`] | 0 to 1 | 1 | keeps the whole capacity however hot the CPU |
//!   | [`Backoff::factor`] | 1 to infinity | 1 | never grows the delay |
//!   | [`Jitter::Spread`] | 0 to 1 | 0 | adds no jitter |
//!   | [`Shares`]' fields | 0 to 1 | 1 | gives the class the whole capacity |
//!   | [`Partitions`]' fields | 0 to 1 | 0 | reserves the class nothing: it borrows while the limit has room, and takes no reservation from the others |
//!   | [`limit::Aimd`]'s `backoff` | 0.5 to 1 | 1 | never lowers the limit on a drop |
//!   | `smoothing` of [`limit::Vegas`] and [`limit::Gradient2`] | 0 to 1 | 0 | freezes the limit |
//!   | [`limit::Gradient2`]'s `tolerance` | 1 to infinity | infinity | never reads a latency as a queue |
//!   | [`limit::Decrease`]'s `Ratio` | 0 to 1 | 1 | never lowers the limit |
//!   | [`limit::Little`]'s `low`, `high`, `growth`, `backoff` | 0 to 1 | 1 | never jumps down, grows by the whole limit, never lowers the limit on a drop |
//!   | [`limit::Little`]'s `headroom` | 1 to 10 | 10 | jumps to ten times Little's estimate |
//!   | [`limit::Little`]'s `quantile` | 0 to 1 | 1 | measures against the slowest recent window |
//!   | [`limit::Failsafe`]'s `max_factor` | 1 to 1000 | 1000 | caps the limit at a thousand times the calls in flight |
//!   | [`limit::Latency`]'s `Percentile` | 0 to 1 | 0 | samples the fastest call |
//!   | [`latency::Tail`]'s `percentile` | 0 to 1 | 0 | hedges after the fastest recent call, held up to the `floor` |
//!
//!   A negative breaker constant is therefore 0, a shedder fraction past 1 is 1, and so on.
//!   [`SreBreaker::ratio`] always lies in `[0, 1]` and is what [`SreBreaker::allow`] decides by: a
//!   ratio of 0 lets every draw through. The rule is for the policy records' float fields;
//!   a limiter's own arguments are amounts it hands out, and a bad one hands out nothing
//!   (the next two items).
//! - **Rates and amounts.** A [`Bucket`] with a non-finite or negative rate never refills; a
//!   NaN or sub-1 burst is 1; a non-finite or negative amount is refused with a `next` of
//!   `Duration::MAX`, as is an amount over the burst. A quota of 0 refuses every cost above 0.
//! - **Retry budgets.** A [`Budget`] holds 1 to 1000 tokens and truncates its token ratio to
//!   three decimal places, as gRPC A6 says; a ratio that is NaN, negative or truncates to 0
//!   gives no token back, so retries stop once failures have spent half the budget.
//! - **Backoff.** Every delay saturates at `Duration::MAX`. Retry 0 is read as 1.
//! - **Wards.** A [`Ward`]'s failures in a row saturate at `u32::MAX`, and the end of its
//!   wait at the clock's end (it then refuses until then). Its bucket reads the rate and
//!   burst as a [`Bucket`] does (a rate of 0 lets `burst` connects through, then none); a
//!   trial connect dropped unsettled stops holding the others back once the backoff's cap
//!   has passed. The backoff's `attempts` is not read: a pool never stops reconnecting.
//! - **Concurrency limits.** A limit, `min` or `initial` of 0 is read as 1 and a `min` above
//!   `max` as `max`, so a [`Limiter`] always admits one call at a time; a
//!   [`limit::Sampling`] `size` of 0 is 1. A class's room is its share of the limit,
//!   truncated, so a share under `1 / limit` admits none of that class. Under [`Partitions`],
//!   a class's reservation is its fraction of the limit rounded up, so any fraction above 0
//!   keeps one call even at a limit of 1; fractions over 1 in all are scaled down to 1 in
//!   proportion; and since reserved calls may pass the limit, a count of calls in flight at
//!   `u32::MAX` refuses every class.
//! - **Tokens settled elsewhere.** A [`Grant`], [`SrePermit`], [`Ticket`], [`Reservation`],
//!   [`ConnectPermit`] or [`Slot`] settled on an instance other than the one that made it (a
//!   clone is another instance) changes nothing there: the settle hands it back as `Some`,
//!   where its own token answers `None`, and the limiter, breaker, shedder or ward counts it
//!   (`foreign`). One `u32` compare, in release builds as in debug ones.
//! - **Counts** ([`Tally`], [`Total`], calls in flight, a [`Period`]'s count) saturate; a
//!   [`QuotaReason::count`] past `u32::MAX` reads as `u32::MAX`.
//! - **Rounding.** Float results round to the nearest nanosecond, except [`Bucket::next`],
//!   which rounds up so that a take at `now + next` succeeds.
//!
//! [`http_retry`] documents its own bounds: it validates its settings and input and answers
//! `Stop(InvalidSettings)` or `Stop(InvalidInput)` rather than guessing.
//!
//! [`Window`]: crate::Window
//! [`latency::Tail`]: crate::latency::Tail
//! [`Deadline`]: crate::Deadline
//! [`SharedPeriod`]: crate::SharedPeriod
//! [`Period`]: crate::Period
//! [`Shed::cpu`]: crate::Shed::cpu
//! [`Window::new`]: crate::Window::new
//! [`Sre::size`]: crate::Sre::size
//! [`Shed::size`]: crate::Shed::size
//! [`Sliding`]: crate::Sliding
//! [`Sre::k`]: crate::Sre::k
//! [`Sre::floor`]: crate::Sre::floor
//! [`Sre::protection`]: crate::Sre::protection
//! [`Shed::beta`]: crate::Shed::beta
//! [`Shed::floor`]: crate::Shed::floor
//! [`Backoff::factor`]: crate::Backoff::factor
//! [`Jitter::Spread`]: crate::Jitter::Spread
//! [`Shares`]: crate::Shares
//! [`limit::Aimd`]: crate::limit::Aimd
//! [`limit::Vegas`]: crate::limit::Vegas
//! [`limit::Gradient2`]: crate::limit::Gradient2
//! [`limit::Decrease`]: crate::limit::Decrease
//! [`limit::Little`]: crate::limit::Little
//! [`limit::Failsafe`]: crate::limit::Failsafe
//! [`limit::Latency`]: crate::limit::Latency
//! [`SreBreaker::ratio`]: crate::SreBreaker::ratio
//! [`SreBreaker::allow`]: crate::SreBreaker::allow
//! [`Bucket`]: crate::Bucket
//! [`Budget`]: crate::Budget
//! [`Ward`]: crate::Ward
//! [`Limiter`]: crate::Limiter
//! [`Partitions`]: crate::Partitions
//! [`limit::Sampling`]: crate::limit::Sampling
//! [`Grant`]: crate::Grant
//! [`SrePermit`]: crate::SrePermit
//! [`Ticket`]: crate::Ticket
//! [`Reservation`]: crate::Reservation
//! [`ConnectPermit`]: crate::ConnectPermit
//! [`Slot`]: crate::Slot
//! [`Tally`]: crate::Tally
//! [`Total`]: crate::Total
//! [`QuotaReason::count`]: crate::QuotaReason::count
//! [`Bucket::next`]: crate::Bucket::next
//! [`http_retry`]: crate::http_retry
