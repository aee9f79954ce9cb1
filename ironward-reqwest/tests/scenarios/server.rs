//! The scripted HTTP server every scenario talks to: axum on a free 127.0.0.1 port, answering
//! from a script, and recording what it saw.

use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Method, Response, StatusCode};
use tokio::task::JoinHandle;

use crate::http_date::http_date;

/// What the server answers to one request.
#[derive(Debug, Clone)]
pub(crate) enum Reply {
    /// This status with these headers (appended, so a name may repeat), their values as raw
    /// bytes so that one may be other than UTF-8.
    Plain(u16, Vec<(&'static str, Vec<u8>)>),
    /// This status with `Retry-After` set to the HTTP-date this many whole seconds after the
    /// wall clock's current second, recorded in [`Server::dates`].
    RetryAtDate(u16, i64),
}

impl Reply {
    /// A bare status.
    pub(crate) fn status(code: u16) -> Self {
        Self::Plain(code, Vec::new())
    }

    /// A status with one `Retry-After` field.
    pub(crate) fn retry_after(code: u16, value: impl AsRef<[u8]>) -> Self {
        Self::Plain(code, vec![("retry-after", value.as_ref().to_vec())])
    }
}

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub(crate) struct Hit {
    /// When the handler ran, on the monotonic clock.
    pub(crate) at: Instant,
    /// When the handler ran, on the wall clock, in Unix seconds.
    pub(crate) wall: f64,
    pub(crate) method: Method,
    pub(crate) key: Option<String>,
    pub(crate) body: Bytes,
}

#[derive(Debug)]
struct Shared {
    script: Mutex<Vec<Reply>>,
    hits: Mutex<Vec<Hit>>,
    /// Operations performed: one per unsafe request, or per new key when deduplicating.
    effects: Mutex<u32>,
    keys: Mutex<HashSet<String>>,
    dedupe: bool,
    dates: Mutex<Vec<i64>>,
}

/// A running server; dropping it stops it.
#[derive(Debug)]
pub(crate) struct Server {
    pub(crate) addr: SocketAddr,
    shared: Arc<Shared>,
    task: JoinHandle<()>,
}

impl Server {
    /// A server answering the `n`th request with `script[n]` (the last reply repeats), that
    /// performs every unsafe request's operation.
    pub(crate) async fn start(script: Vec<Reply>) -> Self {
        Self::bind(script, false, "127.0.0.1:0".parse().unwrap()).await
    }

    /// The same, but an unsafe request whose `Idempotency-Key` it has seen before is answered
    /// without performing the operation again.
    pub(crate) async fn deduplicating(script: Vec<Reply>) -> Self {
        Self::bind(script, true, "127.0.0.1:0".parse().unwrap()).await
    }

    /// A server on `addr`.
    pub(crate) async fn bind(script: Vec<Reply>, dedupe: bool, addr: SocketAddr) -> Self {
        let shared = Arc::new(Shared {
            script: Mutex::new(script),
            hits: Mutex::new(Vec::new()),
            effects: Mutex::new(0),
            keys: Mutex::new(HashSet::new()),
            dedupe,
            dates: Mutex::new(Vec::new()),
        });
        let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = Router::new()
            .fallback(handle)
            .with_state(Arc::clone(&shared));
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Self { addr, shared, task }
    }

    /// `http://127.0.0.1:port/path`.
    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Every request seen so far.
    pub(crate) fn hits(&self) -> Vec<Hit> {
        self.shared.hits.lock().unwrap().clone()
    }

    /// Requests seen so far.
    pub(crate) fn count(&self) -> usize {
        self.shared.hits.lock().unwrap().len()
    }

    /// The gaps between consecutive requests.
    pub(crate) fn intervals(&self) -> Vec<Duration> {
        let hits = self.hits();
        hits.windows(2).map(|w| w[1].at - w[0].at).collect()
    }

    /// Operations performed.
    pub(crate) fn effects(&self) -> u32 {
        *self.shared.effects.lock().unwrap()
    }

    /// The HTTP-dates sent as `Retry-After`, in Unix seconds.
    pub(crate) fn dates(&self) -> Vec<i64> {
        self.shared.dates.lock().unwrap().clone()
    }

    /// Replaces the script; the next request gets its first reply.
    pub(crate) fn rescript(&self, script: Vec<Reply>) {
        let hits = self.count();
        let mut padded = vec![Reply::status(200); hits];
        padded.extend(script);
        *self.shared.script.lock().unwrap() = padded;
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
    let wall = wall_now();
    let key = headers
        .get("idempotency-key")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let n = {
        let mut hits = shared.hits.lock().unwrap();
        hits.push(Hit {
            at: Instant::now(),
            wall,
            method: method.clone(),
            key: key.clone(),
            body,
        });
        hits.len() - 1
    };
    if !matches!(method, Method::GET | Method::HEAD) {
        let fresh = match (&key, shared.dedupe) {
            (Some(key), true) => shared.keys.lock().unwrap().insert(key.clone()),
            _ => true,
        };
        if fresh {
            *shared.effects.lock().unwrap() += 1;
        }
    }
    let reply = {
        let script = shared.script.lock().unwrap();
        script[n.min(script.len() - 1)].clone()
    };
    let (code, headers) = match reply {
        Reply::Plain(code, headers) => (code, headers),
        Reply::RetryAtDate(code, ahead) => {
            let date = wall.floor() as i64 + ahead;
            shared.dates.lock().unwrap().push(date);
            (code, vec![("retry-after", http_date(date).into_bytes())])
        }
    };
    let mut response = Response::new(Body::from(format!("reply {n}")));
    *response.status_mut() = StatusCode::from_u16(code).unwrap();
    for (name, value) in headers {
        response
            .headers_mut()
            .append(name, HeaderValue::from_bytes(&value).unwrap());
    }
    response
}

/// The wall clock in Unix seconds, with its fraction.
pub(crate) fn wall_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}
