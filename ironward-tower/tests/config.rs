//! `config`: the file's records, the errors a wrong file gets (the field, the line, the
//! column), and the rules of a reload, without a server.
#![cfg(feature = "config")]

use std::time::Duration;

use ironward::SHED;
use ironward_tower::config::{Config, ConfigError, ErrorKind, Protection, QuotaKey};
use ironward_tower::{ClientAddr, ProxyHeader, Quota};

/// Every piece, in the server's section and a route's.
const FULL: &str = r#"
[server]
gate = 256
deadline = "2s"

[server.shed]
cpu = 900

[server.quota]
kind = "bucket"
rate = 10.0
burst = 20.0
key = "client"
proxies = 2
proxy_header = "forwarded"
max_keys = 500
headers = true

[routes."/slow"]
deadline = "30s"
limiter = { algorithm = { Vegas = {} } }
queue = { initial = 1.0, max = 2.0, wait = "500ms" }

[routes."/search".quota]
kind = "period"
quota = 1000
period = "1d"
align = true
key = "header"
header = "X-Api-Key"
"#;

/// The error `text` gets, which must be one.
fn error(text: &str) -> ConfigError {
    match Config::from_toml(text) {
        Ok(config) => panic!("read as {config:?}"),
        Err(err) => err,
    }
}

/// Asserts that `err` is about `field` at `line`:`column`, and says `words`.
#[track_caller]
fn at(err: &ConfigError, field: &str, line: usize, column: usize, words: &str) {
    assert_eq!(err.kind(), ErrorKind::Invalid, "{err}");
    assert_eq!(err.field(), Some(field), "{err}");
    assert_eq!(
        (err.line(), err.column()),
        (Some(line), Some(column)),
        "{err}"
    );
    assert!(err.message().contains(words), "{err}");
}

#[test]
fn every_piece_is_read_with_its_numbers() {
    let config = Config::from_toml(FULL).unwrap();
    let server = &config.server;
    assert_eq!(server.gate, Some(256));
    assert_eq!(server.deadline, Some(Duration::from_secs(2)));
    assert_eq!(server.shed.as_ref().unwrap().cpu, 900);
    // The fields left out are the core's defaults.
    assert_eq!(server.shed.as_ref().unwrap().window, SHED.window);
    let quota = server.quota.as_ref().unwrap();
    assert_eq!(quota.limit, Quota::bucket(10.0, 20.0));
    let client = ClientAddr {
        proxies: 2,
        header: ProxyHeader::Forwarded,
    };
    assert_eq!(
        (quota.key.clone(), quota.max_keys, quota.headers),
        (QuotaKey::Client(client), 500, true)
    );

    let slow = &config.routes["/slow"];
    assert_eq!(slow.deadline, Some(Duration::from_secs(30)));
    let queue = slow.queue.unwrap();
    assert_eq!(
        (queue.initial, queue.max, queue.wait),
        (1.0, 2.0, Duration::from_millis(500))
    );
    let search = config.routes["/search"].quota.as_ref().unwrap();
    assert_eq!(
        search.limit,
        Quota::aligned(1000, Duration::from_secs(86_400))
    );
    // Header names are case-insensitive, and kept as HTTP has them: lower case.
    assert_eq!(
        search.key,
        QuotaKey::Header(http::HeaderName::from_static("x-api-key"))
    );
}

#[test]
fn a_route_runs_its_own_pieces_and_the_servers_for_the_rest() {
    let config = Config::from_toml(FULL).unwrap();
    let slow = config.stack(Some("/slow"));
    // The route's limiter is its concurrency limit, in place of the server's gate.
    assert_eq!((slow.gate, slow.limiter.is_some()), (None, true));
    assert_eq!(slow.deadline, Some(Duration::from_secs(30)));
    assert_eq!(slow.quota, config.server.quota);
    let search = config.stack(Some("/search"));
    assert_eq!(
        (search.gate, search.deadline),
        (Some(256), Some(Duration::from_secs(2)))
    );
    assert_ne!(search.quota, config.server.quota);
    // A route without a section, and a request no route matched, run the server's stack.
    assert_eq!(config.stack(Some("/other")), config.server);
    assert_eq!(config.stack(None), config.server);
}

#[test]
fn what_is_written_back_reads_the_same() {
    let config = Config::from_toml(FULL).unwrap();
    let toml = config.to_toml();
    assert_eq!(Config::from_toml(&toml).unwrap(), config, "{toml}");
    // Any serde format reads the records, with the same checks.
    let json = serde_json::to_string(&config).unwrap();
    assert_eq!(
        serde_json::from_str::<Config>(&json).unwrap(),
        config,
        "{json}"
    );
    let refused = serde_json::from_str::<Config>(r#"{"server": {"gate": 0}}"#).unwrap_err();
    assert!(refused.to_string().contains("admits nothing"), "{refused}");
}

#[test]
fn an_empty_file_is_a_stack_with_no_pieces() {
    assert_eq!(Config::from_toml("").unwrap(), Config::default());
}

#[test]
fn an_unknown_field_is_named_where_it_is() {
    let err = error("[server]\ngate = 4\ngates = 5\n");
    at(&err, "server.gates", 3, 1, "unknown field `gates`");
    let err = error("[server.quota]\nkind = \"bucket\"\nrate = 1.0\nburst = 1.0\nburts = 2.0\n");
    at(&err, "server.quota.burts", 5, 1, "unknown field `burts`");
    let err = error("[client]\ntimeout = \"1s\"\n");
    at(&err, "client.timeout", 2, 1, "unknown field `timeout`");
    // Settings read whole but invalid together are named where they are.
    let err = error("[client]\ndeadline = \"1s\"\n[client.retry]\nmax_retries = 5000\n");
    at(&err, "client.retry", 3, 1, "retry settings are invalid");
}

#[test]
fn a_value_of_the_wrong_type_is_named_where_it_is() {
    let err = error("[server]\ngate = \"many\"\n");
    at(&err, "server.gate", 2, 8, "string");
    let err = error("[server]\ndeadline = 2\n");
    at(&err, "server.deadline", 2, 12, "duration");
}

#[test]
fn a_rate_that_is_nan_negative_zero_or_infinite_is_refused() {
    for (rate, words) in [
        ("nan", "NaN is no rate"),
        ("-1.0", "-1 is no rate"),
        ("0", "0 is no rate"),
        ("inf", "inf is no rate"),
    ] {
        let err = error(&format!(
            "[server.quota]\nkind = \"bucket\"\nrate = {rate}\nburst = 1.0\n"
        ));
        at(&err, "server.quota.rate", 3, 8, words);
    }
    let err = error("[server.quota]\nkind = \"bucket\"\nrate = 1.0\nburst = 0.5\n");
    at(&err, "server.quota.burst", 4, 9, "0.5 is no burst");
}

#[test]
fn a_count_of_zero_or_past_u32_is_refused() {
    at(
        &error("[server]\ngate = 0\n"),
        "server.gate",
        2,
        8,
        "admits nothing",
    );
    at(&error("[server]\ngate = -3\n"), "server.gate", 2, 8, "-3");
    at(
        &error("[server]\ngate = 4294967296\n"),
        "server.gate",
        2,
        8,
        "over the most",
    );
    let err = error("[server.quota]\nkind = \"sliding\"\nquota = 0\nwindow = \"1s\"\n");
    at(&err, "server.quota.quota", 3, 9, "admits nothing");
    let err = error(
        "[server.quota]\nkind = \"sliding\"\nquota = 1\nwindow = \"1s\"\nkey = \"peer\"\nmax_keys = 0\n",
    );
    at(&err, "server.quota.max_keys", 6, 12, "0 keys");
}

#[test]
fn a_bad_duration_is_refused() {
    at(
        &error("[server]\ndeadline = \"2 s\"\n"),
        "server.deadline",
        2,
        12,
        "",
    );
    at(
        &error("[server]\ndeadline = \"-1s\"\n"),
        "server.deadline",
        2,
        12,
        "",
    );
    let err = error("[server.quota]\nkind = \"sliding\"\nquota = 1\nwindow = \"0s\"\n");
    at(&err, "server.quota.window", 4, 10, "counts nothing");
    let err = error("[routes.\"/x\"]\nqueue = { wait = \"soon\" }\nlimiter = {}\n");
    at(&err, "routes.\"/x\".queue.wait", 2, 18, "");
}

#[test]
fn both_gate_and_limiter_in_one_section_are_refused() {
    let err = error("[server]\ngate = 4\nlimiter = {}\n");
    assert_eq!(err.field(), Some("server"), "{err}");
    assert!(
        err.message().contains("`gate` and `limiter` are both set"),
        "{err}"
    );
    let err = error("[routes.\"/a\"]\nqueue = {}\n");
    assert!(
        err.message().contains("`queue` is set without a `limiter`"),
        "{err}"
    );
}

#[test]
fn a_bad_client_or_header_key_is_refused() {
    let quota = "[server.quota]\nkind = \"bucket\"\nrate = 1.0\nburst = 1.0\n";
    // A proxy count is a small number: 255 proxies of your own at most.
    let err = error(&format!("{quota}key = \"client\"\nproxies = 300\n"));
    at(&err, "server.quota.proxies", 6, 11, "300");
    let err = error(&format!(
        "{quota}key = \"client\"\nproxies = 1\nproxy_header = \"x-real-ip\"\n"
    ));
    at(&err, "server.quota.proxy_header", 7, 16, "x-real-ip");
    let err = error(&format!(
        "{quota}key = \"header\"\nheader = \"x api key\"\n"
    ));
    at(&err, "server.quota.header", 6, 10, "no header name");
    // A field the key does not read is an error, not ignored.
    let err = error(&format!("{quota}key = \"peer\"\nheader = \"x-api-key\"\n"));
    assert!(
        err.message()
            .contains("`header` is not read by `key = \"peer\"`"),
        "{err}"
    );
    assert_eq!(err.field(), Some("server.quota"), "{err}");
    let err = error(&format!("{quota}key = \"client\"\n"));
    assert!(err.message().contains("needs `proxies`"), "{err}");
}

#[test]
fn a_field_the_quotas_kind_does_not_read_is_refused() {
    let err = error("[server.quota]\nkind = \"sliding\"\nquota = 5\nwindow = \"1s\"\nrate = 1.0\n");
    assert!(
        err.message()
            .contains("`rate` is not read by `kind = \"sliding\"`"),
        "{err}"
    );
    let err = error("[server.quota]\nkind = \"bucket\"\nrate = 1.0\n");
    assert!(err.message().contains("needs `burst`"), "{err}");
    let err = error("[server.quota]\nkind = \"leaky\"\n");
    at(&err, "server.quota.kind", 2, 8, "unknown variant `leaky`");
}

#[test]
fn a_queue_of_negative_or_crossed_factors_is_refused() {
    let err = error("[server]\nlimiter = {}\nqueue = { initial = -1.0 }\n");
    at(
        &err,
        "server.queue.initial",
        3,
        21,
        "-1 is no multiple of the limit",
    );
    let err = error("[server]\nlimiter = {}\nqueue = { initial = 3.0, max = 2.0 }\n");
    assert!(
        err.message()
            .contains("`initial` (3) is over its `max` (2)"),
        "{err}"
    );
}

#[test]
fn a_route_is_named_by_its_path() {
    let err = error("[routes.api]\ngate = 1\n");
    assert!(err.message().contains("does not start with `/`"), "{err}");
}

#[test]
fn bad_toml_gives_its_line_and_column() {
    let err = error("[server]\ngate = \n");
    assert_eq!(err.kind(), ErrorKind::Invalid);
    assert_eq!(err.line(), Some(2), "{err}");
}

#[test]
fn a_file_that_cannot_be_read_says_which() {
    let err = Config::from_file("/nonexistent/ironward.toml").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Read);
    assert_eq!(
        err.file(),
        Some(std::path::Path::new("/nonexistent/ironward.toml"))
    );
    assert!(
        err.to_string().starts_with("/nonexistent/ironward.toml: "),
        "{err}"
    );
}

#[test]
fn an_error_in_a_file_names_the_file_line_and_field() {
    let dir = std::env::temp_dir().join(format!("ironward-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.toml");
    std::fs::write(&path, "[server]\n\ngate = 0\n").unwrap();
    let err = Config::from_file(&path).unwrap_err();
    let shown = err.to_string();
    assert!(
        shown.starts_with(&format!("{}:3:8: server.gate: ", path.display())),
        "{shown}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A server with a bucket, a gate and a deadline; a route with a window and a limiter.
const LIVE: &str = r#"
[server]
gate = 8
deadline = "2s"
[server.quota]
kind = "bucket"
rate = 10.0
burst = 20.0

[routes."/a"]
limiter = {}
[routes."/a".quota]
kind = "sliding"
quota = 5
window = "1s"
"#;

/// The refusal `reload` gets for `text`, which must be one; the configuration in force is
/// checked to be `LIVE`'s still.
#[track_caller]
fn refused(protection: &Protection, text: &str, words: &str) {
    let before = protection.current();
    let err = protection.reload_str(text).unwrap_err();
    assert!(err.message().contains(words), "{err}");
    assert_eq!(protection.current(), before);
}

#[tokio::test]
async fn a_reload_changes_every_number_and_reads_back() {
    let protection = Protection::from_toml(LIVE).unwrap();
    let next = LIVE
        .replace("gate = 8", "gate = 3")
        .replace("\"2s\"", "\"500ms\"")
        .replace("rate = 10.0", "rate = 1.0")
        .replace("quota = 5", "quota = 2")
        .replace("limiter = {}", "limiter = {}\nqueue = { wait = \"1s\" }");
    protection.reload_str(&next).unwrap();
    let current = protection.current();
    assert_eq!(*current, Config::from_toml(&next).unwrap());
    assert_eq!(current.server.gate, Some(3));
    assert!(current.routes["/a"].queue.is_some());
    // The queue can go again: it is a number of the limiter's, `None` for none.
    protection.reload_str(LIVE).unwrap();
    assert!(protection.current().routes["/a"].queue.is_none());
}

#[tokio::test]
async fn a_reload_that_changes_the_shape_is_refused_and_says_why() {
    let protection = Protection::from_toml(LIVE).unwrap();
    refused(
        &protection,
        &LIVE.replace("deadline = \"2s\"\n", ""),
        "`deadline` is removed",
    );
    refused(
        &protection,
        &format!("{LIVE}[server.shed]\n"),
        "`shed` is added",
    );
    refused(
        &protection,
        &LIVE.replace("gate = 8", "limiter = {}"),
        "`limiter` is added",
    );
    refused(
        &protection,
        &LIVE
            .replace("kind = \"bucket\"", "kind = \"period\"")
            .replace("rate = 10.0\nburst = 20.0", "quota = 3\nperiod = \"1s\""),
        "from a token bucket to a fixed period",
    );
    refused(
        &protection,
        &LIVE.replace("burst = 20.0", "burst = 20.0\nkey = \"peer\""),
        "key changes",
    );
    refused(
        &protection,
        &format!("{LIVE}[routes.\"/b\"]\ngate = 1\n"),
        "the route \"/b\" is new",
    );
    refused(
        &protection,
        &format!("{LIVE}[routes.\"/b\"]\ngate = 1\n"),
        "restart the server",
    );
    let err = protection.reload_str("[server]\ngate = 0\n").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Invalid);
    assert_eq!(
        protection.current(),
        Protection::from_toml(LIVE).unwrap().current()
    );
}

#[tokio::test]
async fn a_refused_reload_changes_no_piece_even_when_an_earlier_section_would_apply() {
    // The server's numbers change, and a route's shape: the whole reload is refused, so the
    // server's gate keeps its old limit too.
    let protection = Protection::from_toml(LIVE).unwrap();
    let text = LIVE
        .replace("gate = 8", "gate = 1")
        .replace("limiter = {}", "gate = 2");
    let err = protection.reload_str(&text).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refused, "{err}");
    assert_eq!(protection.current().server.gate, Some(8));
}

/// A limiter of exactly one, its whole limit reserved to the critical class, a quarter to
/// the sheddable (the stack reads every request as critical).
const PARTITIONED: &str = r#"
[server.limiter]
algorithm = { Aimd = { initial = 1, min = 1, max = 1 } }
partitions = { critical = 1.0, sheddable = 0.25 }
"#;

/// The text a refusal of `router` says, for a plain GET of `/`, which must be a 503.
async fn limiter_refusal(router: &axum::Router) -> String {
    use tower::ServiceExt;

    let request = http::Request::get("/")
        .header("accept", "text/plain")
        .body(axum::body::Body::empty())
        .unwrap();
    let response = router.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), 503);
    let body = axum::body::to_bytes(response.into_body(), 1 << 16)
        .await
        .unwrap();
    String::from_utf8(body.to_vec()).unwrap()
}

// `partitions` is a field of the limiter's record (the core's `Adaptive`): read, written
// back, and reloaded live as a number of the limiter's, on and off; the refusal then says
// which rule refused.
#[tokio::test(start_paused = true)]
async fn a_limiters_partitions_read_and_reload_from_the_file() {
    use std::future::Future;

    use ironward::Partitions;
    use tower::ServiceExt;

    let config = Config::from_toml(PARTITIONED).unwrap();
    let limiter = config.server.limiter.unwrap();
    assert_eq!(
        limiter.partitions,
        Some(Partitions {
            critical: 1.0,
            sheddable: 0.25,
            ..Partitions::NONE
        })
    );
    assert_eq!(Config::from_toml(&config.to_toml()).unwrap(), config);

    let protection = Protection::from_toml(PARTITIONED).unwrap();
    let router = axum::Router::new()
        .route("/", axum::routing::get(|| async { "ok" }))
        .route("/hang", axum::routing::get(std::future::pending::<&str>))
        .layer(protection.layer());
    let hang = http::Request::get("/hang")
        .body(axum::body::Body::empty())
        .unwrap();
    let mut held = Box::pin(router.clone().oneshot(hang));
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    assert!(held.as_mut().poll(&mut cx).is_pending());
    assert!(
        limiter_refusal(&router).await.ends_with(
            "1 in flight fill the limit of 1, and its class's 1 fill its reservation of 1\n"
        ),
        "refused by the critical class's reservation"
    );

    // Without partitions: the ceilings, and the refusal says so.
    let ceilings = PARTITIONED.replace("partitions = { critical = 1.0, sheddable = 0.25 }\n", "");
    protection.reload_str(&ceilings).unwrap();
    assert_eq!(
        protection.current().server.limiter.unwrap().partitions,
        None
    );
    assert!(
        limiter_refusal(&router)
            .await
            .ends_with("1 in flight fill its room of 1 (limit 1)\n")
    );
    // And back, with other fractions.
    let half = PARTITIONED.replace("critical = 1.0", "critical = 0.5");
    protection.reload_str(&half).unwrap();
    let partitions = protection.current().server.limiter.unwrap().partitions;
    assert_eq!(partitions.map(|p| p.critical), Some(0.5));
    assert!(
        limiter_refusal(&router)
            .await
            .contains("fill its reservation of 1")
    );
    drop(held);
}
