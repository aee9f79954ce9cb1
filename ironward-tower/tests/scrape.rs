//! The example server over real HTTP, each of its layers made to refuse, then `/metrics`
//! scraped: every counter must equal what the test sent and saw, by piece and reason.
//!
//! The app is the example's own (`examples/server/app.rs`), built from a configuration of the
//! test's own (`CONFIG`) on a CPU reading the test sets: a quota per client address that does
//! not refill within the test, a gate of two and a three-second deadline. Each phase speaks as its own client (`X-Forwarded-For`, one trusted
//! proxy), so that no phase spends another's quota, and every request asks for problem
//! details, whose `piece` member says which layer refused it.

#![cfg(all(feature = "config", feature = "metrics"))]

mod common;

#[allow(dead_code, reason = "the example's main uses what the test does not")]
#[path = "../examples/server/app.rs"]
mod app;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use ironward_tower::Cpu;
use ironward_tower::config::{Config, Protection};
use reqwest::StatusCode;

use common::Server;

/// Which piece answered, by `piece` member, or the status of a response that no layer refused.
type Tally = BTreeMap<String, u64>;

/// Sends one request as `client` and tallies who answered it: the refusing piece's name, or
/// `"ok"` for a 200, `"backend"` for the backend's own 502.
async fn send(request: reqwest::RequestBuilder, client: &str, tally: &mut Tally) -> StatusCode {
    let response = request
        .header("x-forwarded-for", client)
        .header("accept", "application/problem+json")
        .send()
        .await
        .expect("a response");
    let status = response.status();
    let who = match status {
        StatusCode::OK => "ok".to_owned(),
        StatusCode::BAD_GATEWAY => "backend".to_owned(),
        _ => {
            assert_eq!(
                response.headers()["content-type"],
                "application/problem+json"
            );
            let body: serde_json::Value =
                serde_json::from_str(&response.text().await.unwrap()).expect("problem details");
            assert_eq!(body["status"], status.as_u16());
            body["piece"].as_str().expect("a piece").to_owned()
        }
    };
    *tally.entry(who).or_default() += 1;
    status
}

/// Polls `ready` every 5 ms until it holds, for at most ten seconds.
async fn until(what: &str, ready: impl Fn() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "waited too long for {what}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// The scraped value of `ironward_requests` under exactly these labels, 0 when absent.
fn requests(scrape: &str, piece: &str, name: &str, outcome: &str, reason: Option<&str>) -> u64 {
    let mut labels = format!(r#"piece="{piece}",name="{name}",outcome="{outcome}""#);
    if let Some(reason) = reason {
        labels.push_str(&format!(r#",reason="{reason}""#));
    }
    let prefix = format!("ironward_requests{{{labels}}} ");
    scrape
        .lines()
        .find_map(|line| line.strip_prefix(&prefix))
        .map_or(0, |value| value.trim().parse().expect("a count"))
}

/// The scraped value of a gauge under `name="<name>"`.
fn gauge(scrape: &str, metric: &str, name: &str) -> f64 {
    let prefix = format!(r#"{metric}{{name="{name}"}} "#);
    scrape
        .lines()
        .find_map(|line| line.strip_prefix(&prefix))
        .expect("the gauge")
        .trim()
        .parse()
        .expect("a number")
}

/// The test's configuration: the pieces' names are the server section's, `server`.
const CONFIG: &str = r#"
[server]
gate = 2
deadline = "3s"

# Every completion sets the average to the count left in flight (beta 0), and a 1 ms
# assumed response time keeps the capacity at its floor: at 1000 per mille, 0.1 of one call.
[server.shed]
beta = 0.0
latency = "1ms"

# Twenty an hour per client, behind one proxy: nothing refills while the test runs.
[server.quota]
kind = "period"
quota = 20
period = "1h"
key = "client"
proxies = 1
proxy_header = "x-forwarded-for"
headers = true
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_counter_equals_what_the_clients_sent_and_saw() {
    let metrics = app::install_metrics();
    let (cpu, dial) = Cpu::scripted(0);
    let config = Config::from_toml(CONFIG).unwrap();
    let protection = Protection::builder().cpu(cpu).build(config);
    let (router, probe) = app::app(&protection, metrics, Duration::from_secs(60));
    let server = Server::start(router).await;
    let http = common::client();
    let url = |path: &str| server.url(path);
    let mut tally = Tally::new();
    let mut sent = 0;

    // The rate limit: 25 from one client, of which the quota admits 20.
    for _ in 0..25 {
        send(http.get(url("/hello")), "10.0.0.1", &mut tally).await;
        sent += 1;
    }
    assert_eq!(tally.get("rate_limit"), Some(&5));

    // The gate: two slow requests hold both places, so a third is refused; the deadline then
    // cuts the two.
    let slow: Vec<_> = (0..2)
        .map(|_| {
            let (http, url) = (http.clone(), url("/slow"));
            tokio::spawn(async move {
                let mut tally = Tally::new();
                send(http.get(url), "10.0.0.2", &mut tally).await;
                tally
            })
        })
        .collect();
    sent += 2;
    until("both places held", || probe.slow() == 2).await;
    send(http.get(url("/hello")), "10.0.0.2", &mut tally).await;
    sent += 1;
    for task in slow {
        for (who, n) in task.await.unwrap() {
            *tally.entry(who).or_default() += n;
        }
    }
    assert_eq!(tally.get("gate"), Some(&1));
    assert_eq!(tally.get("deadline"), Some(&2));

    // The breaker: the backend goes down, and the client-side breaker starts refusing.
    send(http.post(url("/backend/down")), "10.0.0.3", &mut tally).await;
    sent += 1;
    let upstream = 15;
    for _ in 0..upstream {
        send(http.get(url("/upstream")), "10.0.0.3", &mut tally).await;
        sent += 1;
    }
    let breaker_refused = tally.get("breaker").copied().unwrap_or(0);
    assert!(breaker_refused > 0, "{tally:?}");

    // The shedder: on a hot CPU, with one slow request in flight, a quick one passes and, on
    // leaving, sets the average to the one left; the next three are shed.
    dial.set(1000);
    let held = {
        let (http, url) = (http.clone(), url("/slow"));
        tokio::spawn(async move {
            let mut tally = Tally::new();
            send(http.get(url), "10.0.0.4", &mut tally).await;
            tally
        })
    };
    sent += 1;
    until("the slow request in flight", || probe.slow() == 1).await;
    let quick = send(http.get(url("/hello")), "10.0.0.4", &mut tally).await;
    assert_eq!(quick, StatusCode::OK);
    sent += 1;
    for _ in 0..3 {
        let shed = send(http.get(url("/hello")), "10.0.0.4", &mut tally).await;
        assert_eq!(shed, StatusCode::SERVICE_UNAVAILABLE);
        sent += 1;
    }
    dial.set(0);
    for (who, n) in held.await.unwrap() {
        *tally.entry(who).or_default() += n;
    }
    assert_eq!(tally.get("shed"), Some(&3));
    assert_eq!(tally.values().sum::<u64>(), sent);

    let scrape = http
        .get(url("/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let seen = |who: &str| tally.get(who).copied().unwrap_or(0);

    // Each layer saw what the one outside it let through, and refused what the clients saw it
    // refuse, under its own reason.
    let shed_admitted = sent - seen("shed");
    let rate_admitted = shed_admitted - seen("rate_limit");
    let gate_admitted = rate_admitted - seen("gate");
    let in_time = gate_admitted - seen("deadline");
    let counted = [
        (
            ("shed", "server", "refused", Some("overloaded")),
            seen("shed"),
        ),
        (("shed", "server", "refused", Some("cooling")), 0),
        (("shed", "server", "admitted", None), shed_admitted),
        (
            ("rate_limit", "server", "refused", Some("limited")),
            seen("rate_limit"),
        ),
        (("rate_limit", "server", "admitted", None), rate_admitted),
        (("gate", "server", "refused", Some("full")), seen("gate")),
        (("gate", "server", "admitted", None), gate_admitted),
        // A request cut inside its budget is refused as elapsed; none arrived without one.
        (
            ("deadline", "server", "refused", Some("elapsed")),
            seen("deadline"),
        ),
        (("deadline", "server", "refused", Some("exceeded")), 0),
        (("deadline", "server", "admitted", None), in_time),
        (
            ("breaker", "backend", "refused", Some("throttled")),
            breaker_refused,
        ),
        // Every call the breaker let through reached a backend that was down: a 502.
        (("breaker", "backend", "admitted", None), seen("backend")),
    ];
    for ((piece, name, outcome, reason), expected) in counted {
        assert_eq!(
            requests(&scrape, piece, name, outcome, reason),
            expected,
            "{piece} {name} {outcome} {reason:?}\n{scrape}"
        );
    }
    assert_eq!(seen("backend") + breaker_refused, upstream);
    assert_eq!(gauge(&scrape, "ironward_shed_in_flight", "server"), 0.0);
    let ratio = gauge(&scrape, "ironward_breaker_ratio", "backend");
    assert!(ratio > 0.0 && ratio <= 1.0, "{ratio}");
    // The breaker and the configured pieces were renamed after `new`: no series is left under
    // the name they were made with.
    let strays: Vec<_> = scrape
        .lines()
        .filter(|line| !line.starts_with('#') && line.contains(r#"name="default""#))
        .filter(|line| {
            line.starts_with("ironward_breaker_ratio")
                || line.contains(r#"piece="breaker""#)
                || line.contains(r#"piece="rate_limit""#)
                || line.contains(r#"piece="gate""#)
        })
        .collect();
    assert!(strays.is_empty(), "{strays:#?}");
}
