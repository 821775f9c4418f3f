//! A loopback HTTP/1.1 proxy in front of a test server that answers chosen requests
//! itself, with an error, instead of passing them on: a homeserver that fails one
//! request on demand, for the paths that only run when one does.
//!
//! Requests are read one at a time from each client connection (headers, then a
//! `Content-Length` body; the clients under test send no chunked bodies and do not
//! pipeline) and written to a connection of the proxy's own to the server, whose bytes go
//! back unread. A request whose path contains a [`FaultProxy::fail`] pattern is answered
//! by the proxy and never reaches the server.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::tcp::OwnedWriteHalf;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

use super::HarnessError;

/// The longest request head the proxy reads; more is a client it cannot serve.
const MOST_HEAD_BYTES: usize = 64 * 1024;

/// Requests to answer with an error, and how many of them.
#[derive(Debug)]
struct Fault {
    path_contains: String,
    remaining: usize,
    response: String,
}

/// The shared state: the faults still to inject and how many were.
#[derive(Debug, Default)]
struct Faults {
    pending: Mutex<Vec<Fault>>,
    injected: AtomicUsize,
}

impl Faults {
    /// The response to give instead of passing `path` on, if a fault matches it.
    fn take(&self, path: &str) -> Option<String> {
        let mut pending = self.pending.lock().expect("fault list");
        let fault = pending.iter_mut().find(|f| f.remaining > 0 && path.contains(&f.path_contains))?;
        fault.remaining -= 1;
        self.injected.fetch_add(1, Ordering::SeqCst);
        Some(fault.response.clone())
    }
}

/// A proxy on a free loopback port; stops accepting when dropped.
#[derive(Debug)]
pub struct FaultProxy {
    addr: SocketAddr,
    faults: Arc<Faults>,
    accepting: JoinHandle<()>,
}

impl FaultProxy {
    /// Starts a proxy to the server at `upstream` (a loopback address).
    pub async fn start(upstream: SocketAddr) -> Result<Self, HarnessError> {
        let listener = TcpListener::bind("127.0.0.1:0").await.map_err(|source| HarnessError::Io {
            what: "binding the fault proxy on 127.0.0.1".into(),
            source,
        })?;
        let addr = listener.local_addr().map_err(|source| HarnessError::Io {
            what: "reading the fault proxy's address".into(),
            source,
        })?;
        let faults = Arc::new(Faults::default());
        let shared = faults.clone();
        let accepting = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                tokio::spawn(serve(client, upstream, shared.clone()));
            }
        });
        Ok(FaultProxy { addr, faults, accepting })
    }

    /// The proxy's URL, to give the client under test instead of the server's.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Answers the next `times` requests whose path contains `path_contains` with
    /// `status` and a Matrix error body (`errcode` `M_UNKNOWN`), instead of passing them on.
    pub fn fail(&self, path_contains: &str, times: usize, status: u16) {
        let body = r#"{"errcode":"M_UNKNOWN","error":"failed on purpose by the test's fault proxy"}"#;
        let response = format!(
            "HTTP/1.1 {status} Injected\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        );
        self.faults.pending.lock().expect("fault list").push(Fault {
            path_contains: path_contains.to_owned(),
            remaining: times,
            response,
        });
    }

    /// Drops the faults not injected yet: from now on every request is passed on.
    pub fn heal(&self) {
        self.faults.pending.lock().expect("fault list").clear();
    }

    /// How many requests the proxy has answered with a fault so far.
    pub fn injected(&self) -> usize {
        self.faults.injected.load(Ordering::SeqCst)
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.accepting.abort();
    }
}

/// Serves one client connection until either side closes it.
async fn serve(client: TcpStream, upstream: SocketAddr, faults: Arc<Faults>) {
    let Ok(server) = TcpStream::connect(upstream).await else { return };
    let (client_read, client_write) = client.into_split();
    let (mut server_read, mut server_write) = server.into_split();
    let client_write = Arc::new(tokio::sync::Mutex::new(client_write));
    let back = {
        let client_write = client_write.clone();
        tokio::spawn(async move {
            let mut buffer = vec![0u8; 16 * 1024];
            while let Ok(n) = server_read.read(&mut buffer).await {
                if n == 0 || client_write.lock().await.write_all(&buffer[..n]).await.is_err() {
                    break;
                }
            }
            let _ = client_write.lock().await.shutdown().await;
        })
    };
    let mut requests = BufReader::new(client_read);
    while let Some((head, path, body_length)) = read_head(&mut requests).await {
        let mut body = vec![0u8; body_length];
        if requests.read_exact(&mut body).await.is_err() {
            break;
        }
        if let Some(response) = faults.take(&path) {
            if answer(&client_write, &response).await.is_err() {
                break;
            }
        } else if server_write.write_all(&head).await.is_err() || server_write.write_all(&body).await.is_err()
        {
            break;
        }
    }
    let _ = server_write.shutdown().await;
    let _ = back.await;
}

/// Writes a response of the proxy's own to the client.
async fn answer(client_write: &tokio::sync::Mutex<OwnedWriteHalf>, response: &str) -> std::io::Result<()> {
    client_write.lock().await.write_all(response.as_bytes()).await
}

/// Reads one request head: its bytes, its path and its body's length. `None` at the end
/// of the connection or on a head the proxy cannot read.
async fn read_head(
    requests: &mut BufReader<tokio::net::tcp::OwnedReadHalf>,
) -> Option<(Vec<u8>, String, usize)> {
    let mut head = Vec::new();
    let mut body_length = 0;
    loop {
        let start = head.len();
        let n = requests.read_until(b'\n', &mut head).await.ok()?;
        if n == 0 || head.len() > MOST_HEAD_BYTES {
            return None;
        }
        let line = std::str::from_utf8(&head[start..]).ok()?.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            body_length = value.trim().parse().ok()?;
        }
    }
    let request_line = std::str::from_utf8(&head).ok()?.lines().next()?;
    let path = request_line.split(' ').nth(1)?.to_owned();
    Some((head, path, body_length))
}
