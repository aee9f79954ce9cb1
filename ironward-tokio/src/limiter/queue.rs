//! [`Queue`]: how many calls may wait for room in a full [`SharedLimiter`](crate::SharedLimiter),
//! and for how long.

use std::time::Duration;

/// A bounded wait queue in front of a full limiter: how many calls may wait for room, how
/// the chance of being turned away rises as it fills, and how long a call waits at most.
///
/// A limit that refuses every call past it is strict: a burst a few milliseconds long is
/// refused though the calls in flight would have made room for it a moment later. A queue
/// absorbs such a burst. It must not become the outage instead (a queue that grows faster
/// than it drains holds every call until it times out), so it is bounded twice: by its
/// length, relative to the limit, and by the time a call may wait in it.
///
/// This is failsafe-go's queueing for its adaptive limiter (the `adaptivelimiter` package,
/// `WithQueueing(initialRejectionFactor, maxRejectionFactor)` with `WithMaxWaitTime`). With
/// `limit` the limiter's limit and `waiting` the calls already queued that the call would
/// wait behind (those of its class or above) when it finds no room, the queue turns it away
/// with the probability
///
/// - 0 while `waiting < ⌊limit × initial⌋`: the queue takes it;
/// - 1 once `waiting ≥ ⌊limit × max⌋`: the queue is full;
/// - `(waiting − ⌊limit × initial⌋) / (⌊limit × max⌋ − ⌊limit × initial⌋)` between,
///   rising linearly, so that rejection sets in gradually rather than at a cliff.
///
/// A call is turned away when a draw from `[0, 1)` is at most that probability (failsafe-go
/// compares `rejectionRate >= rand.Float64()`); the draw is taken only between the two
/// thresholds. [`rejection`](Queue::rejection) is that probability.
///
/// failsafe-go counts every queued execution; counting only those ahead keeps a queue full of
/// sheddable calls from turning a critical one away, and still bounds the queue: each class
/// joins only while the calls of its class and above are under the maximum, so the queue
/// holds at most four times `⌊limit × max⌋`.
///
/// A queued call is let in as calls leave flight, the most critical first and, within a
/// class, the first to arrive first; it waits at most `wait` (the time failsafe-go's
/// `WithMaxWaitTime` bounds, which there defaults to no bound), and then asks the limiter
/// once more before it is refused.
///
/// # Default
///
/// [`QUEUE`]:
///
/// | field | value | reference |
/// | --- | --- | --- |
/// | `initial` | 2 | failsafe-go's default `initialRejectionFactor` for a prioritized limiter |
/// | `max` | 3 | failsafe-go's default `maxRejectionFactor` for a prioritized limiter |
/// | `wait` | 1 s | ours: failsafe-go waits without bound unless told; a second is the default sampling window and cooling time of the limiter, past which a waiting call has likely lost its caller |
///
/// # Bad constants
///
/// Nothing panics. A factor under 0 or NaN is read as 0; a `max` under `initial` is read as
/// `initial`. Factors of 0 queue nothing (every call that finds no room is turned away, as
/// with no queue), and an infinite `max` bounds the queue by `wait` alone. Each threshold's
/// product is truncated, saturating at `u64::MAX`.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward_tokio::{QUEUE, Queue};
///
/// let patient = Queue { wait: Duration::from_secs(5), ..QUEUE };
/// assert_eq!((patient.initial, patient.max), (2.0, 3.0));
/// // A limit of 10: the first 20 waiting are never turned away, the 30th always.
/// assert_eq!(QUEUE.rejection(10, 19), 0.0);
/// assert_eq!(QUEUE.rejection(10, 25), 0.5);
/// assert_eq!(QUEUE.rejection(10, 30), 1.0);
/// assert_eq!(Queue::default(), QUEUE);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Queue {
    /// The queue's length, as a multiple of the limit, up to which no call is turned away
    /// (failsafe-go's `initialRejectionFactor`).
    pub initial: f64,
    /// The queue's length, as a multiple of the limit, at which every call is turned away
    /// (failsafe-go's `maxRejectionFactor`): the queue's bound.
    pub max: f64,
    /// The longest a call waits in the queue before it is refused.
    pub wait: Duration,
}

/// The default [`Queue`]: failsafe-go's factors for a prioritized limiter (2 and 3 times the
/// limit), and a wait of at most a second.
pub const QUEUE: Queue = Queue {
    initial: 2.0,
    max: 3.0,
    wait: Duration::from_secs(1),
};

impl Default for Queue {
    fn default() -> Self {
        QUEUE
    }
}

impl Queue {
    /// The chance that a call finding no room is turned away, with `waiting` calls already
    /// queued in front of a limit of `limit`: 0 below the initial threshold, 1 at the
    /// maximum, linear between (see the [type's docs](Queue)).
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward_tokio::{QUEUE, Queue};
    ///
    /// let tight = Queue { initial: 1.0, max: 2.0, ..QUEUE };
    /// assert_eq!(tight.rejection(4, 3), 0.0);
    /// assert_eq!(tight.rejection(4, 5), 0.25);
    /// assert_eq!(tight.rejection(4, 8), 1.0);
    /// ```
    #[must_use]
    pub fn rejection(&self, limit: u32, waiting: usize) -> f64 {
        let (start, end) = self.thresholds(limit);
        let waiting = u64::try_from(waiting).unwrap_or(u64::MAX);
        if waiting < start {
            0.0
        } else if waiting >= end {
            1.0
        } else {
            // start ≤ waiting < end, so the quotient is in [0, 1).
            (waiting - start) as f64 / (end - start) as f64
        }
    }

    /// The two thresholds for a limit of `limit`: `⌊limit × initial⌋` and
    /// `⌊limit × max⌋`, the factors read as the type's docs say.
    fn thresholds(&self, limit: u32) -> (u64, u64) {
        let initial = factor(self.initial);
        let max = factor(self.max).max(initial);
        let limit = f64::from(limit);
        // `as` truncates and saturates, as the docs say.
        ((limit * initial) as u64, (limit * max) as u64)
    }
}

/// A factor as the queue reads it: NaN and negatives as 0.
fn factor(value: f64) -> f64 {
    if value.is_nan() { 0.0 } else { value.max(0.0) }
}

/// Whether a call the queue would turn away with probability `rejection` is turned away
/// by `draw`: always at 1 and never at 0, without reading the draw; between, when the draw
/// is at most the probability, as failsafe-go compares. A draw outside `[0, 1)` is read as
/// the nearer end of it, and NaN as 0.
pub(super) fn turns_away(rejection: f64, draw: impl FnOnce() -> f64) -> bool {
    if rejection >= 1.0 {
        return true;
    }
    if rejection <= 0.0 || rejection.is_nan() {
        return false;
    }
    let draw = draw();
    let draw = if draw.is_nan() {
        0.0
    } else {
        draw.clamp(0.0, 1.0 - f64::EPSILON / 2.0)
    };
    draw <= rejection
}

#[cfg(test)]
mod tests {
    use super::*;

    // failsafe-go's `queueStats.ComputeRejectionRate`: 0 under `limit × initial`, 1 from
    // `limit × max`, linear between.
    #[test]
    fn the_rejection_rises_linearly_between_the_thresholds() {
        let queue = Queue {
            initial: 1.0,
            max: 2.0,
            ..QUEUE
        };
        let rates: Vec<f64> = (0..=22).map(|w| queue.rejection(10, w)).collect();
        assert!(rates[..10].iter().all(|&r| r == 0.0));
        for (w, &rate) in rates.iter().enumerate().take(20).skip(10) {
            assert_eq!(rate, (w - 10) as f64 / 10.0, "{w} waiting");
        }
        assert!(rates[20..].iter().all(|&r| r == 1.0));
    }

    #[test]
    fn thresholds_truncate_as_failsafe_gos_int_conversion_does() {
        let queue = Queue {
            initial: 1.5,
            max: 2.5,
            ..QUEUE
        };
        // 3 × 1.5 = 4.5 → 4; 3 × 2.5 = 7.5 → 7.
        assert_eq!(queue.thresholds(3), (4, 7));
        assert_eq!(queue.rejection(3, 3), 0.0);
        assert_eq!(queue.rejection(3, 4), 0.0);
        assert_eq!(queue.rejection(3, 5), 1.0 / 3.0);
        assert_eq!(queue.rejection(3, 7), 1.0);
    }

    #[test]
    fn bad_factors_are_read_without_panicking() {
        let nan = Queue {
            initial: f64::NAN,
            max: -3.0,
            ..QUEUE
        };
        // Both read as 0: nothing is queued.
        assert_eq!(nan.thresholds(10), (0, 0));
        assert_eq!(nan.rejection(10, 0), 1.0);
        let inverted = Queue {
            initial: 3.0,
            max: 1.0,
            ..QUEUE
        };
        // `max` under `initial` is `initial`: a cliff at 30.
        assert_eq!(inverted.rejection(10, 29), 0.0);
        assert_eq!(inverted.rejection(10, 30), 1.0);
        let endless = Queue {
            max: f64::INFINITY,
            ..QUEUE
        };
        assert_eq!(endless.thresholds(u32::MAX).1, u64::MAX);
        let rate = endless.rejection(10, 1_000_000);
        assert!(rate > 0.0 && rate < 1.0, "{rate}");
        assert_eq!(QUEUE.rejection(0, 0), 1.0, "a limit of 0 queues nothing");
    }

    #[test]
    fn a_draw_at_most_the_rejection_turns_the_call_away() {
        assert!(turns_away(0.5, || 0.5));
        assert!(turns_away(0.5, || 0.0));
        assert!(!turns_away(0.5, || 0.500_001));
        // The ends never read the draw.
        assert!(turns_away(1.0, || panic!("no draw at 1")));
        assert!(!turns_away(0.0, || panic!("no draw at 0")));
        assert!(!turns_away(f64::NAN, || panic!("no draw for NaN")));
        // Hostile draws: NaN is 0, past the top is just under 1.
        assert!(turns_away(0.1, || f64::NAN));
        assert!(!turns_away(0.99, || 7.0));
        assert!(turns_away(0.3, || -2.0));
    }
}
