//! `FleetQuotaLayer`: ironward-tower's rate limit with its budgets in Redis, shared by
//! layers in different stores as by processes of a fleet, refusing with the same `Limited`
//! and the same HTTP answer.

use crate::common;

use std::time::Duration;

use http::{HeaderName, Request, StatusCode};
use ironward_redis::{FleetQuotaLayer, Options, Source, Store};
use ironward_tower::http::Format;
use ironward_tower::{Clock, Limited, Quota};
use tower::{BoxError, Layer, Service, ServiceExt, service_fn};

use common::{Server, unique};

/// A layer's service around a handler that always answers.
fn service(
    layer: &FleetQuotaLayer,
) -> impl Service<Request<()>, Response = (), Error = BoxError> + use<> {
    layer.layer(service_fn(|_: Request<()>| async { Ok::<_, BoxError>(()) }))
}

/// Calls `service` once: admitted, or the refusal.
async fn call<S>(service: &mut S, request: Request<()>) -> Result<(), Limited>
where
    S: Service<Request<()>, Response = (), Error = BoxError>,
{
    match service.ready().await.unwrap().call(request).await {
        Ok(()) => Ok(()),
        Err(err) => Err(*err.downcast_ref::<Limited>().expect("a Limited refusal")),
    }
}

/// A clock stopped at `secs` seconds past the Unix epoch.
fn at(secs: u64) -> Clock {
    Clock::from_fn(move || Duration::from_secs(secs))
}

// Two stores are two processes of a fleet: a layer of the same name in each holds one
// budget between them.
#[tokio::test]
async fn layers_of_one_name_share_one_budget_across_stores() {
    let server = Server::start();
    let name = unique("shared");
    let limit = Quota::aligned(2, Duration::from_secs(60));
    let mut here = service(
        &FleetQuotaLayer::new(&server.store(Options::default()).await, &name, limit)
            .with_clock(at(1_699_999_990)),
    );
    let mut there = service(
        &FleetQuotaLayer::new(&server.store(Options::default()).await, &name, limit)
            .with_clock(at(1_699_999_990))
            .with_name("fleet"),
    );
    assert_eq!(call(&mut here, Request::new(())).await, Ok(()));
    assert_eq!(call(&mut there, Request::new(())).await, Ok(()));
    let limited = call(&mut there, Request::new(())).await.unwrap_err();
    // Aligned on the minute: the period open at ten past ends fifty seconds later.
    assert_eq!(limited.retry_after(), Duration::from_secs(50));
    assert_eq!((limited.quota(), limited.policy()), (2, "fleet"));

    // The same HTTP answer as ironward-tower's own layer gives.
    let err: BoxError = Box::new(limited);
    let response = ironward_tower::http::response_for::<String>(&err, Format::Text).unwrap();
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(response.headers()["retry-after"], "50");
    assert_eq!(
        response.headers()["ratelimit-policy"],
        r#""fleet";q=2;w=60"#
    );
    assert_eq!(response.headers()["ratelimit"], r#""fleet";r=0;t=50"#);
}

#[tokio::test]
async fn a_keyed_layer_has_a_budget_per_key_and_one_for_requests_without() {
    let server = Server::start();
    let store = server.store(Options::default()).await;
    let key = HeaderName::from_static("x-api-key");
    let layer = FleetQuotaLayer::by_header(&store, "keyed", Quota::bucket(1.0, 1.0), key)
        .with_clock(at(1_700_000_000));
    let mut service = service(&layer);
    let from = |client: &str| {
        Request::get("/")
            .header("x-api-key", client)
            .body(())
            .unwrap()
    };
    assert_eq!(call(&mut service, from("alice")).await, Ok(()));
    assert_eq!(call(&mut service, from("bob")).await, Ok(()));
    assert_eq!(call(&mut service, Request::new(())).await, Ok(()));
    let limited = call(&mut service, from("alice")).await.unwrap_err();
    assert_eq!(limited.retry_after(), Duration::from_secs(1));
    assert!(call(&mut service, Request::new(())).await.is_err());

    let mut conn = server.conn().await;
    let mut keys: Vec<String> = redis::cmd("KEYS")
        .arg("{keyed*")
        .query_async(&mut conn)
        .await
        .unwrap();
    keys.sort();
    assert_eq!(
        keys,
        [
            "{keyed:alice}.tokens",
            "{keyed:alice}.ts",
            "{keyed:bob}.tokens",
            "{keyed:bob}.ts",
            "{keyed}.tokens",
            "{keyed}.ts",
        ]
    );
    assert_eq!(layer.store().source(), Source::Redis);
}

// A decision Redis does not give in time is a refusal, not a failover: the client is
// told to come back after the timeout.
#[tokio::test]
async fn a_decision_that_times_out_is_refused_with_limited() {
    let server = Server::start();
    let timeout = Duration::from_millis(100);
    let store = server
        .store(Options {
            timeout,
            ..Options::default()
        })
        .await;
    let layer = FleetQuotaLayer::new(&store, "slow", Quota::sliding(5, Duration::from_secs(1)));
    let mut service = service(&layer);
    assert_eq!(call(&mut service, Request::new(())).await, Ok(()));

    let mut conn = server.conn().await;
    let () = redis::cmd("CLIENT")
        .arg("PAUSE")
        .arg(400)
        .query_async(&mut conn)
        .await
        .unwrap();
    let limited = call(&mut service, Request::new(())).await.unwrap_err();
    assert_eq!(limited.retry_after(), timeout);
    assert_eq!((store.source(), store.stats().timeouts), (Source::Redis, 1));
}

#[tokio::test]
async fn a_layer_without_redis_limits_on_its_fallback() {
    let store = Store::connect(
        "redis+unix:///nonexistent/ironward-redis.sock",
        Options {
            share: 0.5,
            start_local: true,
            ..Options::default()
        },
    )
    .await
    .unwrap();
    let layer = FleetQuotaLayer::new(&store, "alone", Quota::period(4, Duration::from_secs(60)));
    let mut service = service(&layer);
    assert_eq!(call(&mut service, Request::new(())).await, Ok(()));
    assert_eq!(call(&mut service, Request::new(())).await, Ok(()));
    // Half the quota of four: the third is refused, with the policy's own quota.
    let limited = call(&mut service, Request::new(())).await.unwrap_err();
    assert_eq!(limited.quota(), 4);
    assert_eq!(layer.store().source(), Source::Local);
    let debug = format!("{layer:?}");
    assert!(debug.contains("Local"), "{debug}");
}
