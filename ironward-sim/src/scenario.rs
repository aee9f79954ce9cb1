//! A scenario: the setups to compare, read from TOML.

use core::fmt;
use core::time::Duration;

use serde::Deserialize;

use crate::arrivals::Traffic;
use crate::backend::Backend;
use crate::column::Column;
use crate::policy::{Client, Policies};

/// A scenario: one or more variants of a setup, run on the same traffic with the same seed
/// and compared.
///
/// A scenario file is TOML. Its top level holds the scenario's own keys (`name`, `about`,
/// `focus`, `plot`) and the base [`Variant`]: `seed`, `duration`, `interval`, `window`,
/// `[[arrivals]]`, `[backend]`, `[client]` and `[policies]`. Each `[[variant]]` table names a
/// variant and holds what it changes: it is laid over the base key by key (tables merge,
/// anything else, arrays included, is replaced), so a comparison states only its difference.
/// Without `[[variant]]` the base is the one variant, named after the scenario. Every value
/// has a default, so an empty file is a scenario: a minute of 100 Poisson calls a second to
/// a healthy backend with nothing in front of it.
///
/// ```toml
/// name = "outage"
/// duration = "5m"
/// focus = { from = "150s", to = "210s" }
///
/// [[arrivals]]
/// kind = "poisson"
/// rate = 800.0
///
/// [backend]
/// workers = 100
/// schedule = [{ start = "90s", end = "150s", failure = 1.0 }]
///
/// [[variant]]
/// name = "sre"
/// policies.breaker = { kind = "sre" }
///
/// [[variant]]
/// name = "none"
/// ```
///
/// # Default
///
/// `name` "scenario", `about` empty, `focus` the whole run, `plot` [`Column::PLOT`], and one
/// variant, [`Variant::default`].
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward_sim::Scenario;
///
/// let scenario = Scenario::from_toml(r#"
///     name = "breakers"
///     duration = "30s"
///     [[variant]]
///     name = "sre"
///     policies.breaker = { kind = "sre", k = 2.0 }
///     [[variant]]
///     name = "none"
/// "#).unwrap();
/// assert_eq!(scenario.variants.len(), 2);
/// assert_eq!(scenario.variants[1].duration, Duration::from_secs(30));
/// assert!(scenario.variants[1].policies.breaker.is_none());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// What the files written are named after (`NAME.csv`, `NAME.svg`).
    pub name: String,
    /// One line on what the scenario shows.
    pub about: String,
    /// The stretch of time the summary reports on its own (a recovery, say).
    pub focus: Focus,
    /// The series drawn, one panel each, every variant a line in each panel.
    pub plot: Vec<Column>,
    /// The setups compared, each run on its own from the same seed.
    pub variants: Vec<Variant>,
}

impl Default for Scenario {
    fn default() -> Self {
        Self {
            name: "scenario".into(),
            about: String::new(),
            focus: Focus::default(),
            plot: Column::PLOT.to_vec(),
            variants: vec![Variant::default()],
        }
    }
}

/// One setup to simulate: traffic, backend, client behaviour and the policies in front.
///
/// # Default
///
/// | field | value |
/// | --- | --- |
/// | `name` | "base" |
/// | `seed` | 1 |
/// | `duration` | 60 s of simulated time |
/// | `interval` | 1 s per row of figures |
/// | `window` | 1 s, the stretch the most attempts reaching the backend are counted over |
/// | `arrivals` | Poisson, 100 calls a second |
/// | `backend` | [`Backend::default`] |
/// | `client` | [`Client::default`] |
/// | `policies` | none |
///
/// # Examples
///
/// ```
/// use ironward_sim::{BucketPolicy, Policies, Variant};
///
/// // The default traffic, 100 calls a second, through a bucket of 50 a second.
/// let variant = Variant {
///     policies: Policies {
///         bucket: Some(BucketPolicy { rate: 50.0, burst: 10.0 }),
///         ..Policies::default()
///     },
///     ..Variant::default()
/// };
/// let run = variant.run(|_| {});
/// let total = run.total();
/// assert_eq!(run.rows.len(), 60, "a row a second for a minute");
/// assert!((2_900..3_200).contains(&total.admitted), "{}", total.admitted);
/// assert_eq!(total.refused.bucket + total.admitted, total.attempts());
/// ```
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Variant {
    /// How the variant is labelled in the CSV, the picture and the summary.
    pub name: String,
    /// The seed every draw of the run derives from.
    pub seed: u64,
    /// How much simulated time the run covers.
    #[serde(deserialize_with = "crate::humane::read")]
    pub duration: Duration,
    /// The length of one row of figures.
    #[serde(deserialize_with = "crate::humane::read")]
    pub interval: Duration,
    /// The stretch over which the most attempts reaching the backend are counted (the
    /// double spend of a fixed window shows here).
    #[serde(deserialize_with = "crate::humane::read")]
    pub window: Duration,
    /// Where calls come from; the sources add up.
    pub arrivals: Vec<Traffic>,
    /// The modelled server behind the policies.
    pub backend: Backend,
    /// How callers time out, retry and budget their retries.
    pub client: Client,
    /// The pieces in front of the backend.
    pub policies: Policies,
}

impl Default for Variant {
    fn default() -> Self {
        Self {
            name: "base".into(),
            seed: 1,
            duration: Duration::from_secs(60),
            interval: Duration::from_secs(1),
            window: Duration::from_secs(1),
            arrivals: vec![Traffic::default()],
            backend: Backend::default(),
            client: Client::default(),
            policies: Policies::default(),
        }
    }
}

/// A stretch of simulated time, from `from` to `to`; a `to` of zero means the end of the run.
///
/// # Default
///
/// The whole run: from 0 s to 0 s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Focus {
    /// Where the stretch starts.
    #[serde(deserialize_with = "crate::humane::read")]
    pub from: Duration,
    /// Where it ends (exclusive); zero for the end of the run.
    #[serde(deserialize_with = "crate::humane::read")]
    pub to: Duration,
}

impl Focus {
    /// Whether the focus is the whole run.
    pub fn is_whole(&self) -> bool {
        self.from.is_zero() && self.to.is_zero()
    }

    /// Whether `t` lies in the stretch of a run that ends at `end`.
    pub fn contains(&self, t: Duration, end: Duration) -> bool {
        let to = if self.to.is_zero() { end } else { self.to };
        self.from <= t && t < to
    }
}

/// Why a scenario could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScenarioError {
    /// The text is not TOML, or its top level does not read: the message says where and why.
    Format(String),
    /// A variant, merged over the base, does not read as a setup.
    Variant {
        /// The variant's name.
        name: String,
        /// What did not read.
        why: String,
    },
    /// A value reads but cannot be simulated (a negative rate, no workers, two variants of
    /// one name).
    Invalid(String),
    /// No built-in scenario has this name.
    Unknown(String),
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Format(why) => write!(f, "{}", why.trim_end()),
            Self::Variant { name, why } => write!(f, "variant `{name}`: {}", why.trim_end()),
            Self::Invalid(why) => write!(f, "{why}"),
            Self::Unknown(name) => write!(f, "no built-in scenario is called `{name}`"),
        }
    }
}

impl std::error::Error for ScenarioError {}

/// The scenario's own keys: everything at the top level that is not part of a variant.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct Head {
    name: Option<String>,
    about: String,
    focus: Focus,
    plot: Option<Vec<Column>>,
    variant: Vec<toml::Table>,
}

/// The top-level keys that belong to the scenario rather than to the base variant.
const HEAD_KEYS: [&str; 5] = ["name", "about", "focus", "plot", "variant"];

impl Scenario {
    /// Reads a scenario from TOML text; see [`Scenario`] for the layout.
    pub fn from_toml(text: &str) -> Result<Self, ScenarioError> {
        let mut base: toml::Table =
            toml::from_str(text).map_err(|e| ScenarioError::Format(e.to_string()))?;
        let mut head = toml::Table::new();
        for key in HEAD_KEYS {
            if let Some(value) = base.remove(key) {
                head.insert(key.into(), value);
            }
        }
        let head = Head::deserialize(head).map_err(|e| ScenarioError::Format(e.to_string()))?;
        let name = head.name.unwrap_or_else(|| "scenario".into());
        let variants = if head.variant.is_empty() {
            vec![variant(&name, base)?]
        } else {
            let mut variants = Vec::with_capacity(head.variant.len());
            for mut over in head.variant {
                let label = match over.remove("name") {
                    Some(toml::Value::String(label)) => label,
                    _ => {
                        return Err(ScenarioError::Format(
                            "every [[variant]] needs a `name`, as a string".into(),
                        ));
                    }
                };
                let mut merged = base.clone();
                merge(&mut merged, over);
                variants.push(variant(&label, merged)?);
            }
            variants
        };
        let scenario = Self {
            name,
            about: head.about,
            focus: head.focus,
            plot: head.plot.unwrap_or_else(|| Column::PLOT.to_vec()),
            variants,
        };
        scenario.check()?;
        Ok(scenario)
    }

    /// The simulated time all the variants cover together, which is what a progress bar
    /// counts up to.
    pub fn simulated(&self) -> Duration {
        self.variants.iter().map(|v| v.duration).sum()
    }

    /// Refuses what reads but cannot be simulated.
    fn check(&self) -> Result<(), ScenarioError> {
        let invalid = |why: String| Err(ScenarioError::Invalid(why));
        if self.variants.is_empty() {
            return invalid("a scenario needs at least one variant".into());
        }
        if self.name.is_empty() || self.name.contains(['/', '\\']) {
            return invalid(format!("`{}` cannot name a file", self.name));
        }
        for (i, v) in self.variants.iter().enumerate() {
            if v.name.is_empty() || v.name.contains([',', '"', '\n']) {
                return invalid(format!(
                    "variant names need a character and no comma or quote: `{}`",
                    v.name
                ));
            }
            if self.variants[..i].iter().any(|w| w.name == v.name) {
                return invalid(format!("two variants are called `{}`", v.name));
            }
            v.check()
                .map_err(|why| ScenarioError::Invalid(format!("variant `{}`: {why}", v.name)))?;
        }
        Ok(())
    }
}

impl Variant {
    /// What cannot be simulated in this setup, if anything.
    fn check(&self) -> Result<(), String> {
        if self.duration.is_zero() || self.interval.is_zero() {
            return Err("`duration` and `interval` must be longer than zero".into());
        }
        if self.duration.as_nanos() / self.interval.as_nanos().max(1) > 10_000_000 {
            return Err("more than ten million intervals: make `interval` longer".into());
        }
        for source in &self.arrivals {
            source.check()?;
        }
        let loops = self
            .arrivals
            .iter()
            .filter(|s| matches!(s, Traffic::Closed(_)));
        if loops.count() >= usize::from(u16::MAX) {
            return Err("more than 65,534 closed-loop sources: merge their clients".into());
        }
        self.backend.check()?;
        self.policies.check()
    }
}

/// Deserializes a variant from its merged table, naming it.
fn variant(name: &str, mut table: toml::Table) -> Result<Variant, ScenarioError> {
    table.insert("name".into(), toml::Value::String(name.into()));
    Variant::deserialize(table).map_err(|e| ScenarioError::Variant {
        name: name.into(),
        why: e.to_string(),
    })
}

/// Lays `over` onto `base`: tables merge key by key, any other value replaces the base's.
fn merge(base: &mut toml::Table, over: toml::Table) {
    for (key, value) in over {
        match (base.get_mut(&key), value) {
            (Some(toml::Value::Table(into)), toml::Value::Table(from)) => merge(into, from),
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arrivals::Steady;
    use crate::policy::BreakerPolicy;
    use ironward::classic::OpenWait;

    #[test]
    fn an_empty_file_is_the_default_scenario() {
        let scenario = Scenario::from_toml("").unwrap();
        assert_eq!(
            scenario,
            Scenario {
                variants: vec![Variant {
                    name: "scenario".into(),
                    ..Variant::default()
                }],
                ..Scenario::default()
            }
        );
    }

    #[test]
    fn a_variant_changes_only_what_it_names() {
        let scenario = Scenario::from_toml(
            r#"
            [backend]
            workers = 7
            queue = 3
            [[variant]]
            name = "a"
            backend.queue = 9
            [[variant]]
            name = "b"
            policies.breaker = { kind = "classic", open = { fixed = "2s" } }
            "#,
        )
        .unwrap();
        let [a, b] = &scenario.variants[..] else {
            panic!("two variants")
        };
        assert_eq!((a.backend.workers, a.backend.queue), (7, 9));
        assert_eq!((b.backend.workers, b.backend.queue), (7, 3));
        let Some(BreakerPolicy::Classic(classic)) = &b.policies.breaker else {
            panic!("a classic breaker")
        };
        assert_eq!(classic.open, OpenWait::Fixed(Duration::from_secs(2)));
    }

    #[test]
    fn arrays_in_a_variant_replace_the_base() {
        let scenario = Scenario::from_toml(
            r#"
            arrivals = [{ kind = "constant", rate = 5.0 }, { kind = "poisson" }]
            [[variant]]
            name = "one"
            arrivals = [{ kind = "poisson", rate = 9.0 }]
            "#,
        )
        .unwrap();
        assert_eq!(
            scenario.variants[0].arrivals,
            [Traffic::Poisson(Steady {
                rate: 9.0,
                ..Steady::default()
            })]
        );
    }

    #[test]
    fn a_misspelt_key_is_an_error_that_names_it() {
        let err = Scenario::from_toml("[backend]\nworkrs = 3\n").unwrap_err();
        assert!(err.to_string().contains("workrs"), "{err}");
        let err = Scenario::from_toml("[[arrivals]]\nkind = \"poisson\"\nrat = 3.0\n").unwrap_err();
        assert!(err.to_string().contains("rat"), "{err}");
        let err = Scenario::from_toml("plot = [\"goodput\"]").unwrap_err();
        assert!(err.to_string().contains("goodput"), "{err}");
    }

    #[test]
    fn values_that_cannot_be_simulated_are_refused() {
        for text in [
            "duration = \"0s\"",
            "[backend]\nworkers = 0",
            "[[arrivals]]\nkind = \"poisson\"\nrate = -1.0",
            "[[arrivals]]\nkind = \"closed\"\nfloor = \"0s\"",
            "[[arrivals]]\nkind = \"closed\"\nclients = 4000000000",
            "[[variant]]\nname = \"a\"\n[[variant]]\nname = \"a\"",
            "[[variant]]\nname = \"a,b\"",
        ] {
            assert!(
                matches!(Scenario::from_toml(text), Err(ScenarioError::Invalid(_))),
                "{text}"
            );
        }
    }

    #[test]
    fn a_variant_without_a_name_is_an_error() {
        let err = Scenario::from_toml("[[variant]]\nseed = 3").unwrap_err();
        assert!(matches!(err, ScenarioError::Format(_)), "{err}");
    }

    #[test]
    fn the_focus_defaults_to_the_whole_run() {
        let whole = Focus::default();
        assert!(whole.is_whole());
        assert!(whole.contains(Duration::from_secs(59), Duration::from_secs(60)));
        assert!(!whole.contains(Duration::from_secs(60), Duration::from_secs(60)));
        let part = Focus {
            from: Duration::from_secs(10),
            to: Duration::from_secs(20),
        };
        assert!(part.contains(Duration::from_secs(10), Duration::from_secs(60)));
        assert!(!part.contains(Duration::from_secs(20), Duration::from_secs(60)));
    }
}
