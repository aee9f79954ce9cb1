//! Reading a core policy record that lets unknown keys pass, refusing them as the rest of a
//! scenario file does.

use serde::Serialize;
use serde::de::{self, Deserialize, DeserializeOwned, Deserializer};

/// `#[serde(deserialize_with)]` for a core record that does not refuse unknown keys (the
/// core's [`Classic`](ironward::Classic) reads with `#[serde(default)]` alone): reads it, writes
/// what was read back, and refuses the first key written that the record did not read.
///
/// Every field a record reads is a field it writes, so a key of the text missing from what
/// the record writes back is one it ignored: a misspelling (`failure_rat`), or a field of
/// another kind of record. The record's own reading decides everything else (types, variants,
/// durations); this adds only the refusal every other table of a scenario makes.
pub(crate) fn read<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned + Serialize,
{
    let written = toml::Value::deserialize(d)?;
    let record = T::deserialize(written.clone()).map_err(de::Error::custom)?;
    let read = toml::Value::try_from(&record).map_err(de::Error::custom)?;
    match unread(&written, &read) {
        None => Ok(record),
        Some(key) => Err(de::Error::custom(format_args!("unknown field `{key}`"))),
    }
}

/// The first key of `written`, as a dotted path, that `read` does not hold.
fn unread(written: &toml::Value, read: &toml::Value) -> Option<String> {
    let (toml::Value::Table(written), toml::Value::Table(read)) = (written, read) else {
        return None;
    };
    written.iter().find_map(|(key, value)| match read.get(key) {
        None => Some(key.clone()),
        Some(back) => unread(value, back).map(|inner| format!("{key}.{inner}")),
    })
}

#[cfg(test)]
mod tests {
    use core::time::Duration;

    use ironward::classic::{OpenWait, Record};
    use ironward::{CLASSIC, Classic};

    use crate::policy::{BreakerPolicy, Policies};

    fn classic(text: &str) -> Result<Classic, String> {
        let policies: Policies =
            toml::from_str(&format!("breaker = {{ kind = \"classic\"{text} }}"))
                .map_err(|e| e.to_string())?;
        match policies.breaker {
            Some(BreakerPolicy::Classic(policy)) => Ok(policy),
            other => panic!("a classic breaker, not {other:?}"),
        }
    }

    #[test]
    fn a_classic_breaker_reads_as_the_cores_policy_defaulting_to_classic() {
        assert_eq!(classic(""), Ok(CLASSIC));
        let read = classic(
            ", open = { fixed = \"5s\" }, record = { time = { span = \"30s\", buckets = 10 } }, \
             failure_rate = 0.1, lease = \"2s\"",
        );
        let want = Classic {
            open: OpenWait::Fixed(Duration::from_secs(5)),
            record: Record::Time {
                span: Duration::from_secs(30),
                buckets: 10,
            },
            failure_rate: 0.1,
            lease: Duration::from_secs(2),
            ..CLASSIC
        };
        assert_eq!(read, Ok(want));
        let growing =
            classic(", open = { growing = { first = \"1s\", factor = 2.0, max = \"1m\" } }");
        assert_eq!(
            growing.map(|c| c.open.after(9)),
            Ok(Duration::from_secs(60))
        );
    }

    #[test]
    fn a_key_the_classic_policy_does_not_read_is_refused_by_its_path() {
        for (text, key) in [
            (", failure_rat = 0.3", "failure_rat"),
            (
                ", record = { count = { calls = 5, failures = 3 } }",
                "record.count.failures",
            ),
            (
                ", open = { growing = { first = \"1s\", factor = 2.0, max = \"9s\", cap = \"9s\" } }",
                "open.growing.cap",
            ),
        ] {
            let err = classic(text).unwrap_err();
            assert!(
                err.contains(&format!("unknown field `{key}`")),
                "{text}: {err}"
            );
        }
    }

    #[test]
    fn what_the_policy_itself_refuses_is_its_own_error() {
        let err = classic(", open = { fixd = \"5s\" }").unwrap_err();
        assert!(err.contains("fixd"), "{err}");
        let err = classic(", open = { fixed = \"5\" }").unwrap_err();
        assert!(err.contains("duration"), "{err}");
        let err = classic(", probes = -1").unwrap_err();
        assert!(err.contains("-1"), "{err}");
    }
}
