//! The service config read from JSON, after grpc-go's `service_config_test.go` and A6's
//! "Integration with Service Config".

use core::time::Duration;

use ironward::grpc::{
    Code, Codes, HedgingPolicy, MethodConfig, Name, Policy, RetryPolicy, ServiceConfig, Throttling,
};

fn read(json: &str) -> Result<ServiceConfig, String> {
    serde_json::from_str(json).map_err(|e| e.to_string())
}

fn error(json: &str) -> String {
    read(json).expect_err("rejected")
}

/// A service config of one entry naming `foo` with this retry policy.
fn retry(policy: &str) -> String {
    format!(r#"{{"methodConfig": [{{"name": [{{"service": "foo"}}], "retryPolicy": {policy}}}]}}"#)
}

// grpc-go `service_config_test.go`, `TestParseRetryPolicy`, "valid".
#[test]
fn reads_a_valid_retry_policy() {
    let config = read(&retry(
        r#"{"maxAttempts": 2, "initialBackoff": "2s", "maxBackoff": "10s",
            "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}"#,
    ))
    .unwrap();
    let entry = config
        .method("foo", "AnyMethod")
        .expect("the service's entry");
    assert_eq!(
        entry.policy,
        Some(Policy::Retry(RetryPolicy {
            max_attempts: 2,
            initial_backoff: Duration::from_secs(2),
            max_backoff: Duration::from_secs(10),
            backoff_multiplier: 2.0,
            retryable_status_codes: Codes::of(&[Code::Unavailable]),
        }))
    );
    assert_eq!(entry.timeout, None);
}

// grpc-go `service_config_test.go`, `TestParseRetryPolicy`: "negative maxAttempts", "missing
// maxAttempts", "zero initialBackoff", "zero maxBackoff", "zero backoffMultiplier", "no
// retryable codes"; and a maxAttempts of 1, which A6 requires to be above.
#[test]
fn rejects_each_invalid_retry_policy_with_its_reason() {
    let cases = [
        (
            r#"{"maxAttempts": -1, "initialBackoff": "2s", "maxBackoff": "10s", "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}"#,
            "max attempts must be at least 2",
        ),
        (
            r#"{"initialBackoff": "2s", "maxBackoff": "10s", "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}"#,
            "max attempts must be at least 2",
        ),
        (
            r#"{"maxAttempts": 1, "initialBackoff": "2s", "maxBackoff": "10s", "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}"#,
            "max attempts must be at least 2",
        ),
        (
            r#"{"maxAttempts": 2, "initialBackoff": "0s", "maxBackoff": "10s", "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}"#,
            "initial backoff must be above zero",
        ),
        (
            r#"{"maxAttempts": 2, "initialBackoff": "2s", "maxBackoff": "0s", "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}"#,
            "max backoff must be above zero",
        ),
        (
            r#"{"maxAttempts": 2, "initialBackoff": "2s", "maxBackoff": "10s", "backoffMultiplier": 0, "retryableStatusCodes": ["UNAVAILABLE"]}"#,
            "backoff multiplier must be above zero and finite",
        ),
        (
            r#"{"maxAttempts": 2, "initialBackoff": "2s", "maxBackoff": "10s", "backoffMultiplier": 2, "retryableStatusCodes": []}"#,
            "retryable status codes must not be empty",
        ),
        (
            r#"{"maxAttempts": 2, "initialBackoff": "2s", "maxBackoff": "10s", "backoffMultiplier": 2}"#,
            "retryable status codes must not be empty",
        ),
    ];
    for (policy, reason) in cases {
        let error = error(&retry(policy));
        assert!(
            error.contains(&format!("invalid retry policy: {reason}")),
            "{error}"
        );
    }
}

// A6 "Validation of retryPolicy": "Values greater than 5 are treated as 5 without being
// considered a validation error"; the policy keeps what was written, and plans make 5.
#[test]
fn more_than_five_attempts_are_kept_and_read_as_five() {
    let config = read(&retry(
        r#"{"maxAttempts": 8, "initialBackoff": ".01s", "maxBackoff": ".01s",
            "backoffMultiplier": 1.0, "retryableStatusCodes": ["ALREADY_EXISTS"]}"#,
    ))
    .unwrap();
    let Some(Policy::Retry(policy)) = config.method("foo", "Bar").unwrap().policy else {
        panic!("a retry policy")
    };
    assert_eq!((policy.max_attempts, policy.attempts()), (8, 5));
    assert_eq!(policy.initial_backoff, Duration::from_millis(10));
}

// A6 "Validation of hedgingPolicy": the codes in integer or case-insensitive string form
// ("[14], ["UNAVAILABLE"] or ["unavailable"]"); hedgingDelay optional.
#[test]
fn reads_a_hedging_policy_with_codes_in_every_form() {
    let config = read(
        r#"{"methodConfig": [{"name": [{"service": "foo", "method": "Bar"}],
            "hedgingPolicy": {"maxAttempts": 4, "hedgingDelay": "0.5s",
                              "nonFatalStatusCodes": [14, "INTERNAL", "aborted"]}}]}"#,
    )
    .unwrap();
    assert_eq!(
        config.method("foo", "Bar").unwrap().policy,
        Some(Policy::Hedging(HedgingPolicy {
            max_attempts: 4,
            hedging_delay: Duration::from_millis(500),
            non_fatal_status_codes: Codes::of(&[Code::Unavailable, Code::Internal, Code::Aborted]),
        }))
    );
    assert!(config.method("foo", "Baz").is_none());
    let bare =
        read(r#"{"methodConfig": [{"name": [{}], "hedgingPolicy": {"maxAttempts": 2}}]}"#).unwrap();
    let Some(Policy::Hedging(policy)) = bare.method("any", "Thing").unwrap().policy else {
        panic!("a hedging policy")
    };
    assert_eq!(
        (policy.hedging_delay, policy.non_fatal_status_codes),
        (Duration::ZERO, Codes::EMPTY)
    );
    let once = error(r#"{"methodConfig": [{"name": [{}], "hedgingPolicy": {"maxAttempts": 1}}]}"#);
    assert!(
        once.contains("invalid hedging policy: max attempts must be at least 2"),
        "{once}"
    );
}

#[test]
fn rejects_unknown_status_codes() {
    for codes in [
        r#"["NOT_A_CODE"]"#,
        "[17]",
        "[-1]",
        "[1.5]",
        r#"[" UNAVAILABLE"]"#,
    ] {
        let json = retry(&format!(
            r#"{{"maxAttempts": 2, "initialBackoff": "1s", "maxBackoff": "1s",
                "backoffMultiplier": 2, "retryableStatusCodes": {codes}}}"#
        ));
        assert!(read(&json).is_err(), "{codes}");
    }
}

// A6 "Integration with Service Config": a method has a retry policy or a hedging policy,
// not both.
#[test]
fn rejects_an_entry_with_both_policies() {
    let error = error(
        r#"{"methodConfig": [{"name": [{"service": "foo"}],
            "retryPolicy": {"maxAttempts": 2, "initialBackoff": "1s", "maxBackoff": "1s",
                            "backoffMultiplier": 2, "retryableStatusCodes": [14]},
            "hedgingPolicy": {"maxAttempts": 2}}]}"#,
    );
    assert!(
        error.contains("a method has both a retry and a hedging policy"),
        "{error}"
    );
}

// grpc-go `service_config_test.go`, `TestParseMethodConfigDuplicatedName`, and
// `TestParseTimeOut`'s second case (the same name in two entries).
#[test]
fn rejects_a_name_given_twice() {
    let within = error(
        r#"{"methodConfig": [{"name": [{"service": "foo"}, {"service": "foo"}], "waitForReady": true}]}"#,
    );
    assert!(within.contains("a method name is given twice"), "{within}");
    let across = error(
        r#"{"methodConfig": [{"name": [{"service": "foo", "method": "Bar"}], "timeout": "1s"},
                             {"name": [{"service": "foo", "method": "Bar"}], "timeout": "2s"}]}"#,
    );
    assert!(across.contains("a method name is given twice"), "{across}");
    // The service alone and one of its methods are two names.
    assert!(read(r#"{"methodConfig": [{"name": [{"service": "foo"}, {"service": "foo", "method": "Bar"}]}]}"#).is_ok());
}

// grpc-go `service_config_test.go`, `TestParseDefaultMethodConfig`: `{}`, a null service and
// an empty one are the default; a method without a service is an error.
#[test]
fn an_empty_name_is_the_default_and_a_method_needs_a_service() {
    for name in [r#"{}"#, r#"{"service": null}"#, r#"{"service": ""}"#] {
        let config = read(&format!(
            r#"{{"methodConfig": [{{"name": [{name}], "timeout": "3s"}}]}}"#
        ))
        .unwrap();
        let entry = config.method("any.Service", "Any").expect("the default");
        assert_eq!(entry.timeout, Some(Duration::from_secs(3)), "{name}");
        assert_eq!(entry.name, [Name::default()]);
    }
    for name in [
        r#"{"method": "Bar"}"#,
        r#"{"service": "", "method": "Bar"}"#,
    ] {
        let error = error(&format!(r#"{{"methodConfig": [{{"name": [{name}]}}]}}"#));
        assert!(error.contains("a method name has no service"), "{error}");
    }
}

// The service config's lookup order (grpc-go `clientconn.go`, `getMethodConfig`): the exact
// service and method, then the service, then the default.
#[test]
fn a_method_finds_the_most_specific_entry() {
    let config = read(
        r#"{"methodConfig": [
            {"name": [{}], "timeout": "1s"},
            {"name": [{"service": "pkg.Service"}], "timeout": "2s"},
            {"name": [{"service": "pkg.Service", "method": "Method"}], "timeout": "3s"}
        ]}"#,
    )
    .unwrap();
    let timeout = |service, method| config.method(service, method).and_then(|m| m.timeout);
    assert_eq!(
        timeout("pkg.Service", "Method"),
        Some(Duration::from_secs(3))
    );
    assert_eq!(
        timeout("pkg.Service", "Other"),
        Some(Duration::from_secs(2))
    );
    assert_eq!(
        timeout("other.Service", "Method"),
        Some(Duration::from_secs(1))
    );
    assert_eq!(timeout("", ""), Some(Duration::from_secs(1)));
    assert_eq!(config.methods().len(), 3);
    // Without a default, an unnamed service has no entry.
    let narrow = read(r#"{"methodConfig": [{"name": [{"service": "a"}]}]}"#).unwrap();
    assert!(narrow.method("b", "M").is_none());
    assert!(narrow.method("a", "M").is_some());
    // Names are matched exactly: case and spaces count.
    assert!(narrow.method("A", "M").is_none());
    assert!(narrow.method(" a", "M").is_none());
}

// grpc-go `service_config_test.go`, `TestParseTimeOut`: "1s" is read, "3c" rejected; and the
// durations the protobuf JSON form rejects (grpc-go `internal/serviceconfig/duration_test.go`),
// negative ones among them.
#[test]
fn reads_timeouts_as_protobuf_durations() {
    let timeout = |text: &str| {
        read(&format!(
            r#"{{"methodConfig": [{{"name": [{{"service": "foo", "method": "Bar"}}], "timeout": {text}}}]}}"#
        ))
        .map(|c| c.method("foo", "Bar").unwrap().timeout)
    };
    assert_eq!(timeout(r#""1s""#), Ok(Some(Duration::from_secs(1))));
    assert_eq!(timeout(r#""0.1s""#), Ok(Some(Duration::from_millis(100))));
    assert_eq!(timeout(r#""1.5s""#), Ok(Some(Duration::from_millis(1500))));
    assert_eq!(timeout(r#""0s""#), Ok(Some(Duration::ZERO)));
    assert_eq!(timeout("null"), Ok(None));
    for bad in [
        r#""3c""#,
        r#""5""#,
        r#""5m""#,
        r#""-1s""#,
        r#""-0.200s""#,
        r#""1.0000000001s""#,
        r#""315576000001s""#,
        r#""s""#,
        "1",
        r#""""#,
    ] {
        assert!(timeout(bad).is_err(), "{bad}");
    }
    assert!(
        timeout(r#""-1s""#)
            .unwrap_err()
            .contains("negative duration")
    );
    assert!(
        timeout(r#""5""#)
            .unwrap_err()
            .contains("missing seconds unit")
    );
}

// A6 "Throttling Configuration": maxTokens a whole number in (0, 1000], tokenRatio above 0
// with three decimal places kept (grpc-go `service_config.go` checks the same range).
#[test]
fn reads_retry_throttling_within_what_a6_allows() {
    let throttling = |json: &str| {
        read(&format!(r#"{{"retryThrottling": {json}}}"#)).map(|c| c.retry_throttling())
    };
    assert_eq!(
        throttling(r#"{"maxTokens": 10, "tokenRatio": 0.1}"#),
        Ok(Some(Throttling {
            max_tokens: 10,
            token_ratio: 0.1
        }))
    );
    let budget = throttling(r#"{"maxTokens": 1000, "tokenRatio": 0.5466}"#)
        .unwrap()
        .unwrap()
        .budget()
        .unwrap();
    assert_eq!((budget.max_tokens(), budget.token_ratio()), (1000, 0.546));
    for (json, reason) in [
        (r#"{"maxTokens": 0, "tokenRatio": 0.1}"#, "max tokens"),
        (r#"{"maxTokens": 1001, "tokenRatio": 0.1}"#, "max tokens"),
        (r#"{"maxTokens": -5, "tokenRatio": 0.1}"#, "max tokens"),
        (r#"{"maxTokens": 10.5, "tokenRatio": 0.1}"#, "max tokens"),
        (r#"{"tokenRatio": 0.1}"#, "max tokens"),
        (r#"{"maxTokens": 10, "tokenRatio": 0}"#, "token ratio"),
        (r#"{"maxTokens": 10, "tokenRatio": -0.1}"#, "token ratio"),
        (r#"{"maxTokens": 10, "tokenRatio": 0.0004}"#, "token ratio"),
        (r#"{"maxTokens": 10}"#, "token ratio"),
    ] {
        let error = throttling(json).unwrap_err();
        assert!(
            error.contains(&format!("invalid retry throttling: {reason}")),
            "{json}: {error}"
        );
    }
    assert_eq!(read("{}").unwrap().retry_throttling(), None);
}

// A6's full example service config, with the keys grpc-go's tests also accept as the proto
// field names, and the other keys of a service config ignored.
#[test]
fn reads_a6s_example_and_ignores_what_is_not_about_retries() {
    let config = read(
        r#"{
            "loadBalancingConfig": [{"round_robin": {}}],
            "methodConfig": [{
                "name": [{"service": "EchoService", "method": "Echo"}],
                "waitForReady": true,
                "max_request_message_bytes": 1024,
                "retry_policy": {
                    "max_attempts": 4,
                    "initial_backoff": "0.1s",
                    "max_backoff": "1s",
                    "backoff_multiplier": 2,
                    "retryable_status_codes": ["UNAVAILABLE"]
                }
            }],
            "retry_throttling": {"max_tokens": 10, "token_ratio": 0.1}
        }"#,
    )
    .unwrap();
    assert_eq!(
        config.method("EchoService", "Echo").unwrap().policy,
        Some(Policy::Retry(RetryPolicy::default()))
    );
    assert_eq!(config.retry_throttling(), Some(Throttling::default()));
}

#[test]
fn a_config_built_in_rust_is_validated_as_one_read() {
    let entry = |service: &str, method: &str| MethodConfig {
        name: vec![Name {
            service: service.into(),
            method: method.into(),
        }],
        policy: None,
        timeout: None,
    };
    assert!(ServiceConfig::new(vec![entry("a", ""), entry("a", "M")], None).is_ok());
    assert_eq!(
        ServiceConfig::new(vec![entry("", "M")], None)
            .unwrap_err()
            .to_string(),
        "a method name has no service"
    );
    let bad = Throttling {
        max_tokens: 2000,
        token_ratio: 0.1,
    };
    let error = ServiceConfig::new(vec![], Some(bad)).unwrap_err();
    assert_eq!(
        error.to_string(),
        "invalid retry throttling: max tokens must be a whole number in (0, 1000]"
    );
    assert!(core::error::Error::source(&error).is_some());
}

// A6's example service config, written back in the same form: proto JSON keys, protobuf
// durations, code names.
#[test]
fn writes_what_it_reads() {
    let json = concat!(
        r#"{"methodConfig":[{"name":[{"service":"EchoService","method":"Echo"}],"#,
        r#""retryPolicy":{"maxAttempts":4,"initialBackoff":"0.1s","maxBackoff":"1s","#,
        r#""backoffMultiplier":2.0,"retryableStatusCodes":["UNAVAILABLE"]},"timeout":"1.5s"},"#,
        r#"{"name":[{}],"hedgingPolicy":{"maxAttempts":4,"hedgingDelay":"0.5s","#,
        r#""nonFatalStatusCodes":["ABORTED","INTERNAL","UNAVAILABLE"]}}],"#,
        r#""retryThrottling":{"maxTokens":10,"tokenRatio":0.1}}"#
    );
    let config = read(json).unwrap();
    assert_eq!(serde_json::to_string(&config).unwrap(), json);
    let bare = read("{}").unwrap();
    assert_eq!(
        serde_json::to_string(&bare).unwrap(),
        r#"{"methodConfig":[]}"#
    );
}

#[test]
fn a_duration_past_the_protobuf_range_is_not_written() {
    let entry = MethodConfig {
        name: vec![Name::default()],
        policy: None,
        timeout: Some(Duration::MAX),
    };
    let config = ServiceConfig::new(vec![entry], None).unwrap();
    let error = serde_json::to_string(&config).unwrap_err().to_string();
    assert!(error.contains("duration out of range"), "{error}");
}

mod round_trip {
    use super::*;
    use proptest::prelude::*;

    fn span() -> impl Strategy<Value = Duration> {
        prop_oneof![
            (1u64..=5_000_000_000).prop_map(Duration::from_nanos),
            (1u64..=315_576_000_000, 0u32..1_000_000_000).prop_map(|(s, n)| Duration::new(s, n)),
        ]
    }

    fn codes() -> impl Strategy<Value = Codes> {
        (1u32..1 << 17).prop_map(|bits| {
            Code::ALL
                .into_iter()
                .filter(|code| bits & 1 << code.number() != 0)
                .collect()
        })
    }

    fn policy() -> impl Strategy<Value = Option<Policy>> {
        prop_oneof![
            Just(None),
            (
                2u32..=9,
                span(),
                span(),
                (1u32..=100_000).prop_map(|m| f64::from(m) / 1000.0),
                codes()
            )
                .prop_map(
                    |(max_attempts, initial_backoff, max_backoff, backoff_multiplier, codes)| {
                        Some(Policy::Retry(RetryPolicy {
                            max_attempts,
                            initial_backoff,
                            max_backoff,
                            backoff_multiplier,
                            retryable_status_codes: codes,
                        }))
                    }
                ),
            (2u32..=9, prop::option::of(span()), codes()).prop_map(
                |(max_attempts, delay, codes)| {
                    Some(Policy::Hedging(HedgingPolicy {
                        max_attempts,
                        hedging_delay: delay.unwrap_or(Duration::ZERO),
                        non_fatal_status_codes: codes,
                    }))
                }
            ),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 500,
            failure_persistence: Some(Box::new(
                proptest::test_runner::FileFailurePersistence::Direct(
                    "tests/proptest-regressions/grpc.txt",
                ),
            )),
            ..ProptestConfig::default()
        })]

        // Whatever valid config is written reads back equal: durations, codes, floats. The
        // multipliers have three decimals, as a config writes them: serde_json, built without
        // its `float_roundtrip` feature, may read a seventeen-digit float back an ulp off.
        #[test]
        fn a_written_config_reads_back_equal(
            entries in prop::collection::vec(
                (policy(), prop::option::of(span()), "[a-z]{1,3}", "[A-Z]{0,2}"),
                0..5,
            ),
            throttling in prop::option::of((1u32..=1000, 1u32..=100_000)),
        ) {
            let methods: Vec<MethodConfig> = entries
                .into_iter()
                .enumerate()
                .map(|(i, (policy, timeout, service, method))| MethodConfig {
                    name: vec![Name { service: format!("{service}{i}"), method }],
                    policy,
                    timeout,
                })
                .collect();
            let throttling = throttling.map(|(max_tokens, milli)| Throttling {
                max_tokens,
                token_ratio: f64::from(milli) / 1000.0,
            });
            let config = ServiceConfig::new(methods, throttling).unwrap();
            let json = serde_json::to_string(&config).unwrap();
            prop_assert_eq!(read(&json), Ok(config), "{}", json);
        }
    }
}

// grpc-go `test/retry_test.go` writes its policies with capitalised keys ("MaxAttempts"),
// which Go's `encoding/json` matches in any case. The proto JSON names are `maxAttempts`;
// here a capitalised key is not one of them, so the policy reads as missing its fields and is
// rejected with the first rule it breaks, never silently half-read.
#[test]
fn capitalised_keys_are_not_the_proto_json_names() {
    let error = error(&retry(
        r#"{"MaxAttempts": 4, "InitialBackoff": ".01s", "MaxBackoff": ".01s",
            "BackoffMultiplier": 1.0, "RetryableStatusCodes": ["ALREADY_EXISTS"]}"#,
    ));
    assert!(
        error.contains("invalid retry policy: max attempts must be at least 2"),
        "{error}"
    );
}
