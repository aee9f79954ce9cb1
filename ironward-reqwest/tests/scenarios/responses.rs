//! The twelve scenarios of the MoonBit package `http_retry`'s HTTP simulation and its negative
//! control, in its order, then the rows it leaves out.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::stream;
use ironward::http_retry::{Settings, StopReason};
use ironward_reqwest::{Clock, Retried, Stop};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

use crate::scenarios::server::{Reply, Server, wall_now};
use crate::scenarios::{about, bounded, client, exact, fast, instant, retried};

const MS: fn(u64) -> Duration = Duration::from_millis;

fn stopped(reason: StopReason) -> Option<Stop> {
    Some(Stop::Decided(reason))
}

// 1. A rate-limited GET: 429 with `Retry-After: 1`, then 200. The server's minimum holds:
// two requests at least one second apart.
#[tokio::test]
async fn a_429_with_retry_after_is_retried_no_sooner_than_asked() {
    bounded(async {
        let server = Server::start(vec![Reply::retry_after(429, "1"), Reply::status(200)]).await;
        let response = client(exact(fast()))
            .get(server.url("/report"))
            .send()
            .await
            .unwrap();

        assert_eq!(response.status(), 200);
        assert_eq!(
            retried(&response),
            Retried {
                attempts: 2,
                stop: None,
                waited: Duration::from_secs(1)
            }
        );
        assert_eq!(server.count(), 2);
        let gap = server.intervals()[0];
        assert!(about(gap, Duration::from_secs(1)), "gap {gap:?}");
        println!("scenario 1: gap {gap:?}");
    })
    .await;
}

// 2. 503, 503, then 200: three requests, the second gap twice the first (100 ms, then
// 200 ms: a 100 ms base here so that growth stands clear of scheduling noise). Each retry is
// a tracing event with its attempt, status, wait and reason.
#[tokio::test]
async fn two_503s_are_retried_with_growing_backoff() {
    let events = Capture::default();
    let _guard = tracing::subscriber::set_default(events.clone());
    bounded(async {
        let server = Server::start(vec![
            Reply::status(503),
            Reply::status(503),
            Reply::status(200),
        ])
        .await;
        let settings = Settings {
            base_delay: MS(100),
            ..fast()
        };
        let response = client(exact(settings))
            .get(server.url("/flaky"))
            .send()
            .await
            .unwrap();

        assert_eq!(response.status(), 200);
        assert_eq!(
            retried(&response),
            Retried {
                attempts: 3,
                stop: None,
                waited: MS(300)
            }
        );
        assert_eq!(server.count(), 3);
        let gaps = server.intervals();
        assert!(about(gaps[0], MS(100)), "gaps {gaps:?}");
        assert!(about(gaps[1], MS(200)), "gaps {gaps:?}");
        assert!(gaps[1] > gaps[0], "gaps {gaps:?}");
        println!("scenario 2: gaps {gaps:?}");
    })
    .await;

    let retries = events.named("retrying request");
    assert_eq!(retries.len(), 2, "{retries:?}");
    for (event, (attempt, wait)) in retries.iter().zip([("1", "100ms"), ("2", "200ms")]) {
        assert_eq!(event["attempt"], attempt);
        assert_eq!(event["status"], "503");
        assert_eq!(event["wait"], wait);
        assert_eq!(event["reason"], "503 Service Unavailable");
    }
}

// 3. An unsafe POST answered 503: one request, no retry, one operation performed.
#[tokio::test]
async fn an_unsafe_post_is_never_replayed() {
    bounded(async {
        let server = Server::start(vec![Reply::status(503), Reply::status(201)]).await;
        let response = client(instant(fast()).0)
            .post(server.url("/orders"))
            .body("one order")
            .send()
            .await
            .unwrap();

        assert_eq!(response.status(), 503);
        let record = retried(&response);
        assert_eq!(record.attempts, 1);
        assert_eq!(record.stop, stopped(StopReason::NotReplayable));
        assert_eq!(server.count(), 1);
        assert_eq!(server.effects(), 1);
    })
    .await;
}

// 4. A POST the server deduplicates by `Idempotency-Key`, 503 then 201: two requests with the
// same key and body, one operation.
#[tokio::test]
async fn a_deduplicated_post_is_replayed_once_with_its_key() {
    bounded(async {
        let server = Server::deduplicating(vec![Reply::status(503), Reply::status(201)]).await;
        let response = client(exact(fast()))
            .post(server.url("/payments"))
            .header("Idempotency-Key", "order-1337")
            .body(r#"{"amount":100}"#)
            .send()
            .await
            .unwrap();

        assert_eq!(response.status(), 201);
        assert_eq!(retried(&response).attempts, 2);
        let hits = server.hits();
        assert_eq!(hits.len(), 2);
        assert_eq!(server.effects(), 1);
        for hit in &hits {
            assert_eq!(hit.method, "POST");
            assert_eq!(hit.key.as_deref(), Some("order-1337"));
            assert_eq!(hit.body, r#"{"amount":100}"#);
        }
        assert!(about(server.intervals()[0], MS(20)));
    })
    .await;
}

// 5. A time budget too small for the next wait: 500 ms in all, 100 ms of it kept for the
// next attempt, and the server asks for a second. One request, `BudgetExhausted`.
#[tokio::test]
async fn a_wait_the_budget_cannot_hold_stops() {
    bounded(async {
        let server = Server::start(vec![Reply::retry_after(503, "1"), Reply::status(200)]).await;
        let settings = Settings {
            total_budget: MS(500),
            ..fast()
        };
        let response = client(instant(settings).0)
            .get(server.url("/slow"))
            .send()
            .await
            .unwrap();

        assert_eq!(response.status(), 503);
        let record = retried(&response);
        assert_eq!(
            (record.attempts, record.stop, record.waited),
            (1, stopped(StopReason::BudgetExhausted), Duration::ZERO)
        );
        assert_eq!(server.count(), 1);
    })
    .await;
}

// 6. A server that always answers 503: `max_retries + 1` requests, gaps of 20, 40 and 80 ms,
// then `AttemptsExhausted`, and the last 503 is what the client gets.
#[tokio::test]
async fn a_server_that_never_recovers_gets_max_retries_plus_one_requests() {
    bounded(async {
        let server = Server::start(vec![Reply::status(503)]).await;
        let settings = fast();
        let response = client(exact(settings))
            .get(server.url("/down"))
            .send()
            .await
            .unwrap();

        assert_eq!(response.status(), 503);
        assert_eq!(
            retried(&response),
            Retried {
                attempts: 4,
                stop: stopped(StopReason::AttemptsExhausted),
                waited: MS(140)
            }
        );
        assert_eq!(response.text().await.unwrap(), "reply 3", "the last reply");
        assert_eq!(server.count(), settings.max_retries as usize + 1);
        let gaps = server.intervals();
        for (gap, floor) in gaps.iter().zip([20, 40, 80]) {
            assert!(about(*gap, MS(floor)), "gaps {gaps:?}");
        }
        println!("scenario 6: gaps {gaps:?}");
    })
    .await;
}

// 7. A malformed `Retry-After`: one request, `InvalidRetryAfter`.
#[tokio::test]
async fn a_malformed_retry_after_stops() {
    bounded(async {
        let server = Server::start(vec![Reply::retry_after(503, "soon"), Reply::status(200)]).await;
        let response = client(instant(fast()).0)
            .get(server.url("/"))
            .send()
            .await
            .unwrap();

        assert_eq!(response.status(), 503);
        assert_eq!(
            retried(&response).stop,
            stopped(StopReason::InvalidRetryAfter)
        );
        assert_eq!(server.count(), 1);
    })
    .await;
}

// 8. Two `Retry-After` fields, even equal ones: one request, `InvalidRetryAfter`. The client
// received both fields uncombined.
#[tokio::test]
async fn duplicate_retry_after_fields_stop() {
    bounded(async {
        let twice = Reply::Plain(
            503,
            vec![
                ("retry-after", b"1".to_vec()),
                ("retry-after", b"1".to_vec()),
            ],
        );
        let server = Server::start(vec![twice, Reply::status(200)]).await;
        let response = client(instant(fast()).0)
            .get(server.url("/"))
            .send()
            .await
            .unwrap();

        assert_eq!(response.headers().get_all("retry-after").iter().count(), 2);
        assert_eq!(
            retried(&response).stop,
            stopped(StopReason::InvalidRetryAfter)
        );
        assert_eq!(server.count(), 1);
    })
    .await;
}

// 9. `Retry-After: 3600` over a 30 s cap: the server's minimum is never clipped, so the
// retry stops. One request, `ServerDelayExceedsCap`.
#[tokio::test]
async fn a_retry_after_above_the_cap_stops() {
    bounded(async {
        let server = Server::start(vec![Reply::retry_after(503, "3600"), Reply::status(200)]).await;
        let response = client(instant(fast()).0)
            .get(server.url("/"))
            .send()
            .await
            .unwrap();

        assert_eq!(
            retried(&response).stop,
            stopped(StopReason::ServerDelayExceedsCap)
        );
        assert_eq!(server.count(), 1);
    })
    .await;
}

// 10. An HTTP-date `Retry-After` two seconds ahead: the retry comes after that date.
//
// An HTTP-date has whole-second resolution. The server names the second two after the one its
// wall clock is in (`floor(now) + 2`), so the date lies between 1 and 2 s after it answered;
// the client reads the delay against its own whole-second clock, `date - floor(now)`, and so
// sends the retry at `date + frac(now)`: never before the date. The assertions are therefore
// (a) the retry arrives at or after the date on the wall clock, and (b) the gap between the
// two requests is at least the date minus the first request's arrival, which is more than 1 s
// (2 s less the truncation). Both clocks are this machine's; 10 ms covers the monotonic sleep
// and the wall clock disagreeing (slewing) over two seconds.
#[tokio::test]
async fn an_http_date_retry_after_is_waited_out() {
    bounded(async {
        let server = Server::start(vec![Reply::RetryAtDate(503, 2), Reply::status(200)]).await;
        let response = client(exact(fast()))
            .get(server.url("/"))
            .send()
            .await
            .unwrap();

        assert_eq!(response.status(), 200);
        let record = retried(&response);
        assert_eq!((record.attempts, record.stop), (2, None));
        let (hits, date) = (server.hits(), server.dates()[0] as f64);
        assert_eq!(hits.len(), 2);
        let tolerance = 0.010;
        assert!(
            hits[1].wall + tolerance >= date,
            "retry at {} before the date {date}",
            hits[1].wall
        );
        let gap = (hits[1].at - hits[0].at).as_secs_f64();
        assert!(gap + tolerance >= date - hits[0].wall, "gap {gap}");
        assert!(gap > 1.0 - tolerance && gap < 2.0 + 2.0, "gap {gap}");
        assert!(record.waited >= Duration::from_secs(1) && record.waited <= Duration::from_secs(2));
        println!(
            "scenario 10: date - first request {:.3} s, gap {gap:.3} s, waited {:?}, retry {:.3} s after the date",
            date - hits[0].wall,
            record.waited,
            hits[1].wall - date
        );
        assert!(wall_now() >= date);
    })
    .await;
}

// 11. A 404 is final: one request, `NotRetryable`.
#[tokio::test]
async fn a_404_is_not_retried() {
    bounded(async {
        let server = Server::start(vec![Reply::status(404), Reply::status(200)]).await;
        let response = client(instant(fast()).0)
            .get(server.url("/missing"))
            .send()
            .await
            .unwrap();

        assert_eq!(response.status(), 404);
        assert_eq!(
            retried(&response),
            Retried {
                attempts: 1,
                stop: stopped(StopReason::NotRetryable),
                waited: Duration::ZERO
            }
        );
        assert_eq!(server.count(), 1);
    })
    .await;
}

// 12. A streaming body cannot be sent twice, even with an idempotent method: one request,
// which carried the whole stream, then `NotReplayable`.
#[tokio::test]
async fn a_streaming_body_is_sent_once() {
    bounded(async {
        let server = Server::start(vec![Reply::status(503), Reply::status(200)]).await;
        let chunks: Vec<Result<&'static str, std::io::Error>> =
            vec![Ok("chunk one, "), Ok("chunk two")];
        let response = client(instant(fast()).0)
            .put(server.url("/upload"))
            .body(reqwest::Body::wrap_stream(stream::iter(chunks)))
            .send()
            .await
            .unwrap();

        assert_eq!(response.status(), 503);
        let record = retried(&response);
        assert_eq!(
            (record.attempts, record.stop),
            (1, stopped(StopReason::NotReplayable))
        );
        let hits = server.hits();
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].body, "chunk one, chunk two");
    })
    .await;
}

// The negative control: the same unsafe POST, vouched for by an `Idempotency-Key` that this
// server ignores, is replayed, and the server performs the operation twice. The scenarios can
// therefore see a duplicate; scenario 3 and 4 seeing one operation means there was none.
#[tokio::test]
async fn a_forced_replay_without_deduplication_duplicates_the_operation() {
    bounded(async {
        let server = Server::start(vec![Reply::status(503), Reply::status(201)]).await;
        let response = client(instant(fast()).0)
            .post(server.url("/orders"))
            .header("Idempotency-Key", "ignored-by-this-server")
            .body("one order")
            .send()
            .await
            .unwrap();

        assert_eq!(response.status(), 201);
        assert_eq!(retried(&response).attempts, 2);
        assert_eq!(server.count(), 2);
        assert_eq!(
            server.effects(),
            2,
            "the duplicate the other scenarios rule out"
        );
    })
    .await;
}

// An empty `Idempotency-Key` names no operation, so the server cannot deduplicate by it: it
// does not make a POST replay-safe (the core's `vouches`). One request, `NotReplayable`.
#[tokio::test]
async fn an_empty_idempotency_key_does_not_vouch_for_a_post() {
    bounded(async {
        let server = Server::deduplicating(vec![Reply::status(503), Reply::status(201)]).await;
        let response = client(instant(fast()).0)
            .post(server.url("/payments"))
            .header("Idempotency-Key", "")
            .body("one payment")
            .send()
            .await
            .unwrap();

        assert_eq!(response.status(), 503);
        let record = retried(&response);
        assert_eq!(
            (record.attempts, record.stop),
            (1, stopped(StopReason::NotReplayable))
        );
        let hits = server.hits();
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].key.as_deref(), Some(""), "the empty key was sent");
        assert_eq!(server.effects(), 1);
    })
    .await;
}

// RFC 9110 §5.5 allows obs-text bytes in a field value, and hyper passes them on; none can be
// a delay, so a `Retry-After` that is not UTF-8 is malformed, not absent. One request,
// `InvalidRetryAfter`.
#[tokio::test]
async fn a_retry_after_that_is_not_utf8_stops() {
    bounded(async {
        let server =
            Server::start(vec![Reply::retry_after(503, b"\xff1"), Reply::status(200)]).await;
        let response = client(instant(fast()).0)
            .get(server.url("/"))
            .send()
            .await
            .unwrap();

        assert_eq!(response.status(), 503);
        assert_eq!(
            response.headers()["retry-after"].as_bytes(),
            b"\xff1",
            "the client received the raw bytes"
        );
        let record = retried(&response);
        assert_eq!(
            (record.attempts, record.stop),
            (1, stopped(StopReason::InvalidRetryAfter))
        );
        assert_eq!(server.count(), 1);
    })
    .await;
}

// The budget runs out while waiting: `Retry-After: 1` fits a 5 s budget keeping 1 s (1 s + 1 s
// < 5 s), but the clock reads 4.01 s on waking (a suspended or overloaded process oversleeps),
// leaving 0.99 s, no more than the reserve, so the retry is not sent. The clock is scripted by
// read, as the middleware makes them: the call's start (which is the first attempt's too),
// after it (10 ms), and on waking. The sleep itself is tokio's, a real second.
#[tokio::test]
async fn the_budget_running_out_while_waiting_stops_the_retry() {
    bounded(async {
        let server = Server::start(vec![Reply::retry_after(503, "1"), Reply::status(200)]).await;
        let reads = Arc::new(Mutex::new(0u32));
        let counted = Arc::clone(&reads);
        let clock = Clock::from_fn(move || {
            let mut reads = counted.lock().unwrap();
            *reads += 1;
            match *reads {
                1 => Duration::ZERO,
                2 => MS(10),
                _ => MS(4010),
            }
        });
        let settings = Settings {
            total_budget: Duration::from_secs(5),
            request_reserve: Duration::from_secs(1),
            ..fast()
        };
        let started = std::time::Instant::now();
        let response = client(exact(settings).with_clock(clock))
            .get(server.url("/"))
            .send()
            .await
            .unwrap();

        assert_eq!(response.status(), 503, "the last failed response");
        assert_eq!(
            retried(&response),
            Retried {
                attempts: 1,
                waited: Duration::from_secs(1),
                stop: stopped(StopReason::BudgetExhausted),
            },
            "the wait was decided and taken, and the re-check on waking stopped the retry"
        );
        assert_eq!(*reads.lock().unwrap(), 3);
        assert_eq!(server.count(), 1);
        assert!(started.elapsed() >= Duration::from_secs(1));
    })
    .await;
}

// The budget check is strict (the core's rule 9): with 10 s left and a 1 s reserve, a server
// that asks for 8 s is waited out, one that asks for 9 s (exactly filling the budget) is not.
// On a manual clock both are decided at elapsed zero, exactly.
#[tokio::test]
async fn a_wait_that_exactly_fills_the_budget_stops() {
    bounded(async {
        let settings = Settings {
            total_budget: Duration::from_secs(10),
            request_reserve: Duration::from_secs(1),
            ..fast()
        };
        for (asked, attempts, stop, waited) in [
            ("8", 2, None, Duration::from_secs(8)),
            ("9", 1, stopped(StopReason::BudgetExhausted), Duration::ZERO),
        ] {
            let server =
                Server::start(vec![Reply::retry_after(503, asked), Reply::status(200)]).await;
            let (middleware, clock) = instant(settings);
            let response = client(middleware)
                .get(server.url("/"))
                .send()
                .await
                .unwrap();
            assert_eq!(
                retried(&response),
                Retried {
                    attempts,
                    waited,
                    stop
                },
                "Retry-After: {asked}"
            );
            assert_eq!(server.count(), attempts as usize);
            assert_eq!(
                clock.now(),
                waited,
                "the manual clock moved by the wait alone"
            );
        }
    })
    .await;
}

// The middleware's record is the core's, and the manual clock shows the waits were exactly
// those decided: 20, 40 and 80 ms, with no real time spent.
#[tokio::test]
async fn on_a_manual_clock_the_waits_are_exact_and_free() {
    bounded(async {
        let server = Server::start(vec![Reply::status(503)]).await;
        let (middleware, clock) = instant(fast());
        let started = std::time::Instant::now();
        let response = client(middleware)
            .get(server.url("/"))
            .send()
            .await
            .unwrap();
        let record: ironward::http_retry::Retried = retried(&response);
        assert_eq!(
            record,
            Retried {
                attempts: 4,
                waited: MS(140),
                stop: stopped(StopReason::AttemptsExhausted),
            }
        );
        assert_eq!(clock.now(), MS(140));
        assert!(started.elapsed() < Duration::from_secs(5));
    })
    .await;
}

/// A subscriber that keeps every event's fields, as text.
#[derive(Debug, Clone, Default)]
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
        self.0.lock().unwrap().push(fields.0);
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}
