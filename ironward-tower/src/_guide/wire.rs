//! What a client is told: each refusal's response, problem details and the `RateLimit` fields.
//!
//! `ironward_tower::axum::handle_error` answers each refusal with its status and
//! a body naming the piece that refused: RFC 9457 problem details for a client that asks for
//! `application/problem+json`, one line of text otherwise.
//!
//! ```sh
//! $ curl -s -H 'accept: application/problem+json' localhost:3000/upstream
//! {"detail":"circuit breaker refused the call: breaker dropped 79.3% of calls (roll 0.79): 0 accepts in 28 calls, failing 7 buckets, working 0","piece":"breaker","status":503,"title":"A backend this server needs is failing","type":"https://docs.rs/ironward-tower/latest/ironward_tower/http/enum.Piece.html#variant.Breaker"}
//! ```
//!
//! A rate limit's 429 carries `Retry-After` and the IETF `RateLimit`/`RateLimit-Policy` fields,
//! and a layer made `with_headers(true)` puts them on every response it admits too
//! (`RateLimit: "client";r=17;t=1`), so that a client sees its headroom before it runs out.
//! `QuotaLayer::by_client` keys a limit by the client behind a configured number of trusted
//! proxies (`Forwarded` or `X-Forwarded-For`).
