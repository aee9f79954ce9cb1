//! What the end-to-end tests share: an axum server on a free loopback port.

#![allow(dead_code, unreachable_pub)]

use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// A server running `app` on 127.0.0.1, stopped when dropped.
pub struct Server {
    pub addr: SocketAddr,
    task: JoinHandle<()>,
}

impl Server {
    /// Binds a free loopback port and serves `app` on it, with the peer address available to
    /// extractors (`ConnectInfo<SocketAddr>`).
    pub async fn start(app: Router) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local address");
        let task = tokio::spawn(async move {
            axum::serve(
                listener,
                app.into_make_service_with_connect_info::<SocketAddr>(),
            )
            .await
            .expect("serve");
        });
        Self { addr, task }
    }

    /// `http://127.0.0.1:PORT` followed by `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A real HTTP client with every wait bounded, so a hung server fails the test instead of
/// hanging it.
pub fn client() -> reqwest::Client {
    bounded().pool_max_idle_per_host(0).build().expect("client")
}

/// [`client`] keeping its connection: requests reach the server one after another, in the
/// order they are sent.
pub fn keeping_client() -> reqwest::Client {
    bounded().build().expect("client")
}

/// A client builder whose every wait is bounded.
fn bounded() -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .connect_timeout(Duration::from_secs(2))
}

/// A limit of exactly `n` while nothing is sampled.
pub fn limit_of(n: u32) -> ironward::Adaptive {
    ironward::Adaptive {
        algorithm: ironward::limit::Algorithm::Aimd(ironward::limit::Aimd {
            initial: n,
            min: 1,
            max: 100,
            ..ironward::limit::AIMD
        }),
        ..ironward::ADAPTIVE
    }
}
