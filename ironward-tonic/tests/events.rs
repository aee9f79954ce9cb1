//! The `tracing` events, with or without the `metrics` feature: each retry at `DEBUG` with
//! the layer's `name`, the failed `attempt`, the `wait`, the `status` code and its `reason`;
//! each stop with the `attempts`, the time `waited`, the last `status`, the `stop`'s label and
//! its `reason` as a phrase; each hedge with its `attempt` and the time `elapsed` since the
//! call began. Read by a subscriber set for the test's thread, which runs every call.
//!
//! A binary of its own, every test of which sets its subscriber before it calls: `tracing`
//! caches whether a callsite is wanted when it is first hit, and a test elsewhere in the
//! binary, with no subscriber, could hit it first and have it cached as wanted by nobody,
//! while this test's subscriber was not yet registered; then the events never came.

#[path = "retry/server.rs"]
mod server;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ironward_tonic::{Clock, Dice, GrpcRetryLayer};
use tonic::Code;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

use server::{Answer, Server, call, client, layer};

// Two UNAVAILABLE then OK: two retries, 10 ms each. Then four UNAVAILABLE: three retries and
// a stop after four attempts and 30 ms of waits.
#[tokio::test]
async fn each_retry_and_each_stop_is_an_event_with_its_numbers() {
    let events = Capture::default();
    let _guard = tracing::subscriber::set_default(events.clone());
    let (clock, _) = Clock::manual(Duration::ZERO);
    let server = Server::start(clock.clone(), |n, _| match n {
        2 => Answer::Ok,
        _ => Answer::Fail(Code::Unavailable, &[]),
    })
    .await;
    let layer = layer(r#""UNAVAILABLE""#, "", &clock).with_name("flaky");
    let mut client = client(server.addr, &layer);
    assert_eq!(call(&mut client, "Call", None).await, Code::Ok);
    assert_eq!(call(&mut client, "Call", None).await, Code::Unavailable);
    assert_eq!(server.seen().len(), 3 + 4);

    let retries = events.named("retrying request");
    let attempts: Vec<_> = retries.iter().map(|e| e["attempt"].as_str()).collect();
    assert_eq!(attempts, ["1", "2", "1", "2", "3"]);
    for event in &retries {
        assert_eq!(event["name"], "flaky");
        assert_eq!(event["wait"], "10ms");
        assert_eq!(event["status"], "14");
        assert_eq!(event["reason"], "UNAVAILABLE");
        assert_eq!(event["level"], "DEBUG");
    }
    let stops = events.named("not retrying");
    assert_eq!(stops.len(), 1, "{stops:?}");
    let stop = &stops[0];
    assert_eq!(stop["name"], "flaky");
    assert_eq!(stop["attempts"], "4");
    assert_eq!(stop["waited"], "30ms");
    assert_eq!(stop["status"], "14");
    assert_eq!(stop["stop"], "attempts_exhausted");
    assert_eq!(stop["reason"], "attempts spent");
    assert_eq!(stop["level"], "DEBUG");
}

// A pushback that says stop: one attempt, and the stop says why.
#[tokio::test]
async fn a_pushback_stop_is_an_event() {
    let events = Capture::default();
    let _guard = tracing::subscriber::set_default(events.clone());
    let (clock, _) = Clock::manual(Duration::ZERO);
    let server = Server::start(clock.clone(), |_, _| {
        Answer::Fail(Code::Unavailable, &["-1"])
    })
    .await;
    let mut client = client(server.addr, &layer(r#""UNAVAILABLE""#, "", &clock));
    assert_eq!(call(&mut client, "Call", None).await, Code::Unavailable);
    assert_eq!(events.named("retrying request").len(), 0);
    let stops = events.named("not retrying");
    assert_eq!(stops.len(), 1, "{stops:?}");
    assert_eq!(stops[0]["name"], "default");
    assert_eq!(stops[0]["attempts"], "1");
    assert_eq!(stops[0]["waited"], "0ns");
    assert_eq!(stops[0]["stop"], "pushback");
    assert_eq!(stops[0]["reason"], "server pushback said stop");
}

// Hedges sent at 100 and 200 ms, the third answering: one event a hedge, no stop.
#[tokio::test]
async fn each_hedge_is_an_event() {
    let events = Capture::default();
    let _guard = tracing::subscriber::set_default(events.clone());
    let (clock, _) = Clock::manual(Duration::ZERO);
    let server = Server::start(clock.clone(), |_, previous| match previous {
        2 => Answer::Ok,
        _ => Answer::Hang,
    })
    .await;
    let json = r#"{"methodConfig": [{"name": [{"service": "test.Flaky", "method": "Hedge"}],
        "hedgingPolicy": {"maxAttempts": 3, "hedgingDelay": "0.1s",
            "nonFatalStatusCodes": ["UNAVAILABLE"]}}]}"#;
    let layer = GrpcRetryLayer::from_json(json)
        .unwrap()
        .with_clock(clock.clone())
        .with_dice(Dice::from_fn(|| 0.5));
    let mut client = client(server.addr, &layer);
    let deadline = Some(Duration::from_secs(10));
    assert_eq!(call(&mut client, "Hedge", deadline).await, Code::Ok);
    let hedges = events.named("hedging request");
    let seen: Vec<_> = hedges
        .iter()
        .map(|e| (e["attempt"].as_str(), e["elapsed"].as_str()))
        .collect();
    assert_eq!(seen, [("2", "100ms"), ("3", "200ms")]);
    assert!(hedges.iter().all(|e| e["name"] == "default"));
    assert_eq!(events.named("not retrying").len(), 0);
}

/// Every event seen, as its fields (with its `level`) by name.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<BTreeMap<String, String>>>>);

impl Capture {
    /// The events whose message is `message`.
    fn named(&self, message: &str) -> Vec<BTreeMap<String, String>> {
        let events = self.0.lock().unwrap();
        events
            .iter()
            .filter(|e| e.get("message").is_some_and(|m| m == message))
            .cloned()
            .collect()
    }
}

struct Fields(BTreeMap<String, String>);

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl Subscriber for Capture {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut fields = Fields(BTreeMap::new());
        event.record(&mut fields);
        let level = *event.metadata().level();
        let level = if level == Level::DEBUG {
            "DEBUG"
        } else {
            "other"
        };
        fields.0.insert("level".to_owned(), level.to_owned());
        self.0.lock().unwrap().push(fields.0);
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}
