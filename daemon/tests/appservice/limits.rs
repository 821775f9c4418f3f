//! Issue 29, item 6: the appservice API's listener cannot be held. It serves at most 32
//! connections at once and answers more with a 503 and closes them at once; a connection
//! that sends no whole request head is closed after a few seconds. The listener serves
//! before the bot logs in, so no homeserver is needed: the config names one that is not
//! there.

use super::support::*;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

/// The listener's cap (`adapters/src/matrix/appservice/server.rs`).
const MOST: usize = 32;

/// Reads `stream` until the daemon closes it, within `limit`: what it sent, or `None`
/// when it was still open then.
async fn until_closed(stream: &mut TcpStream, limit: Duration) -> Option<String> {
    let deadline = Instant::now() + limit;
    let mut said = Vec::new();
    let mut buffer = [0u8; 1024];
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buffer)).await {
            Err(_) => return None,
            Ok(Ok(0) | Err(_)) => return Some(String::from_utf8_lossy(&said).into_owned()),
            Ok(Ok(n)) => said.extend_from_slice(&buffer[..n]),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_appservice_listener_refuses_connections_over_its_cap_and_closes_idle_ones() {
    let port = free_port();
    let mut daemon = prepared(port, "");
    daemon.spawn().unwrap_or_else(|e| panic!("{e}"));
    tokio::task::block_in_place(|| daemon.wait_for_log("serving the appservice API", STARTUP))
        .unwrap_or_else(|e| panic!("{e}"));
    let connect = || async { TcpStream::connect(("127.0.0.1", port)).await.expect("connect") };

    // The cap's worth of connections that say nothing, then one more: refused at once.
    let mut held = Vec::new();
    for _ in 0..MOST {
        held.push(connect().await);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut extra = connect().await;
    let refused = until_closed(&mut extra, Duration::from_secs(2))
        .await
        .unwrap_or_else(|| panic!("connection {} was kept open; log:\n{}", MOST + 1, daemon.log_tail(20)));
    assert!(refused.starts_with("HTTP/1.1 503 "), "{refused}");
    assert!(refused.contains("M_LIMIT_EXCEEDED"), "{refused}");

    // A connection that sends half a request head keeps trying, but is closed too.
    drop(held.pop());
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut half = connect().await;
    half.write_all(b"PUT /_matrix/app/v1/transactions/1 HTTP/1.1\r\nHost: x\r\n").await.expect("write");
    held.push(half);
    // Every one of them is closed within a few seconds (the cap's timeout is 5 s).
    for (index, stream) in held.iter_mut().enumerate() {
        let closed = until_closed(stream, Duration::from_secs(10)).await;
        assert!(closed.is_some(), "idle connection {index} is still open after 10 s");
    }
    // And the listener serves again: a request without the homeserver's token is 401.
    let mut stream = connect().await;
    stream
        .write_all(b"POST /_matrix/app/v1/ping HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
        .await
        .expect("write");
    let answer = until_closed(&mut stream, WAIT).await.expect("an answer");
    assert!(answer.starts_with("HTTP/1.1 401 "), "{answer}");
    daemon.ensure_running().unwrap_or_else(|e| panic!("{e}"));
}
