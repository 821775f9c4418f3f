//! Spectators flooding the spectator site, for the test and the bench of the operations
//! listener (`daemon/tests/ops_listener.rs`, `daemon/benches/ops.rs`): event streams held
//! open and slow clients trickling a request head, each from its own loopback address
//! (Linux routes all of 127.0.0.0/8 to loopback, so each address is another client). Each
//! runs until its task is aborted.

use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

/// A connection to `port` from the loopback address `source`; `None` if it cannot be made.
pub async fn connect_from(source: [u8; 4], port: u16) -> Option<TcpStream> {
    let socket = tokio::net::TcpSocket::new_v4().ok()?;
    socket.bind((source, 0).into()).ok()?;
    socket.connect(([127, 0, 0, 1], port).into()).await.ok()
}

/// Table 0's event stream held open from `source`: it reads whatever comes, and opens
/// again when the daemon closes it.
pub async fn stream(source: [u8; 4], port: u16) {
    loop {
        if let Some(mut socket) = connect_from(source, port).await {
            let request = "GET /tables/0/events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n";
            if socket.write_all(request.as_bytes()).await.is_ok() {
                let mut buffer = [0u8; 4096];
                while matches!(socket.read(&mut buffer).await, Ok(n) if n > 0) {}
            }
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// A slow client from `source`: it sends a request head one short header a second (never
/// idle long enough to be closed for it, never finishing), and connects again when closed.
pub async fn slow(source: [u8; 4], port: u16) {
    loop {
        if let Some(mut socket) = connect_from(source, port).await {
            let mut line = 0;
            let mut sent = socket.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n").await.is_ok();
            while sent {
                tokio::time::sleep(Duration::from_secs(1)).await;
                line += 1;
                sent = socket.write_all(format!("X-{line}: y\r\n").as_bytes()).await.is_ok();
            }
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
