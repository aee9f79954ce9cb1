//! `config` over real HTTP: a server built from one file with every piece, each made to
//! refuse; reloads that lower and raise a quota while the server serves; an invalid reload
//! that leaves the old quota in force; the reloads counted.
#![cfg(feature = "config")]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::http::HeaderMap;
use axum::routing::get;
use ironward_tower::config::{ErrorKind, Protection};
use ironward_tower::{Clock, Cpu};
use tokio::sync::{Notify, mpsc};

use crate::common::{Server, client};

/// Every piece, from one file: the shedder and a long deadline for the server; a rate limit,
/// an adaptive limiter, a gate and a short deadline on routes of their own.
const EVERY_PIECE: &str = r#"
[server]
deadline = "30s"
[server.shed]
cpu = 900

[routes."/quota".quota]
kind = "bucket"
rate = 1.0
burst = 2.0
headers = true

[routes."/limited"]
limiter = { algorithm = { Aimd = { initial = 1, min = 1, max = 1 } } }

[routes."/gated"]
gate = 1

[routes."/slow"]
deadline = "200ms"
"#;

/// How long a test waits for anything the server does: long for a loaded machine, and only
/// ever a bound, never a pause.
const WAIT: Duration = Duration::from_secs(10);

/// The app: each route answers at once, or with the header `x-hold` waits for `release`
/// (telling `entered` it got in); `/slow` never answers in time.
fn app(entered: mpsc::UnboundedSender<()>, release: Arc<Notify>) -> Router {
    let hold = move |headers: HeaderMap| {
        let (entered, release) = (entered.clone(), Arc::clone(&release));
        async move {
            if headers.contains_key("x-hold") {
                let released = release.notified();
                let _ = entered.send(());
                released.await;
            }
            "ok"
        }
    };
    Router::new()
        .route("/", get(hold.clone()))
        .route("/quota", get(hold.clone()))
        .route("/limited", get(hold.clone()))
        .route("/gated", get(hold))
        .route(
            "/slow",
            get(|| async {
                tokio::time::sleep(Duration::from_secs(60)).await;
                "late"
            }),
        )
}

/// The value of the response's header `name`, as text.
fn field<'a>(response: &'a reqwest::Response, name: &str) -> &'a str {
    response.headers()[name].to_str().unwrap()
}

/// Waits for one held request to have got in.
async fn entered(rx: &mut mpsc::UnboundedReceiver<()>) {
    tokio::time::timeout(WAIT, rx.recv())
        .await
        .expect("a held request got in")
        .expect("the app lives");
}

#[tokio::test]
async fn every_piece_from_one_file_refuses_with_its_status_body_and_headers() {
    let (cpu, _dial) = Cpu::scripted(0);
    // Time stands still: the bucket never refills between requests, however slow the machine.
    let (clock, _hand) = Clock::manual(Duration::from_secs(1));
    let config = ironward_tower::config::Config::from_toml(EVERY_PIECE).unwrap();
    let protection = Protection::builder().cpu(cpu).clock(clock).build(config);
    let (tx, mut rx) = mpsc::unbounded_channel();
    let release = Arc::new(Notify::new());
    let server = Server::start(app(tx, Arc::clone(&release)).layer(protection.layer())).await;
    let client = client();
    let get = |path: &str| client.get(server.url(path));

    // The rate limit: two in the burst, told what is left; the third 429 with when to retry.
    for left in ["1", "0"] {
        let ok = get("/quota").send().await.unwrap();
        assert_eq!(ok.status(), 200);
        let fields = field(&ok, "ratelimit");
        assert!(fields.contains(&format!("r={left}")), "{fields}");
    }
    let limited = get("/quota").send().await.unwrap();
    assert_eq!(limited.status(), 429);
    assert_eq!(limited.headers()["retry-after"], "1");
    assert!(field(&limited, "ratelimit-policy").contains("\"/quota\""));
    assert!(limited.text().await.unwrap().contains("rate limit"));
    // The other routes have no rate limit: the route's own budget is its own.
    assert_eq!(get("/").send().await.unwrap().status(), 200);

    // The limiter: a limit of 1, held; the next is refused, in problem details when asked.
    let held = tokio::spawn(get("/limited").header("x-hold", "1").send());
    entered(&mut rx).await;
    let refused = get("/limited")
        .header("accept", "application/problem+json")
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 503);
    assert_eq!(
        refused.headers()["content-type"],
        "application/problem+json"
    );
    let problem: serde_json::Value = serde_json::from_str(&refused.text().await.unwrap()).unwrap();
    assert_eq!(problem["piece"], "limiter", "{problem}");

    // The gate: one inside, the next refused as text.
    let gated = tokio::spawn(get("/gated").header("x-hold", "1").send());
    entered(&mut rx).await;
    let full = get("/gated").send().await.unwrap();
    assert_eq!(full.status(), 503);
    assert!(field(&full, "content-type").starts_with("text/plain"));
    assert!(full.text().await.unwrap().contains("gate"));

    // The deadline: the route's 200 ms cut a handler of a minute.
    let cut = get("/slow").send().await.unwrap();
    assert_eq!(cut.status(), 504);
    assert!(cut.text().await.unwrap().contains("deadline"));

    release.notify_waiters();
    for held in [held, gated] {
        let response = tokio::time::timeout(WAIT, held)
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!(response.status(), 200);
    }
}

#[tokio::test]
async fn a_hot_full_server_is_shed_by_the_files_shedder() {
    // A shedder of its own, on the real clock, whose CPU is hot from the start.
    let (cpu, _dial) = Cpu::scripted(1000);
    let config = ironward_tower::config::Config::from_toml(EVERY_PIECE).unwrap();
    let protection = Protection::builder().cpu(cpu).build(config);
    let (tx, mut rx) = mpsc::unbounded_channel();
    let release = Arc::new(Notify::new());
    let server = Server::start(app(tx, Arc::clone(&release)).layer(protection.layer())).await;
    let client = client();
    let (done_tx, mut done) = mpsc::unbounded_channel();
    let hold = || {
        let (request, done) = (
            client.get(server.url("/")).header("x-hold", "1"),
            done_tx.clone(),
        );
        tokio::spawn(async move {
            let response = request.send().await.unwrap();
            let status = response.status();
            let _ = done.send((status, response.text().await.unwrap()));
        })
    };
    // Thirty held in flight while nothing has passed, then twenty of them let go one by one:
    // each lands with the many still in flight, which is what the shedder averages.
    for _ in 0..30 {
        hold();
        entered(&mut rx).await;
    }
    for _ in 0..20 {
        release.notify_one();
        let (status, _) = tokio::time::timeout(WAIT, done.recv())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(status, 200);
    }
    // Hot, and ten in flight against a capacity of one: the next is shed at once.
    hold();
    let (status, body) = tokio::time::timeout(WAIT, done.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status, 503);
    assert!(body.contains("load shedding"), "{body}");
    release.notify_waiters();
    for _ in 0..10 {
        let (status, _) = tokio::time::timeout(WAIT, done.recv())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(status, 200);
    }
}

/// A server whose one route has a sliding window of `quota` an hour, on a clock that stands
/// still, so that the window never slides during the test.
const WINDOW: &str = r#"
[routes."/quota".quota]
kind = "sliding"
quota = QUOTA
window = "1h"
"#;

fn window(quota: u32) -> String {
    WINDOW.replace("QUOTA", &quota.to_string())
}

/// A server on `protection`'s layer, with a fresh client.
async fn serve(protection: &Protection) -> (Server, reqwest::Client) {
    let (tx, _) = mpsc::unbounded_channel();
    let app = app(tx, Arc::new(Notify::new())).layer(protection.layer());
    (Server::start(app).await, client())
}

fn still() -> Clock {
    Clock::manual(Duration::from_secs(1)).0
}

/// The status of one request to `/quota`: admitted or limited, nothing else.
async fn quota_status(server: &Server, client: &reqwest::Client) -> u16 {
    let status = client
        .get(server.url("/quota"))
        .send()
        .await
        .unwrap()
        .status();
    assert!(status == 200 || status == 429, "{status}");
    status.as_u16()
}

/// Sends `n` requests to `/quota` one after another; how many were admitted.
async fn admitted(server: &Server, client: &reqwest::Client, n: usize) -> usize {
    let mut admitted = 0;
    for _ in 0..n {
        let status = quota_status(server, client).await;
        admitted += usize::from(status == 200);
    }
    admitted
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_that_lowers_a_quota_mid_traffic_never_over_admits() {
    let config = ironward_tower::config::Config::from_toml(&window(10)).unwrap();
    let protection = Protection::builder().clock(still()).build(config);
    let (server, client) = serve(&protection).await;
    let server = Arc::new(server);

    // Eight clients send 10 requests each, while the quota is lowered from 10 to 4 once 5
    // have been admitted: the window then holds at least 5, more than the new quota.
    let admitted = Arc::new(AtomicUsize::new(0));
    let lowered = Arc::new(AtomicBool::new(false));
    let after_reload = Arc::new(AtomicUsize::new(0));
    let five = Arc::new(Notify::new());
    let mut clients = Vec::new();
    for _ in 0..8 {
        let (server, client) = (Arc::clone(&server), client.clone());
        let (admitted, lowered, after) = (
            Arc::clone(&admitted),
            Arc::clone(&lowered),
            Arc::clone(&after_reload),
        );
        let five = Arc::clone(&five);
        clients.push(tokio::spawn(async move {
            for _ in 0..10 {
                // Whether this request was sent after the reload had returned.
                let late = lowered.load(Ordering::SeqCst);
                let status = quota_status(&server, &client).await;
                if status == 200 {
                    if admitted.fetch_add(1, Ordering::SeqCst) + 1 == 5 {
                        five.notify_one();
                    }
                    if late {
                        after.fetch_add(1, Ordering::SeqCst);
                    }
                }
            }
        }));
    }
    tokio::time::timeout(WAIT, five.notified())
        .await
        .expect("five admitted");
    protection.reload_str(&window(4)).unwrap();
    lowered.store(true, Ordering::SeqCst);
    for client in clients {
        tokio::time::timeout(WAIT, client).await.unwrap().unwrap();
    }
    // Before the reload the old quota allowed 10 at most; after it, the new one allows
    // max(0, 4 - what the window holds) = 0, since it holds 5 or more.
    let total = admitted.load(Ordering::SeqCst);
    assert!((5..=10).contains(&total), "{total} admitted");
    assert_eq!(
        after_reload.load(Ordering::SeqCst),
        0,
        "admitted after the lowering"
    );
    assert_eq!(self::admitted(&server, &client, 5).await, 0);
}

#[tokio::test]
async fn a_reload_that_raises_a_quota_admits_what_the_new_one_allows() {
    let config = ironward_tower::config::Config::from_toml(&window(3)).unwrap();
    let protection = Protection::builder().clock(still()).build(config);
    let (server, client) = serve(&protection).await;
    assert_eq!(admitted(&server, &client, 5).await, 3);
    protection.reload_str(&window(8)).unwrap();
    // The window kept the three it holds: five more, and no more.
    assert_eq!(admitted(&server, &client, 10).await, 5);
}

#[tokio::test]
async fn an_invalid_reload_leaves_the_old_quota_in_force() {
    let config = ironward_tower::config::Config::from_toml(&window(3)).unwrap();
    let protection = Protection::builder().clock(still()).build(config);
    let (server, client) = serve(&protection).await;
    assert_eq!(admitted(&server, &client, 4).await, 3);
    let before = protection.current();

    let invalid = protection.reload_str(&window(0)).unwrap_err();
    assert_eq!(invalid.kind(), ErrorKind::Invalid);
    assert_eq!(
        invalid.field(),
        Some("routes.\"/quota\".quota.quota"),
        "{invalid}"
    );
    let reshaped = protection
        .reload_str("[routes.\"/quota\".quota]\nkind = \"bucket\"\nrate = 100.0\nburst = 100.0\n")
        .unwrap_err();
    assert_eq!(reshaped.kind(), ErrorKind::Refused);
    assert_eq!(protection.current(), before);
    // The window of 3 is still in force, still full: nothing was reset.
    assert_eq!(admitted(&server, &client, 3).await, 0);
}

#[cfg(feature = "metrics")]
#[tokio::test]
async fn each_reload_is_counted_applied_or_refused() {
    let recording = crate::seen::Recording::start();
    let config = ironward_tower::config::Config::from_toml(&window(3)).unwrap();
    let protection = Protection::builder().clock(still()).build(config);
    // Both series are there from the start, at zero.
    let seen = recording.seen();
    assert!(
        seen.find("ironward.config.reloads", &[("outcome", "refused")])
            .is_some()
    );
    assert!(
        seen.find("ironward.config.reloads", &[("outcome", "applied")])
            .is_some()
    );
    protection.reload_str(&window(5)).unwrap();
    protection.reload_str(&window(6)).unwrap();
    assert!(protection.reload_str("[server]\ngate = 0\n").is_err());
    assert!(protection.reload_str("[server]\ngate = 1\n").is_err());
    // One snapshot: the recorder hands each count over once.
    let seen = recording.seen();
    let counted = |outcome| seen.counter("ironward.config.reloads", &[("outcome", outcome)]);
    assert_eq!((counted("applied"), counted("refused")), (2, 2));
}

/// Polls `done` every few milliseconds until it holds, for at most [`WAIT`].
async fn eventually(mut done: impl FnMut() -> bool) -> bool {
    let deadline = tokio::time::Instant::now() + WAIT;
    while tokio::time::Instant::now() < deadline {
        if done() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    done()
}

#[tokio::test]
async fn a_watched_file_is_reloaded_when_it_changes_and_a_bad_one_is_refused() {
    let dir = std::env::temp_dir().join(format!("ironward-watch-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("ironward.toml");
    std::fs::write(&path, window(3)).unwrap();
    let protection = Protection::builder()
        .clock(still())
        .build(ironward_tower::config::Config::from_file(&path).unwrap());
    let (server, client) = serve(&protection).await;
    // A zero interval is read as the shortest there is, not a panic.
    let watch = protection.watch(&path, Duration::ZERO);
    assert_eq!(admitted(&server, &client, 4).await, 3);

    std::fs::write(&path, window(5)).unwrap();
    let quota = |protection: &Protection| {
        protection.current().routes["/quota"]
            .quota
            .clone()
            .unwrap()
            .limit
    };
    assert!(
        eventually(
            || quota(&protection) == ironward_tower::Quota::sliding(5, Duration::from_secs(3600))
        )
        .await
    );
    assert_eq!(admitted(&server, &client, 4).await, 2);

    // A file that is no configuration: refused, and the quota of 5 stays.
    std::fs::write(
        &path,
        "[routes.\"/quota\".quota]\nkind = \"sliding\"\nquota = -1\n",
    )
    .unwrap();
    // The next good file is applied: the bad one was seen and passed over in between, or
    // never seen; either way the window of 5 held until then.
    assert_eq!(admitted(&server, &client, 2).await, 0);
    std::fs::write(&path, window(7)).unwrap();
    assert!(
        eventually(
            || quota(&protection) == ironward_tower::Quota::sliding(7, Duration::from_secs(3600))
        )
        .await
    );
    assert_eq!(admitted(&server, &client, 4).await, 2);
    drop(watch);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn routes_without_a_quota_share_the_servers_budget_and_a_routes_own_is_apart() {
    let text = format!(
        "[server.quota]\nkind = \"sliding\"\nquota = 2\nwindow = \"1h\"\n{}",
        window(1)
    );
    let config = ironward_tower::config::Config::from_toml(&text).unwrap();
    let protection = Protection::builder().clock(still()).build(config);
    let (server, client) = serve(&protection).await;
    let status = |path: &'static str| {
        let request = client.get(server.url(path));
        async move { request.send().await.unwrap().status().as_u16() }
    };
    // `/` and `/gated` draw on the server's two; `/quota` on its own one.
    assert_eq!(
        [status("/").await, status("/gated").await, status("/").await],
        [200, 200, 429]
    );
    assert_eq!([status("/quota").await, status("/quota").await], [200, 429]);
    // A path no route matches runs the server's stack too: its budget is spent.
    assert_eq!(status("/nowhere").await, 429);
}

#[tokio::test(start_paused = true)]
async fn a_reload_retunes_the_gate_and_the_deadline_of_a_running_stack() {
    use axum::body::Body;
    use http::Request;
    use tower::ServiceExt;

    let text = "[server]\ngate = 1\ndeadline = \"2m\"\n";
    let protection = Protection::from_toml(text).unwrap();
    let (tx, _rx) = mpsc::unbounded_channel();
    let release = Arc::new(Notify::new());
    let router = app(tx, Arc::clone(&release)).layer(protection.layer());
    let get = |path: &str, hold: bool| {
        let mut request = Request::get(path);
        if hold {
            request = request.header("x-hold", "1");
        }
        request.body(Body::empty()).unwrap()
    };
    // One request inside the gate of 1: the next is refused.
    let mut held = Box::pin(router.clone().oneshot(get("/", true)));
    assert!(futures_poll(&mut held).is_none());
    assert_eq!(status(&router, "/").await, 503);
    // A gate of 2: the one inside stays, and one more gets in.
    protection
        .reload_str(&text.replace("gate = 1", "gate = 2"))
        .unwrap();
    assert_eq!(status(&router, "/").await, 200);
    release.notify_waiters();
    assert_eq!(held.await.unwrap().status(), 200);

    // The minute-long handler fits the two minutes; after a reload to one second, it is cut.
    assert_eq!(status(&router, "/slow").await, 200);
    protection
        .reload_str(&text.replace("\"2m\"", "\"1s\""))
        .unwrap();
    let start = tokio::time::Instant::now();
    assert_eq!(status(&router, "/slow").await, 504);
    assert_eq!(start.elapsed(), Duration::from_secs(1));
}

/// The status `router` answers a plain GET of `path` with.
async fn status(router: &Router, path: &str) -> u16 {
    use tower::ServiceExt;

    let request = http::Request::get(path)
        .body(axum::body::Body::empty())
        .unwrap();
    router
        .clone()
        .oneshot(request)
        .await
        .unwrap()
        .status()
        .as_u16()
}

/// Polls `future` once with a no-op waker: its output, if it is ready.
fn futures_poll<F: std::future::Future + Unpin>(future: &mut F) -> Option<F::Output> {
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match std::pin::Pin::new(future).poll(&mut cx) {
        std::task::Poll::Ready(output) => Some(output),
        std::task::Poll::Pending => None,
    }
}
