//! The daemon's operations endpoint (`[http] listen`, `daemon/src/http/`) seen from
//! outside, for the tests that run `spellbridge run` ([`super::daemon`]): a free loopback
//! port to give it, one `GET` with a bounded wait, and polling until an answer is the one
//! a test waits for (`/healthz` going to 503 once a network is down, back to 200 …).

use std::net::{Ipv4Addr, TcpListener};
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::time::Instant;

use super::HarnessError;

/// How long one `GET` may take.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(5);

/// A loopback port nothing listens on now, for `[http] listen = "127.0.0.1:PORT"`.
pub fn free_port() -> Result<u16, HarnessError> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .map_err(HarnessError::io("binding 127.0.0.1:0 to find a free port"))?;
    listener.local_addr().map(|addr| addr.port()).map_err(HarnessError::io("reading the free port"))
}

/// `GET path` on `127.0.0.1:port`: the status and body, or `None` while nothing answers
/// (the daemon is still starting) or the answer takes longer than 5 s.
pub async fn get(port: u16, path: &str) -> Option<(u16, String)> {
    let mut stream = tokio::net::TcpStream::connect((Ipv4Addr::LOCALHOST, port)).await.ok()?;
    let request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.ok()?;
    let mut answer = String::new();
    tokio::time::timeout(ANSWER_TIMEOUT, stream.read_to_string(&mut answer)).await.ok()?.ok()?;
    let status = answer.split(' ').nth(1)?.parse().ok()?;
    let body = answer.split_once("\r\n\r\n").map(|(_, body)| body.to_owned()).unwrap_or_default();
    Some((status, body))
}

/// Polls `GET path` every 100 ms, for at most `limit`, until `done` holds for the status
/// and body; that answer. The error names the path and the last answer.
pub async fn wait_for(
    port: u16,
    path: &str,
    limit: Duration,
    done: impl Fn(u16, &str) -> bool,
) -> Result<(u16, String), HarnessError> {
    let deadline = Instant::now() + limit;
    let mut last = None;
    while Instant::now() < deadline {
        if let Some((status, body)) = get(port, path).await {
            if done(status, &body) {
                return Ok((status, body));
            }
            last = Some((status, body));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(HarnessError::Io {
        what: format!("GET {path} on 127.0.0.1:{port}"),
        source: std::io::Error::other(format!(
            "never gave what the test waited for within {limit:?}; the last answer: {last:?}"
        )),
    })
}
