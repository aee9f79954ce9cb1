//! The scripted HTTP server both edges talk to: axum on a free 127.0.0.1 port, answering from
//! a script and recording each request on the test's manual clock.

use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Method, Response, StatusCode};
use ironward_tokio::Clock;
use tokio::task::JoinHandle;

/// What the server answers to one request: a status and its headers, appended in order so a
/// name may repeat, with values as raw bytes so one may be other than UTF-8, after taking
/// `takes` on the server's clock.
#[derive(Debug, Clone)]
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(&'static str, Vec<u8>)>,
    /// How long the server takes to answer, slept on its clock once the request is recorded:
    /// on a manual clock, a move of the clock, so that an attempt takes exactly this long.
    pub(crate) takes: Duration,
}

impl Reply {
    /// A bare status.
    pub(crate) fn status(status: u16) -> Self {
        Self {
            status,
            headers: Vec::new(),
            takes: Duration::ZERO,
        }
    }

    /// A status with `Retry-After` fields, one per value.
    pub(crate) fn retry_after(status: u16, values: &[&[u8]]) -> Self {
        Self {
            status,
            headers: values.iter().map(|v| ("retry-after", v.to_vec())).collect(),
            takes: Duration::ZERO,
        }
    }

    /// The same reply, answered after `takes` on the server's clock.
    pub(crate) fn taking(self, takes: Duration) -> Self {
        Self { takes, ..self }
    }
}

/// One request as the server saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hit {
    /// The test's manual clock when the handler ran: the sum of the waits so far.
    pub(crate) at: Duration,
    pub(crate) method: Method,
    pub(crate) key: Option<Vec<u8>>,
    pub(crate) body: Bytes,
}

struct Shared {
    script: Vec<Reply>,
    clock: Clock,
    hits: Mutex<Vec<Hit>>,
    /// Operations performed: one per unsafe request, or per new key when deduplicating.
    effects: Mutex<u32>,
    keys: Mutex<HashSet<Vec<u8>>>,
    dedupe: bool,
}

/// A running server; dropping it stops it.
pub(crate) struct Server {
    pub(crate) addr: SocketAddr,
    shared: Arc<Shared>,
    task: JoinHandle<()>,
}

impl Server {
    /// A server answering the `n`th request with `script[n]` (the last reply repeats), that
    /// stamps each request with `clock` and, when `dedupe`, performs an unsafe request's
    /// operation once per idempotency key.
    pub(crate) async fn start(script: Vec<Reply>, dedupe: bool, clock: Clock) -> Self {
        let shared = Arc::new(Shared {
            script,
            clock,
            hits: Mutex::new(Vec::new()),
            effects: Mutex::new(0),
            keys: Mutex::new(HashSet::new()),
            dedupe,
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = Router::new()
            .fallback(handle)
            .with_state(Arc::clone(&shared));
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Self { addr, shared, task }
    }

    /// Every request seen so far.
    pub(crate) fn hits(&self) -> Vec<Hit> {
        self.shared.hits.lock().unwrap().clone()
    }

    /// Operations performed so far.
    pub(crate) fn effects(&self) -> u32 {
        *self.shared.effects.lock().unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn handle(
    State(shared): State<Arc<Shared>>,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
) -> Response<Body> {
    let key = headers
        .get("idempotency-key")
        .map(|v| v.as_bytes().to_vec());
    let n = {
        let mut hits = shared.hits.lock().unwrap();
        hits.push(Hit {
            at: shared.clock.now(),
            method: method.clone(),
            key: key.clone(),
            body,
        });
        hits.len() - 1
    };
    if !matches!(method, Method::GET | Method::HEAD) {
        let fresh = match (key, shared.dedupe) {
            (Some(key), true) => shared.keys.lock().unwrap().insert(key),
            _ => true,
        };
        if fresh {
            *shared.effects.lock().unwrap() += 1;
        }
    }
    let reply = &shared.script[n.min(shared.script.len() - 1)];
    if !reply.takes.is_zero() {
        shared.clock.sleep(reply.takes).await;
    }
    let mut response = Response::new(Body::from(format!("reply {n}")));
    *response.status_mut() = StatusCode::from_u16(reply.status).unwrap();
    for (name, value) in &reply.headers {
        response
            .headers_mut()
            .append(*name, HeaderValue::from_bytes(value).unwrap());
    }
    response
}
