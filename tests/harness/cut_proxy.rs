//! A loopback TCP proxy in front of a server (PostgreSQL, for the failover tests) whose
//! line a test can cut: [`CutProxy::cut`] drops every connection through it and closes
//! each new one at once, as a network between a daemon and its database that fails;
//! [`CutProxy::heal`] lets new connections through again. Bytes pass unread both ways.
//!
//! It runs on std threads (one accepting, two per connection), so it works the same from
//! a blocking test, a bench or any tokio runtime. Every connection is shut down when the
//! line is cut or the proxy dropped, which ends its threads.

use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use super::HarnessError;

/// How often the accepting thread looks whether the proxy was dropped.
const ACCEPT_POLL: Duration = Duration::from_millis(20);

/// What the accepting thread and the test share.
#[derive(Default)]
struct Line {
    cut: AtomicBool,
    closed: AtomicBool,
    /// Both ends of every connection passed on, to shut down at a cut.
    open: Mutex<Vec<(TcpStream, TcpStream)>>,
    passed: AtomicUsize,
    refused: AtomicUsize,
}

impl Line {
    fn drop_all(&self) {
        for (client, server) in self.open.lock().expect("the proxy's connections").drain(..) {
            let _ = client.shutdown(Shutdown::Both);
            let _ = server.shutdown(Shutdown::Both);
        }
    }
}

/// A proxy on a free loopback port to one upstream address. Dropping it drops every
/// connection and stops accepting.
pub struct CutProxy {
    addr: SocketAddr,
    line: Arc<Line>,
}

impl CutProxy {
    /// Starts a proxy to `upstream` (a loopback address) on a free port of 127.0.0.1.
    pub fn start(upstream: SocketAddr) -> Result<CutProxy, HarnessError> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .map_err(HarnessError::io("binding the cut proxy on 127.0.0.1"))?;
        listener
            .set_nonblocking(true)
            .map_err(HarnessError::io("making the cut proxy's listener non-blocking"))?;
        let addr = listener.local_addr().map_err(HarnessError::io("reading the cut proxy's address"))?;
        let line = Arc::new(Line::default());
        let shared = line.clone();
        thread::Builder::new()
            .name("cut-proxy".into())
            .spawn(move || accept(&listener, upstream, &shared))
            .map_err(HarnessError::io("starting the cut proxy's thread"))?;
        Ok(CutProxy { addr, line })
    }

    /// The proxy's port (give the client `127.0.0.1:port` instead of the server's).
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Drops every connection through the proxy and closes each new one at once, until
    /// [`CutProxy::heal`].
    pub fn cut(&self) {
        self.line.cut.store(true, Ordering::SeqCst);
        self.line.drop_all();
    }

    /// Lets new connections through again (the ones cut stay closed).
    pub fn heal(&self) {
        self.line.cut.store(false, Ordering::SeqCst);
    }

    /// Whether the line is cut now.
    pub fn is_cut(&self) -> bool {
        self.line.cut.load(Ordering::SeqCst)
    }

    /// How many connections were passed on to the server so far.
    pub fn passed(&self) -> usize {
        self.line.passed.load(Ordering::SeqCst)
    }

    /// How many connections were closed at once because the line was cut.
    pub fn refused(&self) -> usize {
        self.line.refused.load(Ordering::SeqCst)
    }
}

impl Drop for CutProxy {
    fn drop(&mut self) {
        self.line.closed.store(true, Ordering::SeqCst);
        self.line.drop_all();
    }
}

/// Accepts until the proxy is dropped: each client is passed on, or closed while cut.
fn accept(listener: &TcpListener, upstream: SocketAddr, line: &Line) {
    while !line.closed.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((client, _)) => {
                if line.cut.load(Ordering::SeqCst) {
                    line.refused.fetch_add(1, Ordering::SeqCst);
                    let _ = client.shutdown(Shutdown::Both);
                } else if let Err(e) = pass_on(client, upstream, line) {
                    eprintln!("cut proxy: a connection to {upstream} failed: {e}");
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => thread::sleep(ACCEPT_POLL),
            Err(e) => {
                eprintln!("cut proxy: accepting failed: {e}");
                thread::sleep(ACCEPT_POLL);
            }
        }
    }
}

/// Connects to the server and copies bytes both ways, each way on a thread of its own.
fn pass_on(client: TcpStream, upstream: SocketAddr, line: &Line) -> io::Result<()> {
    client.set_nonblocking(false)?;
    let server = TcpStream::connect_timeout(&upstream, Duration::from_secs(5))?;
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    line.open.lock().expect("the proxy's connections").push((client.try_clone()?, server.try_clone()?));
    line.passed.fetch_add(1, Ordering::SeqCst);
    let (client_read, server_write) = (client.try_clone()?, server.try_clone()?);
    thread::Builder::new().name("cut-proxy-up".into()).spawn(move || copy(client_read, server_write))?;
    thread::Builder::new().name("cut-proxy-down".into()).spawn(move || copy(server, client))?;
    Ok(())
}

/// Copies until either side ends or fails, then shuts both down.
pub(super) fn copy(mut from: TcpStream, mut to: TcpStream) {
    let mut buffer = [0u8; 16 * 1024];
    loop {
        match from.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if to.write_all(&buffer[..n]).is_err() {
                    break;
                }
            }
        }
    }
    let _ = from.shutdown(Shutdown::Both);
    let _ = to.shutdown(Shutdown::Both);
}
