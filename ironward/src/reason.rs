//! Why a decision refused: the numbers it decided by, one record per piece.
//!
//! Each decision has a `check` beside it that answers `Result<token, reason>`, after
//! governor's `check() -> Result<(), NotUntil>`, and the decision is `check` with the reason
//! discarded, so there is one rule. A reason holds what the decision computed anyway, so
//! building it costs nothing the refusal did not already pay; the one number that would cost
//! more, a bucket's wait, is worked out only when asked ([`BucketReason::next`]).
//!
//! A refusal is an answer, not a failure: these records explain it. They implement
//! [`core::error::Error`] so that an edge can report one as the cause of the error it returns,
//! and their `Display` is one lower-case line with the numbers, for a log.

use core::fmt;
use core::time::Duration;

use crate::bucket::Bucket;
use crate::criticality::Criticality;

/// Why a [`Breaker`](crate::Breaker) refused a call: the window it read and the draw it
/// compared, from [`Breaker::check`](crate::Breaker::check).
///
/// The numbers are those of the formula on [`Breaker`](crate::Breaker), read before the
/// refusal was recorded as a drop: `drop = (total − protection − k·accepts) / (total + 1)`,
/// scaled by `(size − working) / size`. A refusal always has `roll < drop`.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::{Breaker, SRE};
///
/// let mut breaker = Breaker::new(SRE, Duration::ZERO);
/// for _ in 0..100 {
///     let permit = breaker.allow(Duration::ZERO, 0.99).expect("over the drop fraction");
///     breaker.fail(permit, Duration::ZERO);
/// }
/// let reason = breaker.check(Duration::ZERO, 0.25).expect_err("under the drop fraction");
/// assert!(reason.roll < reason.drop);
/// assert_eq!(
///     reason.to_string(),
///     "breaker dropped 94.1% of calls (roll 0.25): 0 accepts in 100 calls, failing 1 bucket, working 0",
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BreakerReason {
    /// Calls in the window, current bucket included: successes, failures and drops.
    pub total: u64,
    /// Successes in the window.
    pub accepts: u64,
    /// The run of buckets holding only failures at the window's newest end.
    pub failing: usize,
    /// The run of buckets holding only successes at the window's newest end.
    pub working: usize,
    /// The weight each accept was given: [`Sre::k`](crate::Sre::k) decayed towards
    /// [`Sre::floor`](crate::Sre::floor) by the failing run (`w` in the formula on
    /// [`Breaker`](crate::Breaker)).
    pub k: f64,
    /// The probability the call was refused with, after the recovery scaling: what
    /// [`Breaker::ratio`](crate::Breaker::ratio) read at the same instant.
    pub drop: f64,
    /// The caller's draw, clamped into `[0, 1)` (NaN and negatives are 0).
    pub roll: f64,
}

impl fmt::Display for BreakerReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "breaker dropped {:.1}% of calls (roll {:.2}): {} in {}, failing {}, working {}",
            self.drop * 100.0,
            self.roll,
            Count(self.accepts, "accept"),
            Count(self.total, "call"),
            Count(self.failing as u64, "bucket"),
            self.working,
        )
    }
}

impl core::error::Error for BreakerReason {}

/// Why a [`Shedder`](crate::Shedder) refused a call: the heat and the load it read, from
/// [`Shedder::check`](crate::Shedder::check).
///
/// A shedder refuses when it is hot and full: both `average` and `flying` exceed `capacity`,
/// and either the reading is at or over [`Shed::cpu`](crate::Shed::cpu) (`overloaded`) or
/// the shedder refused within [`Shed::cool`](crate::Shed::cool) of the last overload
/// (`cooling`). The second is asked only when the first fails, so a refusal has exactly one
/// of the two.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::{SHED, Shedder};
///
/// let ms = Duration::from_millis;
/// let mut shedder = Shedder::new(SHED, ms(0));
/// let mut tickets: Vec<_> = (0..100).map(|_| shedder.allow(ms(0), 950).unwrap()).collect();
/// for ticket in tickets.drain(..50) {
///     shedder.pass(ticket, ms(50));
/// }
/// let reason = shedder.check(ms(60), 950).expect_err("hot and full");
/// assert!(reason.flying as f64 > reason.capacity && reason.average > reason.capacity);
/// assert_eq!(
///     reason.to_string(),
///     "shedder refused at cpu 95.0% (overloaded): 50 in flight, 58.44 on average, over a capacity of 5.00",
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShedReason {
    /// The CPU reading in thousandths, as read: at most 1000.
    pub cpu: u32,
    /// Calls in flight before this one.
    pub flying: u64,
    /// The moving average of calls in flight.
    pub average: f64,
    /// How many calls at once the window shows the server can carry, scaled for the CPU:
    /// the busiest bucket's passes times the fastest bucket's mean response time over the
    /// bucket width, times the overload factor.
    pub capacity: f64,
    /// The reading is at or over the threshold.
    pub overloaded: bool,
    /// The reading is under the threshold, but the shedder refused within the cooling time
    /// of the last overload: it is still hot.
    pub cooling: bool,
    /// The class the call asked as ([`Criticality::Critical`] for
    /// [`Shedder::check`](crate::Shedder::check)); `capacity` is that class's share.
    pub criticality: Criticality,
    /// The least critical class admitted at the time. A `criticality` below it was refused
    /// because a more critical call was refused within the cooling time, however full.
    pub floor: Criticality,
}

impl fmt::Display for ShedReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.criticality < self.floor {
            return write!(
                f,
                "shedder refused a {} call: classes below {} are refused after a refusal ({} in flight)",
                self.criticality, self.floor, self.flying,
            );
        }
        let heat = match (self.overloaded, self.cooling) {
            (true, _) => "overloaded",
            (false, true) => "cooling after a refusal",
            (false, false) => "not hot",
        };
        f.write_str("shedder refused")?;
        if self.criticality != Criticality::Critical {
            write!(f, " a {} call", self.criticality)?;
        }
        write!(
            f,
            " at cpu {}.{}% ({heat}): {} in flight, {:.2} on average, over a capacity of {:.2}",
            self.cpu / 10,
            self.cpu % 10,
            self.flying,
            self.average,
            self.capacity,
        )
    }
}

impl core::error::Error for ShedReason {}

/// Why a [`Bucket`] refused a take: the tokens it held and the cost wanted, from
/// [`Bucket::check`].
///
/// When the tokens will be there is not worked out on the refusal, which would cost more than
/// the decision: [`next`](BucketReason::next) works it out from the fields when asked.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::Bucket;
///
/// let ms = Duration::from_millis;
/// let mut bucket = Bucket::new(10.0, 20.0, ms(0));
/// assert!(bucket.take(ms(0), 19.5));
/// let reason = bucket.check(ms(0), 1.0).expect_err("half a token left");
/// assert!(reason.tokens < reason.wanted);
/// assert_eq!(reason.next(), ms(50));
/// assert_eq!(
///     reason.to_string(),
///     "bucket holds 0.50 of the 1.00 tokens wanted (burst 20.00, 10.00 a second): next in 50ms",
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BucketReason {
    /// The tokens the bucket held at `at`, refilled and capped at the burst; a refusal keeps
    /// them all.
    pub tokens: f64,
    /// The cost asked for, as given: more than `tokens`, or not a cost at all (negative, NaN
    /// or infinite).
    pub wanted: f64,
    /// The most the bucket holds: at least 1, possibly infinite.
    pub burst: f64,
    /// Tokens a second, as the bucket reads it: finite and at least 0.
    pub rate: f64,
    /// When the tokens were counted: the latest reading the bucket had seen.
    pub at: Duration,
}

impl BucketReason {
    /// How long after `at` the tokens wanted will be there: what [`Bucket::next`] answers at
    /// `at` on the bucket the refusal left, worked out now.
    ///
    /// `Duration::MAX` when they never will be: the cost is over the burst or not a cost, the
    /// bucket does not refill, or the clock's range runs out first. The answer is exact, not
    /// an estimate: it is a bucket holding `tokens` at `at` asked for `wanted`, rounded up
    /// to the first whole nanosecond at which a take succeeds.
    #[must_use = "next only computes the wait"]
    pub fn next(&self) -> Duration {
        Bucket::with_tokens(self.rate, self.burst, self.tokens, self.at).next(self.at, self.wanted)
    }
}

impl fmt::Display for BucketReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "bucket holds {:.2} of the {:.2} tokens wanted (burst {:.2}, {:.2} a second): ",
            self.tokens, self.wanted, self.burst, self.rate,
        )?;
        match self.next() {
            Duration::MAX => f.write_str("never there"),
            next => write!(f, "next in {next:?}"),
        }
    }
}

impl core::error::Error for BucketReason {}

/// Why a [`Sliding`](crate::Sliding) log or a [`Period`](crate::Period) refused an event:
/// the count against the quota, from [`Sliding::check`](crate::Sliding::check) or
/// [`Period::check`](crate::Period::check).
///
/// A refusal of one event always has `count ≥ quota` (of a cost, `count + cost > quota`). A
/// sliding log counts the events inside its window, the refused one left out, so its count is
/// the quota; a period counts every event, the refused one included, as go-zero's
/// `core/limit/periodlimit.go` does, so its count is past the quota.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::{Period, Quota};
///
/// let secs = Duration::from_secs;
/// let mut limit = Period::new(2, secs(60));
/// assert_eq!(limit.check(secs(0)), Ok(Quota::Under));
/// assert_eq!(limit.check(secs(1)), Ok(Quota::Hit));
/// let reason = limit.check(secs(15)).expect_err("over the quota");
/// assert!(reason.count >= reason.quota);
/// assert_eq!(reason.to_string(), "quota used up: 3 counted against 2, room again in 45s");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct QuotaReason {
    /// The events counted (see above), saturating at `u32::MAX`.
    pub count: u32,
    /// The most events the window or period admits.
    pub quota: u32,
    /// How long until there is room again: what `next` would answer at the refusal.
    /// `Duration::MAX` for a sliding log with a quota of 0, which never has room.
    pub next: Duration,
}

impl fmt::Display for QuotaReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "quota used up: {} counted against {}, ",
            self.count, self.quota
        )?;
        match self.next {
            Duration::MAX => f.write_str("never room again"),
            next => write!(f, "room again in {next:?}"),
        }
    }
}

impl core::error::Error for QuotaReason {}

/// Why a [`Gate`](crate::Gate) refused to let a caller in: how many are inside against the
/// limit, from [`Gate::check`](crate::Gate::check).
///
/// A refusal always has `held ≥ limit` (past it after a lowering
/// [`retune`](crate::Gate::retune)).
///
/// # Examples
///
/// ```
/// use ironward::Gate;
///
/// let mut gate = Gate::new(2);
/// assert!(gate.enter() && gate.enter());
/// let reason = gate.check().expect_err("full");
/// assert_eq!((reason.held, reason.limit), (2, 2));
/// assert_eq!(reason.to_string(), "gate full: 2 held against a limit of 2");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GateReason {
    /// How many are inside.
    pub held: u32,
    /// The most the gate lets in at once.
    pub limit: u32,
}

impl fmt::Display for GateReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "gate full: {} held against a limit of {}",
            self.held, self.limit
        )
    }
}

impl core::error::Error for GateReason {}

/// Why a [`Budget`](crate::Budget) refused a retry: the tokens it held against its maximum,
/// from [`Budget::check`](crate::Budget::check).
///
/// gRPC A6 retries only while the tokens are above half of the maximum, so a refusal always
/// has `2·tokens ≤ max_tokens`.
///
/// # Examples
///
/// ```
/// use ironward::Budget;
///
/// let mut budget = Budget::new(10, 0.1);
/// for _ in 0..6 {
///     budget.fail();
/// }
/// let reason = budget.check().expect_err("4 tokens of 10");
/// assert!(2.0 * reason.tokens <= f64::from(reason.max_tokens));
/// assert_eq!(reason.to_string(), "retry budget spent: 4 tokens, not above half of 10");
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BudgetReason {
    /// The tokens held, to three decimal places.
    pub tokens: f64,
    /// The most tokens the budget holds.
    pub max_tokens: u32,
}

impl fmt::Display for BudgetReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "retry budget spent: {} tokens, not above half of {}",
            self.tokens, self.max_tokens
        )
    }
}

impl core::error::Error for BudgetReason {}

/// A count and its noun, the noun plural unless the count is 1: "1 call", "2 calls".
struct Count(u64, &'static str);

impl fmt::Display for Count {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Self(n, noun) = *self;
        write!(f, "{n} {noun}{}", if n == 1 { "" } else { "s" })
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::string::ToString;

    use super::*;

    // The line the crate docs give as the shape of a breaker's reason.
    #[test]
    fn a_breaker_reason_reads_as_one_line_with_its_numbers() {
        let reason = BreakerReason {
            total: 140,
            accepts: 40,
            failing: 3,
            working: 0,
            k: 1.47,
            drop: 0.623,
            roll: 0.41,
        };
        assert_eq!(
            reason.to_string(),
            "breaker dropped 62.3% of calls (roll 0.41): 40 accepts in 140 calls, failing 3 buckets, working 0"
        );
        let one = BreakerReason {
            total: 1,
            accepts: 1,
            failing: 1,
            working: 1,
            ..reason
        };
        assert_eq!(
            one.to_string(),
            "breaker dropped 62.3% of calls (roll 0.41): 1 accept in 1 call, failing 1 bucket, working 1"
        );
    }

    #[test]
    fn a_shed_reason_names_the_heat_that_refused() {
        let reason = ShedReason {
            cpu: 1000,
            flying: 12,
            average: 11.5,
            capacity: 1.0,
            overloaded: false,
            cooling: true,
            criticality: Criticality::Critical,
            floor: Criticality::Sheddable,
        };
        assert_eq!(
            reason.to_string(),
            "shedder refused at cpu 100.0% (cooling after a refusal): 12 in flight, 11.50 on average, over a capacity of 1.00"
        );
        let cold = ShedReason {
            cpu: 5,
            cooling: false,
            ..reason
        };
        assert!(
            cold.to_string()
                .starts_with("shedder refused at cpu 0.5% (not hot)")
        );
    }

    #[test]
    fn a_bucket_reason_that_never_fills_says_so() {
        let reason = BucketReason {
            tokens: 1.0,
            wanted: 3.0,
            burst: 2.0,
            rate: 1.0,
            at: Duration::ZERO,
        };
        assert_eq!(reason.next(), Duration::MAX);
        assert_eq!(
            reason.to_string(),
            "bucket holds 1.00 of the 3.00 tokens wanted (burst 2.00, 1.00 a second): never there"
        );
        let nan = BucketReason {
            wanted: f64::NAN,
            ..reason
        };
        assert_eq!(nan.next(), Duration::MAX);
    }

    #[test]
    fn a_quota_that_never_has_room_says_so() {
        let reason = QuotaReason {
            count: 0,
            quota: 0,
            next: Duration::MAX,
        };
        assert_eq!(
            reason.to_string(),
            "quota used up: 0 counted against 0, never room again"
        );
    }

    #[test]
    fn every_reason_is_an_error_with_no_source() {
        let gate = GateReason { held: 3, limit: 1 };
        let budget = BudgetReason {
            tokens: 0.5,
            max_tokens: 1,
        };
        let reasons: [&dyn core::error::Error; 2] = [&gate, &budget];
        for reason in reasons {
            assert!(reason.source().is_none());
            let line = reason.to_string();
            assert!(!line.contains('\n') && !line.ends_with('.'), "{line}");
            assert_eq!(line, line.to_lowercase());
        }
        assert_eq!(
            budget.to_string(),
            "retry budget spent: 0.5 tokens, not above half of 1"
        );
    }
}
