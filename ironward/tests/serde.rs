//! The `serde` feature: policy records read and written with humane durations.
#![cfg(feature = "serde")]

use core::time::Duration;

use ironward::http_retry::Settings;
use ironward::{BACKOFF, Backoff, Jitter, SHED, SRE, Shed, Sre};

#[test]
fn the_presets_are_written_with_humane_durations() {
    assert_eq!(
        serde_json::to_string(&SRE).unwrap(),
        r#"{"k":1.5,"floor":1.1,"protection":5.0,"probe":"1s","size":40,"window":"10s"}"#
    );
    assert_eq!(
        serde_json::to_string(&SHED).unwrap(),
        concat!(
            r#"{"size":50,"window":"5s","cpu":900,"latency":"1s","beta":0.9,"cool":"1s","floor":0.1,"#,
            r#""shares":{"sheddable":0.5,"sheddable_concurrent":0.75,"critical":1.0,"critical_plus":1.0}}"#
        )
    );
    assert_eq!(
        serde_json::to_string(&BACKOFF).unwrap(),
        r#"{"base":"100ms","factor":2.0,"cap":"1s","attempts":3,"jitter":{"Spread":0.2}}"#
    );
    assert_eq!(
        serde_json::to_string(&Settings::default()).unwrap(),
        r#"{"max_retries":3,"base_delay":"200ms","max_delay":"30s","total_budget":"2m","request_reserve":"1s"}"#
    );
}

#[test]
fn every_record_round_trips() {
    let sre = Sre {
        k: 2.0,
        probe: Duration::from_millis(1500),
        ..SRE
    };
    assert_eq!(
        serde_json::from_str::<Sre>(&serde_json::to_string(&sre).unwrap()).unwrap(),
        sre
    );
    let shed = Shed {
        cpu: 800,
        cool: Duration::from_micros(250),
        ..SHED
    };
    assert_eq!(
        serde_json::from_str::<Shed>(&serde_json::to_string(&shed).unwrap()).unwrap(),
        shed
    );
    for jitter in [
        Jitter::Rigid,
        Jitter::Full,
        Jitter::Equal,
        Jitter::Decorrelated,
        Jitter::Spread(0.5),
    ] {
        let backoff = Backoff {
            jitter,
            cap: Duration::MAX,
            ..BACKOFF
        };
        let text = serde_json::to_string(&backoff).unwrap();
        assert_eq!(
            serde_json::from_str::<Backoff>(&text).unwrap(),
            backoff,
            "{text}"
        );
    }
    let settings = Settings {
        max_retries: 0,
        total_budget: Duration::from_secs(90),
        ..Settings::default()
    };
    let text = serde_json::to_string(&settings).unwrap();
    assert_eq!(serde_json::from_str::<Settings>(&text).unwrap(), settings);
}

#[test]
fn missing_fields_take_the_preset() {
    let sre: Sre = serde_json::from_str(r#"{"k": 2.0, "window": "1m"}"#).unwrap();
    assert_eq!(
        sre,
        Sre {
            k: 2.0,
            window: Duration::from_secs(60),
            ..SRE
        }
    );
    let backoff: Backoff = serde_json::from_str(r#"{"jitter": "Full"}"#).unwrap();
    assert_eq!(
        backoff,
        Backoff {
            jitter: Jitter::Full,
            ..BACKOFF
        }
    );
    let settings: Settings = serde_json::from_str("{}").unwrap();
    assert_eq!(settings, Settings::default());
}

#[test]
fn unknown_fields_and_bad_durations_are_refused_with_a_reason() {
    let typo = serde_json::from_str::<Shed>(r#"{"cpus": 800}"#)
        .unwrap_err()
        .to_string();
    assert!(typo.contains("unknown field `cpus`"), "{typo}");
    let bare = serde_json::from_str::<Sre>(r#"{"probe": "100"}"#)
        .unwrap_err()
        .to_string();
    assert!(bare.contains("\"100\""), "{bare}");
    let number = serde_json::from_str::<Sre>(r#"{"probe": 100}"#)
        .unwrap_err()
        .to_string();
    assert!(number.contains("a duration such as"), "{number}");
    let classic = serde_json::from_str::<ironward::Classic>(r#"{"failure_rat": 0.3}"#)
        .unwrap_err()
        .to_string();
    assert!(classic.contains("unknown field `failure_rat`"), "{classic}");
    let record = serde_json::from_str::<ironward::Classic>(
        r#"{"record": {"count": {"calls": 5, "failures": 3}}}"#,
    )
    .unwrap_err()
    .to_string();
    assert!(record.contains("unknown field `failures`"), "{record}");
}

#[test]
fn a_limiter_policy_reads_from_a_partial_record() {
    use ironward::limit::{AIMD, Aimd, Algorithm, Latency, SAMPLING, Sampling};
    use ironward::{ADAPTIVE, Adaptive, Criticality, SHARES, Shares};
    let policy: Adaptive = serde_json::from_str(
        r#"{"algorithm": {"Aimd": {"max": 50}}, "cool": "250ms",
            "sampling": {"latency": {"Percentile": 0.9}}, "shares": {"sheddable": 0.25}}"#,
    )
    .unwrap();
    assert_eq!(
        policy,
        Adaptive {
            algorithm: Algorithm::Aimd(Aimd { max: 50, ..AIMD }),
            sampling: Sampling {
                latency: Latency::Percentile(0.9),
                ..SAMPLING
            },
            shares: Shares {
                sheddable: 0.25,
                ..SHARES
            },
            cool: Duration::from_millis(250),
            ..ADAPTIVE
        }
    );
    let back: Adaptive = serde_json::from_str(&serde_json::to_string(&ADAPTIVE).unwrap()).unwrap();
    assert_eq!(back, ADAPTIVE);
    let class: Criticality = serde_json::from_str(r#""sheddable_concurrent""#).unwrap();
    assert_eq!(class, Criticality::SheddableConcurrent);
    let typo = serde_json::from_str::<Adaptive>(r#"{"cooling": "1s"}"#).unwrap_err();
    assert!(
        typo.to_string().contains("unknown field `cooling`"),
        "{typo}"
    );
}

#[test]
fn a_limiter_policy_reads_its_partitions_from_a_partial_record() {
    use ironward::{ADAPTIVE, Adaptive, Partitions};
    let policy: Adaptive =
        serde_json::from_str(r#"{"partitions": {"sheddable": 0.3, "critical": 0.7}}"#).unwrap();
    let partitions = Partitions {
        sheddable: 0.3,
        critical: 0.7,
        ..Partitions::NONE
    };
    assert_eq!(
        policy,
        Adaptive {
            partitions: Some(partitions),
            ..ADAPTIVE
        }
    );
    let back: Adaptive = serde_json::from_str(&serde_json::to_string(&policy).unwrap()).unwrap();
    assert_eq!(back, policy);
    // Left out, or null, the policy keeps its ceilings.
    let ceilings: Adaptive = serde_json::from_str(r#"{"partitions": null}"#).unwrap();
    assert_eq!(ceilings.partitions, None);
    let typo = serde_json::from_str::<Adaptive>(r#"{"partitions": {"batch": 0.3}}"#).unwrap_err();
    assert!(typo.to_string().contains("unknown field `batch`"), "{typo}");
}

#[test]
fn the_classic_policies_read_and_write_as_resilience4j_and_polly_configure_them() {
    use ironward::classic::{HalfOpen, OpenWait, Record};
    use ironward::{CLASSIC, Classic, POLLY};

    assert_eq!(
        serde_json::to_string(&CLASSIC).unwrap(),
        concat!(
            r#"{"record":{"count":{"calls":100}},"failure_rate":0.5,"slow_rate":1.0,"#,
            r#""slow_call":"1m","minimum":100,"open":{"fixed":"1m"},"probes":10,"lease":"1m","#,
            r#""half_open":"probes","automatic":false,"force":"none"}"#
        )
    );
    let growing = Classic {
        record: Record::Time {
            span: Duration::from_secs(30),
            buckets: 10,
        },
        open: OpenWait::Growing {
            first: Duration::from_secs(5),
            factor: 1.5,
            max: Duration::from_secs(300),
        },
        ..CLASSIC
    };
    // seatbelt's progressive half-open, as a ramp of shares each held for a while.
    let progressive = Classic {
        half_open: HalfOpen::Progressive {
            first: 0.01,
            factor: 5.0,
            stages: 4,
            hold: Duration::from_secs(10),
        },
        ..POLLY
    };
    assert!(serde_json::to_string(&progressive).unwrap().contains(
        r#""half_open":{"progressive":{"first":0.01,"factor":5.0,"stages":4,"hold":"10s"}}"#
    ));
    for policy in [CLASSIC, POLLY, growing, progressive] {
        let text = serde_json::to_string(&policy).unwrap();
        assert_eq!(
            serde_json::from_str::<Classic>(&text).unwrap(),
            policy,
            "{text}"
        );
    }
    // A partial record takes the rest from `CLASSIC`, resilience4j's defaults.
    let partial: Classic =
        serde_json::from_str(r#"{"minimum":10,"open":{"fixed":"5s"},"force":"metrics_only"}"#)
            .unwrap();
    assert_eq!(partial.minimum, 10);
    assert_eq!(partial.open, OpenWait::Fixed(Duration::from_secs(5)));
    assert_eq!(partial.probes, CLASSIC.probes);
}

#[test]
fn a_chaos_policy_reads_and_writes_its_faults_by_name() {
    use ironward::chaos::{Chaos, Delay, Fault, Injector};

    let policy: Chaos = serde_json::from_str(
        r#"{"enabled": true, "faults": [
            {"fault": "error", "rate": 0.01},
            {"fault": {"latency": {"uniform": {"low": "100ms", "high": "2s"}}}, "rate": 0.05},
            {"fault": {"latency": {"fixed": "50ms"}}, "rate": 0.02},
            {"fault": "abort", "rate": 0.01},
            {"fault": "replace", "rate": 0.01}
        ]}"#,
    )
    .unwrap();
    assert!(policy.enabled && !policy.shadow);
    assert_eq!(
        policy.faults[1].fault,
        Fault::Latency(Delay::Uniform {
            low: Duration::from_millis(100),
            high: Duration::from_secs(2),
        })
    );
    let text = serde_json::to_string(&policy).unwrap();
    assert!(
        text.contains(r#"{"fault":{"latency":{"fixed":"50ms"}},"rate":0.02}"#),
        "{text}"
    );
    assert_eq!(serde_json::from_str::<Chaos>(&text).unwrap(), policy);
    assert!(Injector::new(policy).is_ok());
    // Off, with no faults, when the record is empty.
    assert_eq!(
        serde_json::from_str::<Chaos>("{}").unwrap(),
        Chaos::default()
    );
    let typo = serde_json::from_str::<Chaos>(r#"{"faults": [{"fault": "eror", "rate": 0.1}]}"#);
    assert!(typo.is_err());
    // A rate read from a file is refused when the injector is built, not when it is read.
    let high: Chaos =
        serde_json::from_str(r#"{"enabled": true, "faults": [{"fault": "abort", "rate": 1.5}]}"#)
            .unwrap();
    assert!(Injector::new(high).is_err());
}
