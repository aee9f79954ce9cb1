//! `QuotaLayer::by_client` over real HTTP: an axum server on a loopback port, reached
//! through a pretend proxy (one TCP peer, 127.0.0.1, sending the chain a proxy would), keyed
//! by the client that `Forwarded` (RFC 7239) or `X-Forwarded-For` names from the right.

use crate::common;

use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::error_handling::HandleErrorLayer;
use axum::extract::ConnectInfo;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use http::{Request, Response as HttpResponse, StatusCode};
use ironward_tower::{ClientAddr, Limited, ProxyHeader, Quota, QuotaLayer};
use tower::util::MapRequestLayer;
use tower::{Layer, Service, ServiceExt, service_fn};

use common::{Server, client};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

async fn refuse(err: BoxError) -> Response {
    match err.downcast_ref::<Limited>() {
        Some(limited) => limited.into_response(),
        None => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}

/// Without the `axum` feature the layer reads only a bare `SocketAddr` as the peer: copy
/// axum's `ConnectInfo` into one, as a hyper server would insert it.
fn bare_peer(mut request: Request<Body>) -> Request<Body> {
    if let Some(&ConnectInfo(peer)) = request.extensions().get::<ConnectInfo<SocketAddr>>() {
        request.extensions_mut().insert(peer);
    }
    request
}

/// A route allowing two requests an hour for each client `client` reads, and the server
/// running it.
async fn serve(client: ClientAddr) -> (Server, QuotaLayer) {
    let limit = QuotaLayer::by_client(Quota::period(2, Duration::from_secs(3600)), 1000, client);
    let app = Router::new()
        .route("/", get(|| async { "hello" }))
        .layer((HandleErrorLayer::new(refuse), limit.clone()));
    let app = if cfg!(feature = "axum") {
        app
    } else {
        app.layer(MapRequestLayer::new(bare_peer))
    };
    (Server::start(app).await, limit)
}

/// The status of a GET of `/` from the one TCP peer, with the header fields `fields`.
async fn status(server: &Server, fields: &[(&str, &str)]) -> StatusCode {
    let mut request = client().get(server.url("/"));
    for &(name, value) in fields {
        request = request.header(name, value);
    }
    request.send().await.unwrap().status()
}

fn xff(chain: &str) -> [(&'static str, &str); 1] {
    [("x-forwarded-for", chain)]
}

// Two clients behind one proxy share its TCP peer, yet each has a quota of its own; a client
// that writes a left-most entry of its own is still the entry the proxy appended.
#[tokio::test]
async fn clients_behind_one_proxy_get_separate_quotas_and_a_forged_entry_buys_none() {
    let (server, limit) = serve(ClientAddr::behind(1)).await;
    for client in ["192.0.2.1", "192.0.2.2"] {
        for _ in 0..2 {
            assert_eq!(
                status(&server, &xff(client)).await,
                StatusCode::OK,
                "{client}"
            );
        }
        assert_eq!(
            status(&server, &xff(client)).await,
            StatusCode::TOO_MANY_REQUESTS,
            "{client}"
        );
    }
    for forged in [
        "6.6.6.6, 192.0.2.1",
        "7.7.7.7,192.0.2.1",
        "garbage, , 192.0.2.2",
    ] {
        assert_eq!(
            status(&server, &xff(forged)).await,
            StatusCode::TOO_MANY_REQUESTS,
            "{forged}"
        );
    }
    assert_eq!(limit.keys(), 2);
    assert_eq!(status(&server, &xff("192.0.2.3")).await, StatusCode::OK);
}

// A request without a chain, or whose trusted entry is not an address (RFC 7239 §6.2), is
// limited as the proxy, the TCP peer: one budget for all such requests.
#[tokio::test]
async fn requests_without_a_usable_chain_share_the_proxy_budget() {
    let (server, limit) = serve(ClientAddr::behind(1)).await;
    assert_eq!(status(&server, &[]).await, StatusCode::OK);
    assert_eq!(
        status(&server, &[("forwarded", "for=unknown")]).await,
        StatusCode::OK
    );
    assert_eq!(
        status(&server, &xff("not an address")).await,
        StatusCode::TOO_MANY_REQUESTS
    );
    assert_eq!(limit.keys(), 1);
    assert_eq!(status(&server, &xff("192.0.2.1")).await, StatusCode::OK);
}

// `Forwarded` is read before `X-Forwarded-For`, an IPv6 node in brackets with its port
// (RFC 7239 §6.1) is keyed by the address alone, and trusting two proxies reads the entry
// before the right-most.
#[tokio::test]
async fn forwarded_ipv6_clients_are_keyed_without_their_port() {
    let (server, limit) = serve(ClientAddr::behind(2)).await;
    let from = |port: u16| format!("for=\"[2001:db8::1]:{port}\", for=10.0.0.1");
    for port in [4711, 4712] {
        let fields = [
            ("forwarded", from(port)),
            ("x-forwarded-for", "192.0.2.9".into()),
        ];
        let fields = fields
            .each_ref()
            .map(|(name, value)| (*name, value.as_str()));
        assert_eq!(status(&server, &fields).await, StatusCode::OK, "{port}");
    }
    let again = from(5000);
    assert_eq!(
        status(&server, &[("forwarded", &again)]).await,
        StatusCode::TOO_MANY_REQUESTS
    );
    assert_eq!(limit.keys(), 1);
}

// Trusting no proxy, the headers are not read: every chain from one peer shares its budget.
#[tokio::test]
async fn trusting_no_proxy_keys_by_the_peer_whatever_the_chain() {
    let (server, limit) = serve(ClientAddr::DIRECT).await;
    assert_eq!(status(&server, &xff("192.0.2.1")).await, StatusCode::OK);
    assert_eq!(status(&server, &xff("192.0.2.2")).await, StatusCode::OK);
    assert_eq!(
        status(&server, &[("forwarded", "for=192.0.2.3")]).await,
        StatusCode::TOO_MANY_REQUESTS
    );
    assert_eq!(limit.keys(), 1);
}

/// Whether `layer` admits each request of `requests`, in turn, on one service.
async fn admitted(layer: &QuotaLayer, requests: Vec<Request<()>>) -> Vec<bool> {
    let ok = service_fn(|_: Request<()>| async { Ok::<_, BoxError>(HttpResponse::new(())) });
    let mut service = layer.layer(ok);
    let mut answers = Vec::new();
    for request in requests {
        answers.push(service.ready().await.unwrap().call(request).await.is_ok());
    }
    answers
}

/// A request from the TCP peer `peer` with the header `name: value`, if any.
fn from(peer: &str, header: Option<(&str, &str)>) -> Request<()> {
    let mut request = Request::get("/");
    if let Some((name, value)) = header {
        request = request.header(name, value);
    }
    let mut request = request.body(()).unwrap();
    request
        .extensions_mut()
        .insert(peer.parse::<SocketAddr>().unwrap());
    request
}

// RFC 4291 §2.5.5.2: `::ffff:203.0.113.5` is the IPv4 client 203.0.113.5, as a dual-stack
// listener or a proxy may spell it. A bucket with a burst of 1 admits one of the two
// spellings, whichever extractor reads the address: one client, one quota.
#[tokio::test(start_paused = true)]
async fn an_ipv4_client_spelt_as_ipv6_has_one_quota_whoever_reads_it() {
    let burst_of_one = Quota::bucket(1.0, 1.0);
    let proxy = "10.0.0.2:50000";
    let xff = ClientAddr {
        header: ProxyHeader::XForwardedFor,
        ..ClientAddr::behind(1)
    };
    let forwarded = ClientAddr {
        header: ProxyHeader::Forwarded,
        ..ClientAddr::behind(1)
    };
    let cases: [(&str, QuotaLayer, [Request<()>; 2]); 6] = [
        (
            "X-Forwarded-For",
            QuotaLayer::by_client(burst_of_one, 100, xff),
            [
                from(proxy, Some(("x-forwarded-for", "203.0.113.5"))),
                from(proxy, Some(("x-forwarded-for", "::ffff:203.0.113.5"))),
            ],
        ),
        (
            "X-Forwarded-For, bracketed with a port",
            QuotaLayer::by_client(burst_of_one, 100, xff),
            [
                from(proxy, Some(("x-forwarded-for", "203.0.113.5:4711"))),
                from(
                    proxy,
                    Some(("x-forwarded-for", "[::ffff:203.0.113.5]:4712")),
                ),
            ],
        ),
        (
            "Forwarded",
            QuotaLayer::by_client(burst_of_one, 100, forwarded),
            [
                from(proxy, Some(("forwarded", "for=203.0.113.5"))),
                from(
                    proxy,
                    Some(("forwarded", "for=\"[::ffff:203.0.113.5]:4711\"")),
                ),
            ],
        ),
        (
            "the peer, by_peer",
            QuotaLayer::by_peer(burst_of_one, 100),
            [
                from("203.0.113.5:4711", None),
                from("[::ffff:203.0.113.5]:4712", None),
            ],
        ),
        (
            "the peer, by_client trusting no proxy",
            QuotaLayer::by_client(burst_of_one, 100, ClientAddr::DIRECT),
            [
                from("203.0.113.5:4711", None),
                from("[::ffff:203.0.113.5]:4712", None),
            ],
        ),
        (
            "the peer, by_client without a chain",
            QuotaLayer::by_client(burst_of_one, 100, ClientAddr::behind(1)),
            [
                from("[::ffff:203.0.113.5]:4711", None),
                from("203.0.113.5:4712", None),
            ],
        ),
    ];
    let mut answered = Vec::new();
    let mut expected = Vec::new();
    for (reader, layer, requests) in cases {
        let answers = admitted(&layer, Vec::from(requests)).await;
        answered.push((reader, answers, layer.keys()));
        expected.push((reader, vec![true, false], 1));
    }
    assert_eq!(answered, expected);
}

// With the `axum` feature the peer is axum's `ConnectInfo` too: the same one quota.
#[cfg(feature = "axum")]
#[tokio::test(start_paused = true)]
async fn an_ipv4_peer_in_connect_info_spelt_as_ipv6_has_one_quota() {
    let layer = QuotaLayer::by_peer(Quota::bucket(1.0, 1.0), 100);
    let requests = ["203.0.113.5:4711", "[::ffff:203.0.113.5]:4712"].map(|peer| {
        let mut request = Request::new(());
        let peer = peer.parse::<SocketAddr>().unwrap();
        request.extensions_mut().insert(ConnectInfo(peer));
        request
    });
    assert_eq!(admitted(&layer, Vec::from(requests)).await, [true, false]);
    assert_eq!(layer.keys(), 1);
}
