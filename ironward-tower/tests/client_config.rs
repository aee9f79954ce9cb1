//! `ClientConfig`: the client stack read from a file, built, and reloaded live through the
//! pieces' tuners, all or nothing.
#![cfg(feature = "config")]

use std::convert::Infallible;
use std::future::pending;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use http::{Request, Response, StatusCode};
use ironward::http_retry::Settings;
use ironward::{CLASSIC, SRE};
use ironward_tokio::{SharedClassicBreaker, SharedSreBreaker};
use ironward_tower::config::{BreakerConfig, ClientConfig, ClientConfigError};
use ironward_tower::{DeadlineExceeded, Retried};
use tower::{Layer, ServiceExt, service_fn};

const FILE: &str = r#"{
    "deadline": "2s",
    "retry": { "max_retries": 2, "base_delay": "1ms", "max_delay": "1ms" },
    "breaker": { "sre": { "k": 2.0 } },
    "limiter": {}
}"#;

fn config() -> ClientConfig {
    serde_json::from_str(FILE).unwrap()
}

fn get() -> Request<String> {
    Request::new(String::new())
}

#[test]
fn a_file_reads_into_the_core_records_and_back() {
    let config = config();
    assert_eq!(config.deadline, Some(Duration::from_secs(2)));
    let retry = config.retry.unwrap();
    assert_eq!(retry.max_retries, 2);
    assert_eq!(retry.base_delay, Duration::from_millis(1));
    // What the file leaves out is the record's default.
    assert_eq!(retry.total_budget, Settings::default().total_budget);
    assert_eq!(
        config.breaker,
        Some(BreakerConfig::Sre(ironward::Sre { k: 2.0, ..SRE }))
    );
    assert_eq!(config.limiter, Some(ironward::ADAPTIVE));
    let written = serde_json::to_string(&config).unwrap();
    assert!(written.contains(r#""deadline":"2s""#), "{written}");
    assert_eq!(
        serde_json::from_str::<ClientConfig>(&written).unwrap(),
        config
    );
    // An empty file is a stack with no pieces; a piece left out is not written.
    let empty: ClientConfig = serde_json::from_str("{}").unwrap();
    assert_eq!(empty, ClientConfig::default());
    assert_eq!(serde_json::to_string(&empty).unwrap(), "{}");
}

#[test]
fn a_bad_file_is_a_clear_error() {
    for bad in [
        r#"{"deadline": "2 s"}"#,
        r#"{"deadline": -1}"#,
        r#"{"breaker": {"hystrix": {}}}"#,
        r#"{"retries": {}}"#,
        r#"{"retry": {"max_retries": "three"}}"#,
    ] {
        assert!(serde_json::from_str::<ClientConfig>(bad).is_err(), "{bad}");
    }
}

#[test]
fn build_refuses_invalid_settings_and_another_family() {
    let mut invalid = config();
    invalid.retry = Some(Settings {
        request_reserve: Duration::from_secs(500),
        ..Settings::default()
    });
    let err = invalid.build::<SharedSreBreaker>().unwrap_err();
    assert_eq!(err, ClientConfigError::InvalidRetry);
    assert!(err.to_string().contains("request_reserve"));

    let err = config().build::<SharedClassicBreaker>().unwrap_err();
    assert_eq!(
        err,
        ClientConfigError::Family {
            wanted: "classic",
            found: "sre"
        }
    );
    assert!(err.to_string().contains("build the stack anew"));
    // Without a breaker, any family builds.
    let mut unbroken = config();
    unbroken.breaker = None;
    assert!(unbroken.build::<SharedClassicBreaker>().is_ok());
}

#[tokio::test]
async fn the_built_stack_answers_and_a_reload_reaches_its_next_call() {
    let reached = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&reached);
    let busy = service_fn(move |_: Request<String>| {
        counter.fetch_add(1, Ordering::Relaxed);
        async {
            let mut response = Response::new(String::new());
            *response.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
            Ok::<_, Infallible>(response)
        }
    });
    let (layer, reload) = config().build::<SharedSreBreaker>().unwrap();
    let client = layer.layer(busy);
    let response = client.clone().oneshot(get()).await.unwrap();
    assert_eq!(response.extensions().get::<Retried>().unwrap().attempts, 3);

    let mut next = config();
    next.retry.as_mut().unwrap().max_retries = 0;
    next.breaker = Some(BreakerConfig::Sre(ironward::Sre { k: 3.0, ..SRE }));
    next.deadline = Some(Duration::from_secs(9));
    reload.apply(&next).unwrap();
    assert_eq!(reload.config(), next);
    let response = client.oneshot(get()).await.unwrap();
    assert_eq!(response.extensions().get::<Retried>().unwrap().attempts, 1);
    assert_eq!(reached.load(Ordering::Relaxed), 4);
}

#[tokio::test(start_paused = true)]
async fn a_reloaded_deadline_holds_the_next_call() {
    let hangs = service_fn(|_: Request<String>| pending::<Result<Response<String>, Infallible>>());
    let file = ClientConfig {
        deadline: Some(Duration::from_secs(2)),
        ..ClientConfig::default()
    };
    let (layer, reload) = file.build::<SharedSreBreaker>().unwrap();
    let client = layer.layer(hangs);
    let start = tokio::time::Instant::now();
    let err = client.clone().oneshot(get()).await.unwrap_err();
    assert!(err.is::<DeadlineExceeded>());
    assert_eq!(start.elapsed(), Duration::from_secs(2));

    reload
        .apply(&ClientConfig {
            deadline: Some(Duration::from_millis(300)),
            ..ClientConfig::default()
        })
        .unwrap();
    let start = tokio::time::Instant::now();
    let err = client.oneshot(get()).await.unwrap_err();
    assert!(err.is::<DeadlineExceeded>());
    assert_eq!(start.elapsed(), Duration::from_millis(300));
    // A budget past u64::MAX nanoseconds is held as that, without a panic.
    reload
        .apply(&ClientConfig {
            deadline: Some(Duration::MAX),
            ..ClientConfig::default()
        })
        .unwrap();
    assert_eq!(
        reload.config().deadline,
        Some(Duration::from_nanos(u64::MAX))
    );
}

#[test]
fn a_change_of_shape_is_refused_and_nothing_is_applied() {
    let (_layer, reload) = config().build::<SharedSreBreaker>().unwrap();
    let before = reload.config();
    // The retry's settings change, but the limiter is removed: nothing changes.
    let mut removed = config();
    removed.retry.as_mut().unwrap().max_retries = 7;
    removed.limiter = None;
    let err = reload.apply(&removed).unwrap_err();
    assert_eq!(
        err,
        ClientConfigError::Shape {
            piece: "limiter",
            added: false
        }
    );
    assert!(err.to_string().contains("removes the limiter"));
    assert_eq!(reload.config(), before);

    let mut family = config();
    family.retry.as_mut().unwrap().max_retries = 7;
    family.breaker = Some(BreakerConfig::Classic(CLASSIC));
    assert!(matches!(
        reload.apply(&family),
        Err(ClientConfigError::Family { .. })
    ));
    assert_eq!(reload.config(), before);

    let mut invalid = config();
    invalid.deadline = Some(Duration::from_secs(1));
    invalid.retry.as_mut().unwrap().max_retries = 5000;
    assert_eq!(reload.apply(&invalid), Err(ClientConfigError::InvalidRetry));
    assert_eq!(reload.config(), before);

    // From a stack without a deadline, adding one is a change of shape too.
    let (_layer, bare) = ClientConfig::default().build::<SharedSreBreaker>().unwrap();
    assert_eq!(
        bare.apply(&ClientConfig {
            deadline: Some(Duration::from_secs(1)),
            ..ClientConfig::default()
        }),
        Err(ClientConfigError::Shape {
            piece: "deadline",
            added: true
        })
    );
}

/// A file's `[client]` reloads with its `[server]`, all or nothing: a client section the
/// built stack cannot take live refuses the whole file, server numbers included.
#[test]
fn a_protection_reloads_its_client_stack_with_the_server_or_neither() {
    use ironward_tower::config::{ErrorKind, Protection};

    let file = |gate: u32, client: &str| format!("[server]\ngate = {gate}\n[client]\n{client}");
    let protection = Protection::from_toml(&file(8, "deadline = \"2s\"\n")).unwrap();
    // The family is the program's: a file written for the SRE breaker builds no classic one.
    let sre = Protection::from_toml(&file(8, "breaker = { sre = {} }\n")).unwrap();
    let err = sre.client::<SharedClassicBreaker>().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refused, "{err}");
    assert!(err.to_string().contains("sre"), "{err}");

    let _stack = protection.client::<SharedSreBreaker>().unwrap();
    protection
        .reload_str(&file(16, "deadline = \"500ms\"\n"))
        .unwrap();
    let current = protection.current();
    assert_eq!(current.server.gate, Some(16));
    assert_eq!(
        current.client.as_ref().unwrap().deadline,
        Some(Duration::from_millis(500))
    );

    // A breaker added to the client: refused whole, the server's new gate is not applied.
    let err = protection
        .reload_str(&file(32, "deadline = \"500ms\"\nbreaker = { sre = {} }\n"))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refused, "{err}");
    assert!(err.to_string().contains("[client]"), "{err}");
    assert_eq!(protection.current().server.gate, Some(16));
    // And a file without the section removes the deadline the stack holds: refused too.
    assert!(protection.reload_str("[server]\ngate = 16\n").is_err());
}
