//! The operations endpoint on `[http] listen`: `GET /healthz` (200 or 503 with a small
//! JSON body, see [`crate::metrics::HealthReport`]), `GET /leader` (200 on the active
//! daemon, 503 on a standby: a proxy in front of the appservice endpoint routes by it)
//! and `GET /metrics` (the Prometheus text format); anything else is 404. HTTP/1.1 on hyper, which the build already has
//! through reqwest. It stops when the daemon's shutdown token is cancelled.
//!
//! No client can hold it: at most `connections` are served at once (more wait in the
//! listen queue), at most `connections_per_ip` from one address (more get a 503 at once,
//! [`admission`]), a connection that moves no byte for `idle_timeout` is closed
//! ([`idle`]: kept-alive connections between requests, stalled clients), and a request
//! head must arrive whole within `read_timeout`.
//!
//! With a [`Site`], every other path is the spectator site's (`crate::site`): its pages,
//! board pictures and event streams, within the same limits. `[http] ops_listen` runs a
//! second listener with no site ([`serve`]), whose connections spectators cannot take.

pub mod admission;
pub mod idle;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::Duration;

use http_body_util::{BodyExt as _, Full};
use hyper::body::Bytes;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use self::admission::{Admission, Slot};
use self::idle::{Activity, Watched};
use crate::config::HttpSettings;
use crate::metrics::{Metrics, Role};
use crate::site::{self, Site};

/// Binds the endpoint's address to serve `what` (logged); an address other than loopback
/// is allowed, with a warning.
pub async fn bind(address: SocketAddr, what: &str) -> std::io::Result<TcpListener> {
    if !address.ip().is_loopback() {
        tracing::warn!(
            %address,
            "[http] listen is not a loopback address: /metrics and /healthz can be read from other machines"
        );
    }
    let listener = TcpListener::bind(address).await.map_err(|error| {
        std::io::Error::new(error.kind(), format!("[http] listen: cannot listen on {address}: {error}"))
    })?;
    tracing::info!(address = %listener.local_addr().unwrap_or(address), "serving {what}");
    Ok(listener)
}

/// Serves `/healthz` and `/metrics` on `listener` until `shutdown` is cancelled, within
/// `limits` (its `listen` is not used here); open connections are then dropped.
pub async fn serve(
    listener: TcpListener,
    limits: HttpSettings,
    metrics: Metrics,
    shutdown: CancellationToken,
) {
    serve_site(listener, limits, metrics, None, shutdown).await;
}

/// [`serve`], with the spectator site on every path but `/healthz` and `/metrics`.
pub async fn serve_site(
    listener: TcpListener,
    limits: HttpSettings,
    metrics: Metrics,
    site: Option<Site>,
    shutdown: CancellationToken,
) {
    let admission = Admission::new(limits.connections_per_ip);
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            () = shutdown.cancelled() => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            accepted = listener.accept(), if connections.len() < limits.connections => match accepted {
                Ok((stream, peer)) => match admission.admit(peer.ip()) {
                    Some(slot) => {
                        let (metrics, site) = (metrics.clone(), site.clone());
                        connections.spawn(connection(without_nagle(stream), slot, limits, metrics, site));
                    }
                    None => refuse(&stream, peer, admission.per_ip()),
                },
                Err(error) => {
                    // Out of file descriptors, for example: back off instead of spinning.
                    tracing::warn!(%error, "the http endpoint could not accept a connection");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            },
        }
    }
    connections.shutdown().await;
}

/// An accepted connection, set up to answer without waiting: `TCP_NODELAY`, so a response
/// written in parts does not wait for the client's delayed ACK (Nagle's algorithm).
fn without_nagle(stream: TcpStream) -> TcpStream {
    if let Err(error) = stream.set_nodelay(true) {
        tracing::debug!(%error, "could not set TCP_NODELAY on an http connection");
    }
    stream
}

/// Answers a connection over the per-address cap with a 503 and closes it (one write
/// into an empty socket buffer: it never waits on the client).
fn refuse(stream: &TcpStream, peer: SocketAddr, per_ip: usize) {
    tracing::debug!(%peer, per_ip, "refused an http connection: too many from its address");
    let _ = stream.try_write(admission::refusal(per_ip).as_bytes());
}

/// Serves one connection until it ends, goes `idle_timeout` without a byte either way,
/// or takes longer than `read_timeout` to send a request head.
async fn connection(
    stream: TcpStream,
    _slot: Slot,
    limits: HttpSettings,
    metrics: Metrics,
    site: Option<Site>,
) {
    let service = service_fn(move |request: Request<hyper::body::Incoming>| {
        let (metrics, site) = (metrics.clone(), site.clone());
        async move {
            let (method, uri) = (request.method(), request.uri());
            if let Some(site) = &site
                && let Some(response) = site.respond(method, uri.path(), uri.query()).await
            {
                return Ok::<_, Infallible>(response);
            }
            Ok(respond(method, uri.path(), &metrics).map(|body| -> site::Body { body.boxed_unsync() }))
        }
    });
    let activity = Activity::opened_now();
    let served = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.read_timeout)
        .serve_connection(TokioIo::new(Watched::new(stream, activity.clone())), service);
    tokio::pin!(served);
    loop {
        let left = limits.idle_timeout.saturating_sub(activity.idle_for());
        if left.is_zero() {
            tracing::debug!(idle_timeout = ?limits.idle_timeout, "closed an idle http connection");
            return;
        }
        tokio::select! {
            ended = served.as_mut() => {
                if let Err(error) = ended {
                    tracing::debug!(%error, "an http connection ended with an error");
                }
                return;
            }
            () = tokio::time::sleep(left) => {}
        }
    }
}

/// The answer to `method path`.
pub fn respond(method: &Method, path: &str, metrics: &Metrics) -> Response<Full<Bytes>> {
    let known = matches!(path, "/healthz" | "/leader" | "/metrics");
    if known && method != Method::GET && method != Method::HEAD {
        return text(
            StatusCode::METHOD_NOT_ALLOWED,
            "only GET and HEAD\n".to_owned(),
            "text/plain; charset=utf-8",
        );
    }
    match path {
        "/healthz" => {
            let report = metrics.health().report();
            let status = if report.healthy() { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE };
            let mut body = serde_json::to_string(&report).unwrap_or_else(|_| "{}".to_owned());
            body.push('\n');
            text(status, body, "application/json")
        }
        "/leader" => match metrics.health().role() {
            Role::Active => text(StatusCode::OK, "active\n".to_owned(), "text/plain; charset=utf-8"),
            Role::Standby => {
                text(StatusCode::SERVICE_UNAVAILABLE, "standby\n".to_owned(), "text/plain; charset=utf-8")
            }
        },
        "/metrics" => {
            text(StatusCode::OK, metrics.encode(), prometheus_client::encoding::prometheus_text::CONTENT_TYPE)
        }
        _ => text(
            StatusCode::NOT_FOUND,
            "not found: try /healthz, /leader or /metrics\n".to_owned(),
            "text/plain; charset=utf-8",
        ),
    }
}

fn text(status: StatusCode, body: String, content_type: &'static str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use spellbridge_core::NetworkId;

    async fn body(response: Response<Full<Bytes>>) -> String {
        let bytes = response.into_body().collect().await.expect("body").to_bytes();
        String::from_utf8(bytes.to_vec()).expect("utf-8")
    }

    #[tokio::test]
    async fn an_accepted_connection_has_tcp_nodelay() {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let address = listener.local_addr().expect("address");
        let _client = tokio::net::TcpStream::connect(address).await.expect("connect");
        let (stream, _) = listener.accept().await.expect("accept");
        assert!(!stream.nodelay().expect("nodelay"), "an accepted socket starts with Nagle on");
        assert!(without_nagle(stream).nodelay().expect("nodelay"), "the endpoint turns it off");
    }

    #[tokio::test]
    async fn healthz_is_200_when_well_and_503_naming_what_is_down() {
        let metrics = Metrics::new();
        let network = NetworkId::new("libera");
        metrics.network(&network);
        let response = respond(&Method::GET, "/healthz", &metrics);
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(response.headers()[CONTENT_TYPE], "application/json");
        let json: serde_json::Value = serde_json::from_str(&body(response).await).expect("json");
        assert_eq!(json["down"], serde_json::json!(["libera"]));
        metrics.connection(&network, true, 0);
        let response = respond(&Method::GET, "/healthz", &metrics);
        assert_eq!(response.status(), StatusCode::OK);
        let json: serde_json::Value = serde_json::from_str(&body(response).await).expect("json");
        assert_eq!(json["status"], "ok");
        assert_eq!(json["role"], "active");
    }

    #[tokio::test]
    async fn leader_is_200_only_while_active_and_healthz_names_the_role() {
        let metrics = Metrics::new();
        let response = respond(&Method::GET, "/leader", &metrics);
        assert_eq!(response.status(), StatusCode::OK, "a daemon on SQLite, or holding the lease");
        assert_eq!(body(response).await, "active\n");
        metrics.health().set_role(Role::Standby);
        let response = respond(&Method::GET, "/leader", &metrics);
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(body(response).await, "standby\n");
        let json: serde_json::Value =
            serde_json::from_str(&body(respond(&Method::GET, "/healthz", &metrics)).await).expect("json");
        assert_eq!(json["role"], "standby");
        assert_eq!(respond(&Method::POST, "/leader", &metrics).status(), StatusCode::METHOD_NOT_ALLOWED);
    }

    #[tokio::test]
    async fn metrics_is_the_text_format_and_other_paths_are_404() {
        let metrics = Metrics::new();
        let response = respond(&Method::GET, "/metrics", &metrics);
        assert_eq!(response.status(), StatusCode::OK);
        assert!(
            response.headers()[CONTENT_TYPE]
                .to_str()
                .expect("ascii")
                .starts_with("text/plain; version=0.0.4")
        );
        assert!(body(response).await.contains("spellbridge_outbox_depth 0"));
        assert_eq!(respond(&Method::GET, "/", &metrics).status(), StatusCode::NOT_FOUND);
        assert_eq!(respond(&Method::GET, "/metrics/x", &metrics).status(), StatusCode::NOT_FOUND);
        assert_eq!(respond(&Method::POST, "/metrics", &metrics).status(), StatusCode::METHOD_NOT_ALLOWED);
    }

    #[tokio::test]
    async fn it_serves_over_tcp_and_stops_on_shutdown() {
        let listener = bind("127.0.0.1:0".parse().expect("address"), "the test").await.expect("bind");
        let address = listener.local_addr().expect("address");
        let shutdown = CancellationToken::new();
        let limits = HttpSettings::new(address);
        let server = tokio::spawn(serve(listener, limits, Metrics::new(), shutdown.clone()));
        let mut stream = tokio::net::TcpStream::connect(address).await.expect("connect");
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        stream
            .write_all(b"GET /nowhere HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .await
            .expect("write");
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.expect("read");
        assert!(answer.starts_with("HTTP/1.1 404"), "{answer}");
        shutdown.cancel();
        tokio::time::timeout(Duration::from_secs(5), server).await.expect("stops").expect("no panic");
    }
}
