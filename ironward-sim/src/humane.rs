//! Durations in scenario files, read with the core's grammar ("100ms", "1m30s", "1h").

use core::time::Duration;

use ironward::Sre;
use serde::de::{self, Deserialize, Deserializer, value::MapDeserializer};

use crate::ScenarioError;

/// Reads a duration written as the core writes one: `"100ms"`, `"10s"`, `"1m30s"`, `"1h"`.
///
/// The grammar is the core's (`ironward`'s `serde` feature: whole or exact decimal numbers,
/// units `ns`, `us`, `ms`, `s`, `m`, `h`, `d`), so a scenario file and a policy record read
/// durations alike. The core keeps its parser private; rather than keep a second copy of it,
/// this reads the text as the `probe` field of an [`Sre`] record, which is a humane duration.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward_sim::parse_duration;
///
/// assert_eq!(parse_duration("1m30s").unwrap(), Duration::from_secs(90));
/// assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
/// assert!(parse_duration("10").is_err(), "a number needs a unit");
/// ```
pub fn parse_duration(text: &str) -> Result<Duration, ScenarioError> {
    let field = core::iter::once(("probe", text));
    Sre::deserialize(MapDeserializer::<_, de::value::Error>::new(field))
        .map(|sre| sre.probe)
        .map_err(|e| ScenarioError::Invalid(e.to_string()))
}

/// `#[serde(deserialize_with)]` for a humane duration.
pub(crate) fn read<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    let text = String::deserialize(d)?;
    parse_duration(&text).map_err(de::Error::custom)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_unit_the_core_reads() {
        let cases = [
            ("0s", Duration::ZERO),
            ("1500us", Duration::from_micros(1500)),
            ("1.5s", Duration::from_millis(1500)),
            ("1h 30m", Duration::from_secs(5400)),
            ("1d", Duration::from_secs(86_400)),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_duration(text).unwrap(), expected, "{text}");
        }
    }

    #[test]
    fn says_why_a_duration_does_not_read() {
        let why = parse_duration("10 s").unwrap_err().to_string();
        assert!(why.contains("duration"), "{why}");
    }
}
