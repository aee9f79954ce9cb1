//! `config`'s chaos piece: the file's `chaos` sections read, bad ones refused with the field
//! named, reloads that retune a running server's chaos keeping its numbering, and the
//! seeded replay through the stack the file builds, over a real server on 127.0.0.1.
#![cfg(feature = "config")]

use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::routing::get;
use http::Request;
use ironward::chaos::{self, Delay, Fault, Injector};
use ironward_tower::chaos::CHAOS_HEADER;
use ironward_tower::config::{Config, ErrorKind, Protection};
use tower::ServiceExt;

use crate::common::{Server, keeping_client};

/// Every fault kind, seeded: a 2 s deadline around the piece cuts the aborts.
const MIXED: &str = r#"
[server]
gate = 64
deadline = "2s"

[server.chaos]
enabled = true
seed = 2024
name = "staging"
faults = [
    { fault = "error", rate = 0.1 },
    { fault = { latency = { uniform = { low = "1ms", high = "5ms" } } }, rate = 0.1 },
    { fault = "abort", rate = 0.01 },
    { fault = "replace", rate = 0.1 },
]
"#;

/// One route answering `200 ok`, and one of its own, behind `protection`.
fn app(protection: &Protection) -> Router {
    Router::new()
        .route("/", get(|| async { "ok" }))
        .route("/own", get(|| async { "ok" }))
        .layer(protection.layer())
}

/// The status and the chaos header a request came back with.
type Outcome = (u16, Option<String>);

/// What the stack answers for the fault the core decides for `draw`.
fn expected(injector: &Injector, draw: f64) -> Outcome {
    match injector.decide(draw).map(|injected| injected.fault) {
        Some(Fault::Error) => (503, Some("error".into())),
        Some(Fault::Replace) => (500, Some("replace".into())),
        // The server's deadline, outside the piece, cuts the call that never answers.
        Some(Fault::Abort) => (504, None),
        None | Some(Fault::Latency(_)) => (200, None),
    }
}

async fn get_outcome(client: &reqwest::Client, url: &str) -> Outcome {
    let response = client.get(url).send().await.expect("a response in 10 s");
    let header = response
        .headers()
        .get(CHAOS_HEADER)
        .map(|value| value.to_str().unwrap().to_owned());
    (response.status().as_u16(), header)
}

#[test]
fn a_file_with_chaos_parses_and_writes_back_and_a_route_overrides_it() {
    let text = format!("{MIXED}\n[routes.\"/own\".chaos]\nshadow = true\n");
    let config = Config::from_toml(&text).unwrap();
    let chaos = config.server.chaos.as_ref().unwrap();
    assert_eq!(
        (chaos.seed, chaos.name.as_deref()),
        (Some(2024), Some("staging"))
    );
    assert!(chaos.policy.enabled && !chaos.policy.shadow);
    let faults: Vec<_> = chaos
        .policy
        .faults
        .iter()
        .map(|i| (i.fault, i.rate))
        .collect();
    let latency = Fault::Latency(Delay::Uniform {
        low: Duration::from_millis(1),
        high: Duration::from_millis(5),
    });
    assert_eq!(
        faults,
        [
            (Fault::Error, 0.1),
            (latency, 0.1),
            (Fault::Abort, 0.01),
            (Fault::Replace, 0.1)
        ]
    );
    // A route's own section replaces the server's; the others run the server's.
    let own = config.stack(Some("/own")).chaos.unwrap();
    assert!(own.policy.shadow && !own.policy.enabled && own.seed.is_none());
    assert_eq!(config.stack(Some("/other")).chaos.as_ref(), Some(chaos));
    // Written back in the form it is read in.
    assert_eq!(Config::from_toml(&config.to_toml()).unwrap(), config);
    // An empty section is a piece that is off.
    let off = Config::from_toml("[server.chaos]\n").unwrap();
    assert!(!off.server.chaos.unwrap().policy.enabled);
}

#[test]
fn a_bad_chaos_section_is_refused_naming_the_field() {
    let bad_rate = "[server]\ngate = 4\n\n[server.chaos]\nenabled = true\n\
                    faults = [{ fault = \"error\", rate = 1.5 }]\n";
    let err = Config::from_toml(bad_rate).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Invalid);
    assert_eq!(err.field(), Some("server.chaos.faults[0].rate"), "{err}");
    assert_eq!((err.line(), err.column()), (Some(6), Some(37)), "{err}");
    assert!(err.message().contains("1.5 is no chaos rate"), "{err}");
    assert!(
        err.to_string()
            .starts_with("6:37: server.chaos.faults[0].rate: 1.5"),
        "{err}"
    );

    // A route's rate names the route's field; a fault written as a table of its own too.
    let route = "[routes.\"/x\".chaos]\nfaults = [{ fault = \"error\", rate = 0.1 }, \
                 { fault = \"abort\", rate = -0.1 }]\n";
    let err = Config::from_toml(route).unwrap_err();
    assert_eq!(
        err.field(),
        Some("routes.\"/x\".chaos.faults[1].rate"),
        "{err}"
    );
    assert!(err.message().contains("-0.1 is no chaos rate"), "{err}");
    let tables = "[server.chaos]\nenabled = true\n\n[[server.chaos.faults]]\nfault = \"error\"\n\
                  rate = 0.1\n\n[[server.chaos.faults]]\nfault = \"replace\"\nrate = 7\n";
    let err = Config::from_toml(tables).unwrap_err();
    assert_eq!(err.field(), Some("server.chaos.faults[1].rate"), "{err}");
    assert_eq!(err.line(), Some(10), "{err}");

    let cases = [
        (
            "faults = [{ fault = \"error\", rate = nan }]",
            "NaN is no chaos rate",
        ),
        (
            "faults = [{ fault = \"error\", rate = 0.7 }, { fault = \"abort\", rate = 0.7 }]",
            "add up to",
        ),
        (
            "faults = [{ fault = { latency = { uniform = { low = \"3s\", high = \"1s\" } } }, rate = 0.1 }]",
            "low above its high",
        ),
        ("name = \"\"", "`name` is empty"),
        ("seed = -1", "-1"),
        ("rates = 0.1", "unknown field `rates`"),
        ("faults = [{ fault = \"explode\", rate = 0.1 }]", "explode"),
    ];
    for (line, says) in cases {
        let text = format!("[server.chaos]\nenabled = true\n{line}\n");
        let err = Config::from_toml(&text).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Invalid, "{line}");
        assert!(
            err.field()
                .is_some_and(|field| field.starts_with("server.chaos")),
            "{line}: {err}"
        );
        assert!(err.message().contains(says), "{line}: {err}");
    }
}

#[tokio::test]
async fn a_reload_changes_the_policy_live_and_refuses_what_needs_a_restart() {
    let protection = Protection::from_toml(MIXED).unwrap();
    let piece = protection.chaos(None).unwrap();
    assert_eq!((piece.name(), piece.seed()), ("staging", Some(2024)));
    let retuned = MIXED.replace("rate = 0.1 }", "rate = 0.2 }");
    protection.reload_str(&retuned).unwrap();
    assert_eq!(piece.policy().faults[0].rate, 0.2);

    let refused = [
        (MIXED.replace("seed = 2024", "seed = 7"), "seed"),
        (
            MIXED.replace("name = \"staging\"", "name = \"prod\""),
            "name",
        ),
        (
            "[server]\ngate = 64\ndeadline = \"2s\"\n".to_owned(),
            "`chaos` is removed",
        ),
    ];
    for (text, says) in refused {
        let err = protection.reload_str(&text).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Refused, "{says}");
        assert!(err.message().contains(says), "{err}");
        assert_eq!(piece.policy().faults[0].rate, 0.2, "refused whole");
    }
    let bare = Protection::from_toml("[server]\ngate = 64\n").unwrap();
    assert!(bare.chaos(None).is_none());
    let err = bare
        .reload_str("[server]\ngate = 64\n[server.chaos]\n")
        .unwrap_err();
    assert!(err.message().contains("`chaos` is added"), "{err}");
    // A bad rate in a reload is the file's error, and the policy in force stays.
    let err = protection
        .reload_str(&MIXED.replace("rate = 0.01", "rate = 2.0"))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Invalid);
    assert_eq!(piece.policy().faults[0].rate, 0.2);
}

#[tokio::test]
async fn routes_share_the_servers_piece_and_a_routes_own_is_apart() {
    let text = "[server.chaos]\nenabled = true\nfaults = [{ fault = \"error\", rate = 1.0 }]\n\
                [routes.\"/own\".chaos]\n";
    let protection = Protection::from_toml(text).unwrap();
    let app = app(&protection);
    for (path, status) in [("/", 503), ("/own", 200), ("/", 503), ("/nowhere", 503)] {
        let request = Request::get(path).body(Body::empty()).unwrap();
        let response = app.clone().oneshot(request).await.unwrap();
        assert_eq!(response.status().as_u16(), status, "{path}");
    }
    let (server, own) = (
        protection.chaos(None).unwrap(),
        protection.chaos(Some("/own")).unwrap(),
    );
    // The unmatched request ran the server's stack too, chaos and all (a 404 made a 503):
    // three requests, three errors.
    assert_eq!((server.requests(), server.injected()), (3, 3));
    assert_eq!((own.name(), own.requests(), own.injected()), ("/own", 1, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_retunes_a_running_servers_chaos_keeping_the_numbering() {
    let first = "[server]\ndeadline = \"5s\"\n[server.chaos]\nenabled = true\nseed = 5\n\
                 faults = [{ fault = \"error\", rate = 0.5 }]\n";
    let second = first.replace("\"error\"", "\"replace\"");
    let off = first.replace("enabled = true", "enabled = false");
    let protection = Protection::from_toml(first).unwrap();
    let server = Server::start(app(&protection)).await;
    let client = keeping_client();
    let url = server.url("/");
    let mut request = 0;
    for (text, n) in [(None, 40), (Some(&second), 40), (Some(&off), 20)] {
        if let Some(text) = text {
            protection.reload_str(text).unwrap();
        }
        let policy = protection.current().server.chaos.clone().unwrap().policy;
        let injector = Injector::new(policy).unwrap();
        for _ in 0..n {
            // Request i draws `chaos::draw(5, i)` under the policy in force when it arrives,
            // its number going on across the reloads.
            let want = expected(&injector, chaos::draw(5, request));
            assert_eq!(get_outcome(&client, &url).await, want, "request {request}");
            request += 1;
        }
    }
    let piece = protection.chaos(None).unwrap();
    assert_eq!(piece.requests(), 100);
    let faults = |fault: &str, range: std::ops::Range<u64>| {
        let policy = Config::from_toml(&first.replace("\"error\"", fault))
            .unwrap()
            .server
            .chaos
            .unwrap()
            .policy;
        let injector = Injector::new(policy).unwrap();
        range
            .filter(|&i| injector.decide(chaos::draw(5, i)).is_some())
            .count() as u64
    };
    let (errors, replaced) = (faults("\"error\"", 0..40), faults("\"replace\"", 40..80));
    assert!(
        errors > 5 && replaced > 5,
        "{errors} errors, {replaced} replaced"
    );
    assert_eq!(piece.injected(), errors + replaced);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_replay_holds_through_the_config_built_stack_for_300_requests() {
    let protection = Protection::from_toml(MIXED).unwrap();
    let policy = protection.current().server.chaos.clone().unwrap().policy;
    let injector = Injector::new(policy).unwrap();
    let server = Server::start(app(&protection)).await;
    let client = keeping_client();
    let url = server.url("/");
    let mut seen = [0_u32; 4];
    for i in 0..300 {
        let want = expected(&injector, chaos::draw(2024, i));
        assert_eq!(get_outcome(&client, &url).await, want, "request {i}");
        if let Some(injected) = injector.decide(chaos::draw(2024, i)) {
            seen[injected.index] += 1;
        }
    }
    // Each kind of fault was in the run, so the comparison covered each.
    assert!(seen.iter().all(|&n| n > 0), "{seen:?}");
    let piece = protection.chaos(None).unwrap();
    assert_eq!(piece.requests(), 300);
    assert_eq!(piece.injected(), u64::from(seen.iter().sum::<u32>()));
}

#[tokio::test]
async fn a_policy_made_bad_in_code_is_refused_by_a_reload_and_built_off() {
    let mut bad = Config::from_toml(MIXED).unwrap();
    bad.server.chaos.as_mut().unwrap().policy.faults[0].rate = 2.0;
    // Built: the piece is off, never a panic, and the server serves.
    let protection = Protection::new(bad.clone());
    let piece = protection.chaos(None).unwrap();
    assert!(!piece.policy().enabled);
    let request = Request::get("/").body(Body::empty()).unwrap();
    let response = app(&protection).oneshot(request).await.unwrap();
    assert_eq!(response.status(), 200);
    // Reloaded: refused whole, naming the section and the core's reason.
    let good = Protection::from_toml(MIXED).unwrap();
    let err = good.reload(bad).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refused);
    assert!(
        err.message().contains("in [server], the chaos policy"),
        "{err}"
    );
    assert!(err.message().contains("rate 2"), "{err}");
    assert!(good.chaos(None).unwrap().policy().enabled);
}
