//! The `tracing` events, read by a subscriber set for the test's thread: a refused connect at
//! `DEBUG` with the ward's `name`, the `piece` and the `next` wait; the first failed connect
//! of a run and the success that ends it; the breaker starting and stopping throttling; a
//! classic breaker's changes of state at `INFO`.
//!
//! A binary of its own: `tracing` caches whether a callsite is wanted when it is first hit,
//! and a test elsewhere in the binary without a subscriber could have it cached as wanted by
//! nobody.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use deadpool::managed::{Manager, Metrics, RecycleResult};
use ironward_pool::Warded;
use ironward_tokio::{Clock, Dice};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// A backend whose connects and checks fail while `down` says so.
#[derive(Clone, Default)]
struct Backend(Arc<Mutex<bool>>);

impl Manager for Backend {
    type Type = ();
    type Error = &'static str;

    async fn create(&self) -> Result<(), &'static str> {
        if *self.0.lock().unwrap() {
            Err("down")
        } else {
            Ok(())
        }
    }

    async fn recycle(&self, _: &mut (), _: &Metrics) -> RecycleResult<&'static str> {
        if *self.0.lock().unwrap() {
            Err(deadpool::managed::RecycleError::Backend("down"))
        } else {
            Ok(())
        }
    }
}

/// Every event seen: its message, level and fields, as text.
#[derive(Clone, Default)]
struct Seen(Arc<Mutex<Vec<BTreeMap<&'static str, String>>>>);

impl Seen {
    fn with_message(&self, message: &str) -> Vec<BTreeMap<&'static str, String>> {
        let all = self.0.lock().unwrap();
        all.iter()
            .filter(|fields| fields.get("message").map(String::as_str) == Some(message))
            .cloned()
            .collect()
    }
}

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        self.0.insert(field.name(), format!("{value:?}"));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name(), value.to_owned());
    }
}

struct Fields<'a>(&'a mut BTreeMap<&'static str, String>);

impl Subscriber for Seen {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        fields.insert("level", event.metadata().level().to_string());
        self.0.lock().unwrap().push(fields);
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

#[tokio::test(flavor = "current_thread")]
async fn refusals_runs_of_failures_and_the_breaker_are_debug_events() {
    let seen = Seen::default();
    let _guard = tracing::subscriber::set_default(seen.clone());
    let backend = Backend::default();
    let (clock, hand) = Clock::manual(Duration::ZERO);
    let warded = Warded::new(backend.clone())
        .with_clock(clock)
        .with_dice(Dice::from_fn(|| 0.5))
        .with_name("orders");

    *backend.0.lock().unwrap() = true;
    assert!(warded.create().await.is_err());
    assert!(warded.create().await.is_err());
    let failing = seen.with_message("connects failing: the ward backs off");
    assert_eq!(failing.len(), 1, "{failing:?}");
    assert_eq!(
        (failing[0]["name"].as_str(), failing[0]["failures"].as_str()),
        ("orders", "1")
    );
    let refused = seen.with_message("ward refused a connect");
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert_eq!(refused[0]["piece"], "backoff");
    assert_eq!(refused[0]["next"], "250ms");
    assert_eq!(refused[0]["level"], "DEBUG");
    assert!(refused[0]["reason"].starts_with("backoff after 1 failed connect"));

    // The pool's checks keep failing: the breaker starts throttling.
    for _ in 0..20 {
        let _ = warded.recycle(&mut (), &Metrics::default()).await;
    }
    let throttling = seen.with_message("the ward's breaker starts refusing connects");
    assert_eq!(throttling.len(), 1, "{throttling:?}");

    // Back: the run ends, and the checks that pass let the breaker stop.
    *backend.0.lock().unwrap() = false;
    hand.advance(Duration::from_secs(20));
    let mut made = false;
    for _ in 0..50 {
        made |= warded.create().await.is_ok();
        let _ = warded.recycle(&mut (), &Metrics::default()).await;
        hand.advance(Duration::from_millis(300));
    }
    assert!(made);
    assert_eq!(
        seen.with_message("a connect succeeded: the ward stops backing off")
            .len(),
        1
    );
    assert_eq!(
        seen.with_message("the ward's breaker lets every connect through")
            .len(),
        1
    );
}

// A classic breaker's changes of state are `INFO` events, each with the ward's name, the
// states left and entered and their numbers (resilience4j's order); the SRE breaker, which
// has no states, makes none.
#[tokio::test(flavor = "current_thread")]
async fn a_classic_breakers_changes_of_state_are_info_events() {
    use ironward::RECONNECT_CLASSIC;

    let seen = Seen::default();
    let _guard = tracing::subscriber::set_default(seen.clone());
    let backend = Backend::default();
    let (clock, hand) = Clock::manual(Duration::ZERO);
    let warded = Warded::with_policy(backend.clone(), RECONNECT_CLASSIC)
        .with_clock(clock.clone())
        .with_name("orders");
    let sre = Warded::new(backend.clone())
        .with_clock(clock)
        .with_name("sre");

    // Five failed checks of held connections: open.
    *backend.0.lock().unwrap() = true;
    for _ in 0..5 {
        let _ = warded.recycle(&mut (), &Metrics::default()).await;
        let _ = sre.recycle(&mut (), &Metrics::default()).await;
    }
    let changes = || seen.with_message("the ward's breaker changed state");
    let opened = changes();
    assert_eq!(opened.len(), 1, "{opened:?}");
    let fields = |event: &BTreeMap<&'static str, String>| {
        ["name", "from", "to", "from_number", "to_number", "level"].map(|k| event[k].clone())
    };
    assert_eq!(
        fields(&opened[0]),
        ["orders", "closed", "open", "0", "1", "INFO"].map(String::from)
    );

    // Its first open wait over, the probe connects: half-open, then closed.
    *backend.0.lock().unwrap() = false;
    hand.advance(Duration::from_secs(1));
    assert!(warded.create().await.is_ok());
    let all = changes();
    assert_eq!(all.len(), 3, "{all:?}");
    assert_eq!(
        fields(&all[1]),
        ["orders", "open", "half_open", "1", "2", "INFO"].map(String::from)
    );
    assert_eq!(
        fields(&all[2]),
        ["orders", "half_open", "closed", "2", "0", "INFO"].map(String::from)
    );
    assert!(all.iter().all(|event| event["name"] == "orders"), "{all:?}");
}
