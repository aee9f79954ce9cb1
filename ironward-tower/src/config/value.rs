//! The values a configuration holds, each checked as it is read, so that a format's error
//! points at the value itself: a count, a rate, a burst, a duration.

use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A count of at least 1: a gate's limit, a window's quota, a table's keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "u64", into = "u64")]
pub(super) struct Count(pub(super) u32);

impl TryFrom<u64> for Count {
    type Error = String;

    fn try_from(count: u64) -> Result<Self, String> {
        match u32::try_from(count) {
            Ok(0) => Err("0 admits nothing: expected a count of 1 or more".into()),
            Ok(count) => Ok(Self(count)),
            Err(_) => Err(format!(
                "{count} is over the most a count holds, {}",
                u32::MAX
            )),
        }
    }
}

impl From<Count> for u64 {
    fn from(count: Count) -> Self {
        u64::from(count.0)
    }
}

/// How many keys a keyed rate limit holds: at least 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "u64", into = "u64")]
pub(super) struct Keys(pub(super) usize);

impl TryFrom<u64> for Keys {
    type Error = String;

    fn try_from(keys: u64) -> Result<Self, String> {
        match usize::try_from(keys) {
            Ok(0) => Err("0 keys holds no client: expected 1 or more".into()),
            Ok(keys) => Ok(Self(keys)),
            Err(_) => Err(format!("{keys} keys is more than this machine can address")),
        }
    }
}

impl From<Keys> for u64 {
    fn from(keys: Keys) -> Self {
        u64::try_from(keys.0).unwrap_or(u64::MAX)
    }
}

/// A newtype of `f64` read only when the value is finite and `$ok` holds of it, with the
/// error `"{value} is no $what: expected $expected"`: one rule for every number of a file.
macro_rules! checked_float {
    ($(#[$doc:meta])* $name:ident, $what:literal, $expected:literal, |$v:ident| $ok:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
        #[serde(try_from = "f64", into = "f64")]
        pub(super) struct $name(pub(super) f64);

        impl TryFrom<f64> for $name {
            type Error = String;

            fn try_from($v: f64) -> Result<Self, String> {
                if $v.is_finite() && $ok {
                    Ok(Self($v))
                } else {
                    Err(format!(concat!("{} is no ", $what, ": expected ", $expected), $v))
                }
            }
        }

        impl From<$name> for f64 {
            fn from(value: $name) -> Self {
                value.0
            }
        }
    };
}

checked_float!(
    /// A token bucket's rate, tokens a second: finite and over 0 (a bucket of rate 0 never
    /// refills, which no configuration means).
    Rate, "rate", "a finite number of tokens a second over 0", |rate| rate > 0.0
);

checked_float!(
    /// A token bucket's burst: finite and at least 1 (a bucket that cannot hold one token
    /// refuses every request).
    Burst, "burst", "a finite number of tokens, 1 or more", |burst| burst >= 1.0
);

checked_float!(
    /// A limiter queue's length as a multiple of the limit: finite and not negative.
    Factor, "multiple of the limit", "a number 0 or more", |factor| factor >= 0.0
);

/// A duration written as a humane string (`"100ms"`, `"1m30s"`), as the core's policy
/// records write theirs ([`ironward::humane`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Humane(pub(super) Duration);

impl Serialize for Humane {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        ironward::humane::serialize(&self.0, s)
    }
}

impl<'de> Deserialize<'de> for Humane {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        ironward::humane::deserialize(d).map(Self)
    }
}

/// An optional duration as a humane string, or nothing: `#[serde(with = "optional")]`.
pub(super) mod optional {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::Humane;

    pub(in super::super) fn serialize<S: Serializer>(
        value: &Option<Duration>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        value.map(Humane).serialize(s)
    }

    pub(in super::super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Duration>, D::Error> {
        Ok(Option::<Humane>::deserialize(d)?.map(|Humane(duration)| duration))
    }
}

/// A span a quota is counted over: a humane duration over 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "Humane", into = "Humane")]
pub(super) struct Span(pub(super) Duration);

impl TryFrom<Humane> for Span {
    type Error = String;

    fn try_from(Humane(span): Humane) -> Result<Self, String> {
        if span.is_zero() {
            Err("a window of 0s counts nothing: expected a duration over 0, such as \"1s\"".into())
        } else {
            Ok(Self(span))
        }
    }
}

impl From<Span> for Humane {
    fn from(span: Span) -> Self {
        Self(span.0)
    }
}
