//! The backend's schedule: phases in which calls fail more often or take longer, and the
//! values that move over them.

use core::time::Duration;

use serde::Deserialize;

/// A stretch of time during which calls fail more often or take longer, or the backend
/// has fewer cores.
///
/// `failure`, `slowdown` and `capacity` are each a number (held over the phase) or a pair
/// `[from, to]` that moves linearly over it. Where phases overlap, the highest failure
/// probability and the product of the slowdowns and of the capacities apply. `capacity` is
/// the share of the backend's cores in force, read by a processor-sharing backend only
/// ([`Discipline::Sharing`](crate::Discipline::Sharing)): 0.5 halves what it serves a second
/// and the concurrency that keeps it busy, where a slowdown of 2 halves the first and keeps
/// the second.
///
/// # Default
///
/// From 0 s to 0 s, changing nothing.
#[derive(Debug, Clone, Copy, PartialEq, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Phase {
    /// When the phase starts.
    #[serde(deserialize_with = "crate::humane::read")]
    pub start: Duration,
    /// When it ends (exclusive).
    #[serde(deserialize_with = "crate::humane::read")]
    pub end: Duration,
    /// The probability a call fails.
    pub failure: Option<Change>,
    /// What service times are multiplied by.
    pub slowdown: Option<Change>,
    /// The share of the cores in force (a processor-sharing backend's only).
    pub capacity: Option<Change>,
}

impl Phase {
    /// What the phase does, in a word or two, for a picture to mark it with: "outage" for
    /// every call failing, "cold start" for a slowdown that eases back to normal, otherwise
    /// the failure share, the slowdown factor or the share of the cores ("5% errors",
    /// "errors 0→30%", "slow ×3", "cores ×0.5"), joined by commas where there are several;
    /// `None` for a phase that changes nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward_sim::{Change, Phase};
    ///
    /// let outage = Phase { failure: Some(Change { from: 1.0, to: 1.0 }), ..Phase::default() };
    /// assert_eq!(outage.label().as_deref(), Some("outage"));
    /// let cold = Phase { slowdown: Some(Change { from: 4.0, to: 1.0 }), ..Phase::default() };
    /// assert_eq!(cold.label().as_deref(), Some("cold start"));
    /// let halved = Phase { capacity: Some(Change { from: 0.5, to: 0.5 }), ..Phase::default() };
    /// assert_eq!(halved.label().as_deref(), Some("cores ×0.5"));
    /// assert_eq!(Phase::default().label(), None);
    /// ```
    pub fn label(&self) -> Option<String> {
        let percent = |v: f64| format!("{}%", trim(100.0 * v));
        let failure = self.failure.and_then(|c| match (c.from, c.to) {
            (a, b) if a >= 1.0 && b >= 1.0 => Some("outage".to_string()),
            (a, b) if a <= 0.0 && b <= 0.0 => None,
            (a, b) if a == b => Some(format!("{} errors", percent(a))),
            (a, b) => Some(format!("errors {}→{}", trim(100.0 * a), percent(b))),
        });
        let slowdown = self.slowdown.and_then(|c| match (c.from, c.to) {
            (a, b) if a == 1.0 && b == 1.0 => None,
            (a, b) if a > b && b <= 1.0 => Some("cold start".to_string()),
            (a, b) if a == b => Some(format!("slow ×{}", trim(a))),
            (a, b) => Some(format!("slow ×{}→×{}", trim(a), trim(b))),
        });
        let capacity = self.capacity.and_then(|c| match (c.from, c.to) {
            (a, b) if a == 1.0 && b == 1.0 => None,
            (a, b) if a == b => Some(format!("cores ×{}", trim(a))),
            (a, b) => Some(format!("cores ×{}→×{}", trim(a), trim(b))),
        });
        let words: Vec<String> = [failure, slowdown, capacity]
            .into_iter()
            .flatten()
            .collect();
        (!words.is_empty()).then(|| words.join(", "))
    }
}

/// A figure with at most two decimals and no trailing zeros: 3, 2.5, 0.25.
fn trim(v: f64) -> String {
    let text = format!("{v:.2}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A value that moves linearly from `from` to `to`; written as a number when it holds still.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(from = "Written")]
pub struct Change {
    /// The value at the start.
    pub from: f64,
    /// The value at the end.
    pub to: f64,
}

/// How a [`Change`] is written: `0.5` or `[0.0, 0.5]`.
#[derive(Deserialize)]
#[serde(untagged)]
enum Written {
    Still(f64),
    Moving([f64; 2]),
}

impl Change {
    /// The value `along` the way from `from` (0) to `to` (1); a value held still is itself
    /// throughout, an infinite one too (where `∞ − ∞` would make it NaN).
    pub(super) fn at(&self, along: f64) -> f64 {
        if self.from == self.to {
            return self.from;
        }
        self.from + (self.to - self.from) * along
    }
}

impl From<Written> for Change {
    fn from(written: Written) -> Self {
        match written {
            Written::Still(v) => Self { from: v, to: v },
            Written::Moving([from, to]) => Self { from, to },
        }
    }
}
