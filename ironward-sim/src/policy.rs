//! The client's behaviour and the policies in front of the backend, as a scenario states them.

use core::time::Duration;

use ironward::chaos::{Chaos, Injector};
use ironward::{Adaptive, BACKOFF, Backoff, Budget, Classic, Shed, Sre};
use serde::{Deserialize, Deserializer};

/// How callers behave: how long they wait for an attempt, how long for the whole call, and
/// how they retry.
///
/// A failed attempt (an error, a timeout, or a refusal by a server-side piece) is retried
/// after [`Backoff::delay`] while [`Backoff::more`] allows another attempt, the `budget` (if
/// any) allows a retry, and the retry would start before the `deadline`. A refusal by the
/// client's own breaker ends the call at once: failing fast is what a breaker is for.
///
/// ```toml
/// [client]
/// timeout = "1s"
/// deadline = "0s"     # no overall deadline
/// backoff = { base = "100ms", factor = 2.0, cap = "1s", attempts = 3, jitter = { Spread = 0.2 } }
/// budget = { max_tokens = 10, token_ratio = 0.1 }
/// ```
///
/// # Default
///
/// | field | value |
/// | --- | --- |
/// | `timeout` | 1 s per attempt |
/// | `deadline` | none (0 s) |
/// | `backoff` | [`BACKOFF`]: gRPC A6's 100 ms doubling to 1 s, ±20 %, 3 attempts |
/// | `budget` | none |
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Client {
    /// How long a caller waits for one attempt before giving up on it; zero for ever.
    #[serde(deserialize_with = "crate::humane::read")]
    pub timeout: Duration,
    /// The time budget of a whole call, retries included, as an [`ironward::Deadline`];
    /// zero for none.
    #[serde(deserialize_with = "crate::humane::read")]
    pub deadline: Duration,
    /// When to retry and how long to wait first.
    pub backoff: Backoff,
    /// A retry budget shared by every caller, if any.
    pub budget: Option<BudgetPolicy>,
}

impl Default for Client {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(1),
            deadline: Duration::ZERO,
            backoff: BACKOFF,
            budget: None,
        }
    }
}

/// The constants of an [`ironward::Budget`] (gRPC A6 retry throttling).
///
/// # Default
///
/// A6's example: 10 tokens, 0.1 back per success.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BudgetPolicy {
    /// The most tokens the budget holds.
    pub max_tokens: u32,
    /// Tokens a success gives back.
    pub token_ratio: f64,
}

impl Default for BudgetPolicy {
    fn default() -> Self {
        let budget = Budget::default();
        Self {
            max_tokens: budget.max_tokens(),
            token_ratio: budget.token_ratio(),
        }
    }
}

/// The pieces in front of the backend; each is there when its table is.
///
/// The limiter and the breaker are the client's, met in that order: they see every attempt
/// and settle it when the client hears back (or gives up). The limiter lets in an attempt of
/// its call's [`Criticality`](ironward::Criticality) while its limit allows, and settles
/// it as a success, as dropped (the client timed out, or a server-side piece or the full
/// queue refused it) or as ignored (the backend answered with an error, which says nothing
/// of its load). The others are the server's, met in the order of a tower stack with
/// the shedder outermost: shedder, bucket, sliding window, period, gate, then the backend's
/// own queue. A refusal anywhere is an immediate error to the client.
///
/// ```toml
/// [policies]
/// breaker = { kind = "sre", k = 1.5 }    # or { kind = "classic", open = { fixed = "5s" } }
/// limiter = { algorithm = { Gradient2 = { max = 400 } } }  # ironward::Adaptive
/// shedder = { cpu = 900 }
/// bucket = { rate = 100.0, burst = 100.0 }
/// sliding = { quota = 100, window = "1s" }
/// period = { quota = 100, period = "1s", align = true }
/// gate = { limit = 100 }
/// chaos = { seed = 42, enabled = true, faults = [{ fault = "error", rate = 0.05 }] }
/// ```
///
/// The [`chaos`](Policies::chaos) policy is no guard but a fault injector on the client's
/// side, met after the limiter and the breaker have let an attempt through and before the
/// attempt leaves the client for the server's pieces and the backend: see [`ChaosPolicy`].
///
/// # Default
///
/// None of them.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Policies {
    /// A circuit breaker on the client.
    pub breaker: Option<BreakerPolicy>,
    /// An adaptive concurrency limiter on the client ([`ironward::Limiter`]).
    pub limiter: Option<Adaptive>,
    /// An adaptive load shedder ([`ironward::Shedder`]) fed the backend's CPU reading.
    pub shedder: Option<Shed>,
    /// A token bucket ([`ironward::Bucket`]).
    pub bucket: Option<BucketPolicy>,
    /// An exact sliding-window quota ([`ironward::Sliding`]).
    pub sliding: Option<SlidingPolicy>,
    /// A fixed-period quota ([`ironward::Period`]).
    pub period: Option<PeriodPolicy>,
    /// A concurrency limit ([`ironward::Gate`]).
    pub gate: Option<GatePolicy>,
    /// Faults injected on purpose into the client's attempts ([`ironward::chaos`]).
    pub chaos: Option<ChaosPolicy>,
}

impl Policies {
    /// What cannot be simulated in these policies, if anything.
    pub(crate) fn check(&self) -> Result<(), String> {
        if let Some(b) = self.bucket
            && !(b.rate.is_finite() && b.rate >= 0.0)
        {
            return Err(format!(
                "a bucket's rate must be finite and not negative: {}",
                b.rate
            ));
        }
        if let Some(chaos) = &self.chaos {
            chaos
                .injector()
                .map_err(|e| format!("policies.chaos: {e}"))?;
        }
        Ok(())
    }
}

/// Faults injected on purpose: the core's [`Chaos`] record, and the seed its draws come
/// from.
///
/// The keys are [`Chaos`]'s (`enabled`, `shadow`, `faults`) beside `seed`, in one table:
///
/// ```toml
/// [policies]
/// chaos = { seed = 42, enabled = true, faults = [
///     { fault = "error", rate = 0.05 },
///     { fault = { latency = { uniform = { low = "100ms", high = "300ms" } } }, rate = 0.05 },
///     { fault = "abort", rate = 0.02 },
///     { fault = "replace", rate = 0.03 },
/// ] }
/// ```
///
/// Where it acts: on the client's side, after the client's own limiter and breaker have let
/// an attempt through, just before the attempt leaves for the server's pieces and the
/// backend. Each attempt that gets there is numbered from 0 in the order it does (retries
/// included; every variant's run counts from 0 again), and attempt `i` gets the fault
/// [`Injector::decide`]`(`[`chaos::draw`](ironward::chaos::draw)`(seed, i))`: the same
/// faults on the same attempts as an `ironward` chaos edge built with the same seed. An
/// [`Error`](ironward::chaos::Fault::Error) fails the attempt at once, unsent; a
/// [`Latency`](ironward::chaos::Fault::Latency) holds it for the drawn delay, then sends it
/// (unless the client's timeout comes first); an [`Abort`](ironward::chaos::Fault::Abort)
/// never answers, so the client gives up at its timeout (or, with none, the call is still
/// under way when the run ends); a [`Replace`](ironward::chaos::Fault::Replace) lets the
/// backend serve the attempt and fails it to the client. The breaker hears each injected
/// failure as a failure; the limiter ignores an error or a replaced answer, which says
/// nothing of the backend's load, and hears a timeout as a drop.
///
/// A policy that is not `enabled` injects nothing and counts nothing; in `shadow` mode each
/// fault decided is counted (the `chaos_shadowed` column) and none is injected. A key neither
/// record reads is refused, and [`Injector::new`] checks the record when the scenario is
/// read: a rate outside `[0, 1]`, rates adding up past 1 or a delay's bounds reversed are a
/// scenario error. (A [`Variant`](crate::Variant) built in code is not read, so nothing
/// checks it: its run injects nothing from a policy the core refuses.)
///
/// # Default
///
/// Seed 0, and [`Chaos::default`]: off, with no faults.
///
/// # Examples
///
/// ```
/// use ironward_sim::Scenario;
///
/// let err = Scenario::from_toml(
///     "policies.chaos = { enabled = true, faults = [{ fault = \"abort\", rate = 1.5 }] }",
/// )
/// .unwrap_err();
/// assert!(err.to_string().contains("chaos fault 0 has rate 1.5"), "{err}");
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChaosPolicy {
    /// The run of draws: attempt `i` draws [`chaos::draw`](ironward::chaos::draw)`(seed, i)`.
    pub seed: u64,
    /// The faults, their rates, and whether they are on or in shadow mode.
    pub chaos: Chaos,
}

impl ChaosPolicy {
    /// The policy checked by the core: what decides each attempt's fault.
    pub fn injector(&self) -> Result<Injector, ironward::chaos::ChaosError> {
        Injector::new(self.chaos.clone())
    }
}

impl<'de> Deserialize<'de> for ChaosPolicy {
    /// Takes `seed` out of the table and reads the rest as the core's [`Chaos`], whose own
    /// reading refuses a key it does not know: serde's `flatten` would let one through.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let mut table = toml::Table::deserialize(deserializer)?;
        let seed = match table.remove("seed") {
            None => 0,
            Some(toml::Value::Integer(seed)) => u64::try_from(seed)
                .map_err(|_| D::Error::custom(format!("a chaos seed is not negative: {seed}")))?,
            Some(other) => {
                return Err(D::Error::custom(format!(
                    "a chaos seed is a whole number, not a {}",
                    other.type_str()
                )));
            }
        };
        let chaos = Chaos::deserialize(table).map_err(|e| D::Error::custom(e.to_string()))?;
        Ok(Self { seed, chaos })
    }
}

/// Which circuit breaker the client runs: either family of the core, with the core's own
/// policy record, so that a tuned value moves from a scenario to a service unchanged.
///
/// A classic breaker's fields are [`Classic`]'s, each defaulting to [`CLASSIC`]
/// (resilience4j's defaults); durations are humane strings, the record and the open wait are
/// tables named for their kind:
///
/// ```toml
/// [policies]
/// breaker = { kind = "classic", open = { fixed = "5s" } }
/// # breaker = { kind = "classic", record = { time = { span = "30s", buckets = 10 } }, failure_rate = 0.1 }
/// # breaker = { kind = "classic", record = { consecutive = { failures = 5 } } }
/// ```
///
/// A key the policy does not know is an error, for either family, as everywhere in a
/// scenario file: a misspelt `failure_rat` would otherwise leave the default in force
/// unseen.
///
/// [`CLASSIC`]: ironward::CLASSIC
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum BreakerPolicy {
    /// ironward's [`SreBreaker`](ironward::SreBreaker): Google SRE client-side throttling.
    Sre(Sre),
    /// ironward's [`ClassicBreaker`](ironward::ClassicBreaker): closed, open, half-open, as
    /// resilience4j, Polly and failsafe-go users know it.
    Classic(Classic),
}

/// The constants of an [`ironward::Bucket`].
///
/// # Default
///
/// 100 tokens a second, bursts of 100.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BucketPolicy {
    /// Tokens a second; each call costs one.
    pub rate: f64,
    /// The most tokens held, and the bucket's size when the run starts.
    pub burst: f64,
}

impl Default for BucketPolicy {
    fn default() -> Self {
        Self {
            rate: 100.0,
            burst: 100.0,
        }
    }
}

/// The constants of an [`ironward::Sliding`] window.
///
/// # Default
///
/// 100 calls in any second.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SlidingPolicy {
    /// The most calls in any window-long stretch.
    pub quota: u32,
    /// The window.
    #[serde(deserialize_with = "crate::humane::read")]
    pub window: Duration,
}

impl Default for SlidingPolicy {
    fn default() -> Self {
        Self {
            quota: 100,
            window: Duration::from_secs(1),
        }
    }
}

/// The constants of an [`ironward::Period`].
///
/// # Default
///
/// 100 calls a second, periods aligned on whole seconds of the simulated clock.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PeriodPolicy {
    /// The most calls a period admits.
    pub quota: u32,
    /// The period.
    #[serde(deserialize_with = "crate::humane::read")]
    pub period: Duration,
    /// Whether periods lie on multiples of `period` (go-zero's `Align`) rather than start at
    /// the first call after the last one closed.
    pub align: bool,
}

impl Default for PeriodPolicy {
    fn default() -> Self {
        Self {
            quota: 100,
            period: Duration::from_secs(1),
            align: true,
        }
    }
}

/// The constant of an [`ironward::Gate`].
///
/// # Default
///
/// 100 calls at once.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GatePolicy {
    /// The most calls inside at once.
    pub limit: u32,
}

impl Default for GatePolicy {
    fn default() -> Self {
        Self { limit: 100 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ironward::classic::{OpenWait, Record};
    use ironward::{CLASSIC, Jitter, SHED, SRE};

    #[derive(Deserialize)]
    struct Doc {
        client: Client,
        policies: Policies,
    }

    #[test]
    fn the_core_records_read_with_humane_durations() {
        let doc: Doc = toml::from_str(
            r#"
            [client]
            backoff = { base = "50ms", jitter = "Full", attempts = 5 }
            budget = {}
            [policies]
            breaker = { kind = "sre", probe = "2s" }
            shedder = { cpu = 800 }
            "#,
        )
        .unwrap();
        assert_eq!(
            doc.client.backoff,
            Backoff {
                base: Duration::from_millis(50),
                jitter: Jitter::Full,
                attempts: 5,
                ..BACKOFF
            }
        );
        assert_eq!(doc.client.budget, Some(BudgetPolicy::default()));
        assert_eq!(
            doc.policies.breaker,
            Some(BreakerPolicy::Sre(Sre {
                probe: Duration::from_secs(2),
                ..SRE
            }))
        );
        assert_eq!(doc.policies.shedder, Some(Shed { cpu: 800, ..SHED }));
    }

    #[test]
    fn an_unknown_breaker_field_is_refused() {
        let err = toml::from_str::<Policies>("breaker = { kind = \"sre\", kk = 2.0 }").unwrap_err();
        assert!(err.to_string().contains("kk"), "{err}");
    }

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
    fn a_key_the_classic_policy_does_not_read_is_refused_by_name() {
        for (text, key) in [
            (", failure_rat = 0.3", "failure_rat"),
            (
                ", record = { count = { calls = 5, failures = 3 } }",
                "failures",
            ),
            (
                ", open = { growing = { first = \"1s\", factor = 2.0, max = \"9s\", cap = \"9s\" } }",
                "cap",
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

    /// The scenario error for `policies.chaos = {chaos}`, as its message says it.
    fn chaos_error(chaos: &str) -> String {
        let text = format!("[[variant]]\nname = \"v\"\npolicies.chaos = {chaos}");
        crate::Scenario::from_toml(&text).unwrap_err().to_string()
    }

    #[test]
    fn a_chaos_policy_reads_as_the_cores_record_beside_its_seed() {
        use ironward::chaos::{Chaos, Delay, Fault, Injection};
        let policies: Policies = toml::from_str(
            r#"chaos = { seed = 42, enabled = true, shadow = true, faults = [
                { fault = "error", rate = 0.05 },
                { fault = { latency = { fixed = "250ms" } }, rate = 0.1 },
            ] }"#,
        )
        .unwrap();
        let want = ChaosPolicy {
            seed: 42,
            chaos: Chaos {
                enabled: true,
                shadow: true,
                faults: vec![
                    Injection {
                        fault: Fault::Error,
                        rate: 0.05,
                    },
                    Injection {
                        fault: Fault::Latency(Delay::Fixed(Duration::from_millis(250))),
                        rate: 0.1,
                    },
                ],
            },
        };
        assert_eq!(policies.chaos, Some(want));
        let empty: Policies = toml::from_str("chaos = {}").unwrap();
        assert_eq!(empty.chaos, Some(ChaosPolicy::default()), "seed 0, off");
    }

    #[test]
    fn a_chaos_policy_the_core_refuses_is_a_scenario_error_that_says_why() {
        let rate = chaos_error("{ enabled = true, faults = [{ fault = \"error\", rate = 1.5 }] }");
        assert_eq!(
            rate,
            "variant `v`: policies.chaos: chaos fault 0 has rate 1.5, not in [0, 1]"
        );
        let sum = chaos_error(
            "{ faults = [{ fault = \"abort\", rate = 0.6 }, { fault = \"replace\", rate = 0.6 }] }",
        );
        assert!(
            sum.contains("policies.chaos: chaos rates add up to 1.2"),
            "{sum}"
        );
        let delay = chaos_error(
            "{ faults = [{ fault = { latency = { uniform = { low = \"2s\", high = \"1s\" } } }, rate = 0.1 }] }",
        );
        assert!(
            delay.contains("chaos fault 0 has a delay's low above its high"),
            "{delay}"
        );
        let nan = chaos_error("{ faults = [{ fault = \"error\", rate = nan }] }");
        assert!(nan.contains("chaos fault 0 has rate NaN"), "{nan}");
    }

    #[test]
    fn a_chaos_key_neither_record_reads_or_a_bad_seed_is_refused_by_name() {
        let typo = chaos_error("{ enabeld = true }");
        assert!(typo.contains("unknown field `enabeld`"), "{typo}");
        let typo = chaos_error("{ faults = [{ fault = \"eror\", rate = 0.1 }] }");
        assert!(typo.contains("eror"), "{typo}");
        let negative = chaos_error("{ seed = -1 }");
        assert!(
            negative.contains("a chaos seed is not negative: -1"),
            "{negative}"
        );
        let text = chaos_error("{ seed = \"42\" }");
        assert!(
            text.contains("a chaos seed is a whole number, not a string"),
            "{text}"
        );
    }
}
