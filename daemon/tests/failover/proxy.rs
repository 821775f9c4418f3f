//! The cut proxy itself, in front of a real PostgreSQL: a session through it works, a cut
//! ends that session and closes new ones, and after a heal new sessions work again.

use std::io::{Read, Write};
use std::net::TcpStream;

use super::support::*;

/// PostgreSQL's SSLRequest: 8 bytes, answered with one byte (`N`: no TLS here).
const SSL_REQUEST: [u8; 8] = [0, 0, 0, 8, 4, 210, 22, 47];

/// Opens a connection through the proxy and asks for TLS: PostgreSQL's one-byte answer,
/// or the error.
fn ask(port: u16) -> std::io::Result<(TcpStream, u8)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    stream.write_all(&SSL_REQUEST)?;
    let mut answer = [0u8; 1];
    stream.read_exact(&mut answer)?;
    Ok((stream, answer[0]))
}

#[test]
fn the_cut_proxy_passes_postgresql_on_drops_it_when_cut_and_passes_again_when_healed() {
    let pg = Postgres::start_new().unwrap_or_else(|e| panic!("PostgreSQL is needed for this test: {e}"));
    let proxy = CutProxy::start(([127, 0, 0, 1], pg.port()).into()).unwrap_or_else(|e| panic!("{e}"));
    let (mut open, answer) = ask(proxy.port()).unwrap_or_else(|e| panic!("through the proxy: {e}"));
    assert_eq!(answer, b'N', "PostgreSQL answered through the proxy");
    proxy.cut();
    assert!(proxy.is_cut());
    let mut buffer = [0u8; 16];
    let ended = open.read(&mut buffer);
    assert!(matches!(ended, Ok(0) | Err(_)), "the open session ended at the cut: {ended:?}");
    assert!(ask(proxy.port()).is_err(), "a new session is closed while cut");
    assert_eq!(proxy.refused(), 1);
    proxy.heal();
    let (_, answer) = ask(proxy.port()).unwrap_or_else(|e| panic!("after the heal: {e}"));
    assert_eq!(answer, b'N');
    assert_eq!(proxy.passed(), 2, "two sessions passed on, one closed");
}
