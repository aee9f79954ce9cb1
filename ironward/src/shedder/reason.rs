//! Why the shedder refused: the heat and the load it read.

use core::fmt;

use crate::criticality::Criticality;

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

#[cfg(test)]
mod tests {
    extern crate std;

    use std::string::ToString;

    use super::*;

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
}
