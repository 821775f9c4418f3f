//! A loopback TCP proxy in front of PostgreSQL that cuts a connection at its `COMMIT`, for
//! the store's commit that is cut off after `COMMIT` was sent and before its answer came
//! (issue 34). Armed with [`CommitCut::cut_next`], it watches the client's bytes for the
//! simple query `COMMIT` (how tokio-postgres and the store send it) and then either
//! passes it on, lets PostgreSQL answer and drops that answer ([`AtCommit::Made`]: the
//! commit stands, the client never hears so), or never passes it on
//! ([`AtCommit::Dropped`]: PostgreSQL sees the session end and rolls the transaction
//! back); both ways the connection is then shut down on both sides. Unarmed, bytes pass
//! unread both ways.
//!
//! It runs on std threads (one accepting, two per connection), like
//! [`super::cut_proxy`], so it works from a blocking test or any runtime.

use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use super::HarnessError;

/// The simple query `COMMIT`: message type `Q`, length 11, the text and its NUL.
const COMMIT_QUERY: &[u8] = b"Q\0\0\0\x0bCOMMIT\0";
/// `ReadyForQuery` (type `Z`, length 5): the end of the server's answer to a query.
const READY: &[u8] = b"Z\0\0\0\x05";
/// How often the accepting thread looks whether the proxy was dropped.
const ACCEPT_POLL: Duration = Duration::from_millis(20);

/// What PostgreSQL gets of a cut `COMMIT`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtCommit {
    /// It gets the `COMMIT` and answers; the answer is dropped, then the line is cut.
    Made,
    /// It never gets the `COMMIT`: the line is cut first.
    Dropped,
}

/// What the accepting thread, the connections and the test share.
#[derive(Default)]
struct Shared {
    closed: AtomicBool,
    /// How many `COMMIT`s to cut still, and how.
    armed: Mutex<Option<(usize, AtCommit)>>,
    cuts: AtomicUsize,
    /// Both ends of every connection passed on, to shut down when the proxy is dropped.
    open: Mutex<Vec<(TcpStream, TcpStream)>>,
}

impl Shared {
    /// Takes one cut from the armed ones, if any.
    fn take(&self) -> Option<AtCommit> {
        let mut armed = self.armed.lock().expect("the proxy's state");
        let (left, fate) = armed.as_mut()?;
        *left -= 1;
        let fate = *fate;
        if *left == 0 {
            *armed = None;
        }
        Some(fate)
    }
}

/// A proxy on a free loopback port to one PostgreSQL. Dropping it drops every connection
/// and stops accepting.
pub struct CommitCut {
    addr: SocketAddr,
    shared: Arc<Shared>,
}

impl CommitCut {
    /// Starts a proxy to `upstream` (a loopback address) on a free port of 127.0.0.1.
    pub fn start(upstream: SocketAddr) -> Result<CommitCut, HarnessError> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .map_err(HarnessError::io("binding the commit-cutting proxy on 127.0.0.1"))?;
        listener
            .set_nonblocking(true)
            .map_err(HarnessError::io("making the commit-cutting proxy's listener non-blocking"))?;
        let addr =
            listener.local_addr().map_err(HarnessError::io("reading the commit-cutting proxy's address"))?;
        let shared = Arc::new(Shared::default());
        let accepting = shared.clone();
        thread::Builder::new()
            .name("commit-cut".into())
            .spawn(move || accept(&listener, upstream, &accepting))
            .map_err(HarnessError::io("starting the commit-cutting proxy's thread"))?;
        Ok(CommitCut { addr, shared })
    }

    /// The proxy's port (give the client `127.0.0.1:port` instead of the server's).
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Cuts each of the next `commits` connections that send `COMMIT`, as `fate` says.
    pub fn cut_next(&self, commits: usize, fate: AtCommit) {
        *self.shared.armed.lock().expect("the proxy's state") = (commits > 0).then_some((commits, fate));
    }

    /// How many `COMMIT`s were cut so far.
    pub fn cuts(&self) -> usize {
        self.shared.cuts.load(Ordering::SeqCst)
    }
}

impl Drop for CommitCut {
    fn drop(&mut self) {
        self.shared.closed.store(true, Ordering::SeqCst);
        for (client, server) in self.shared.open.lock().expect("the proxy's connections").drain(..) {
            let _ = client.shutdown(Shutdown::Both);
            let _ = server.shutdown(Shutdown::Both);
        }
    }
}

/// Accepts until the proxy is dropped.
fn accept(listener: &TcpListener, upstream: SocketAddr, shared: &Arc<Shared>) {
    while !shared.closed.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((client, _)) => {
                if let Err(e) = pass_on(client, upstream, shared) {
                    eprintln!("commit-cutting proxy: a connection to {upstream} failed: {e}");
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => thread::sleep(ACCEPT_POLL),
            Err(e) => {
                eprintln!("commit-cutting proxy: accepting failed: {e}");
                thread::sleep(ACCEPT_POLL);
            }
        }
    }
}

/// One connection through the proxy.
struct Link {
    client: TcpStream,
    server: TcpStream,
    /// A `COMMIT` was passed on: the server's answer is dropped, and the line cut after it.
    swallow: AtomicBool,
}

impl Link {
    fn cut(&self) {
        let _ = self.client.shutdown(Shutdown::Both);
        let _ = self.server.shutdown(Shutdown::Both);
    }
}

fn pass_on(client: TcpStream, upstream: SocketAddr, shared: &Arc<Shared>) -> io::Result<()> {
    client.set_nonblocking(false)?;
    let server = TcpStream::connect_timeout(&upstream, Duration::from_secs(5))?;
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    shared.open.lock().expect("the proxy's connections").push((client.try_clone()?, server.try_clone()?));
    let link = Arc::new(Link { client, server, swallow: AtomicBool::new(false) });
    let (up, down, watched) = (link.clone(), link, shared.clone());
    thread::Builder::new().name("commit-cut-up".into()).spawn(move || client_to_server(&up, &watched))?;
    thread::Builder::new().name("commit-cut-down".into()).spawn(move || server_to_client(&down))?;
    Ok(())
}

/// Where `needle` ends in `tail` followed by `chunk`, as an index into `chunk`.
fn found(tail: &[u8], chunk: &[u8], needle: &[u8]) -> Option<usize> {
    let joined = [tail, chunk].concat();
    joined
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|at| (at + needle.len()).saturating_sub(tail.len()))
}

/// Keeps the last bytes seen, so a pattern split across two reads is still found.
fn keep_tail(tail: &mut Vec<u8>, chunk: &[u8], longest: usize) {
    tail.extend_from_slice(chunk);
    let excess = tail.len().saturating_sub(longest);
    tail.drain(..excess);
}

fn client_to_server(link: &Link, shared: &Shared) {
    let (mut from, mut to) = (&link.client, &link.server);
    let mut buffer = [0u8; 16 * 1024];
    let mut tail = Vec::new();
    loop {
        let n = match from.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let chunk = &buffer[..n];
        if let Some(end) = found(&tail, chunk, COMMIT_QUERY)
            && let Some(fate) = shared.take()
        {
            shared.cuts.fetch_add(1, Ordering::SeqCst);
            match fate {
                AtCommit::Made => {
                    // Set before the COMMIT goes, so its answer cannot slip through.
                    link.swallow.store(true, Ordering::SeqCst);
                    if to.write_all(chunk).is_err() {
                        break;
                    }
                    // The other thread cuts the line once the answer is in.
                    continue;
                }
                AtCommit::Dropped => {
                    let _ = to.write_all(&chunk[..end.saturating_sub(COMMIT_QUERY.len())]);
                    break;
                }
            }
        }
        keep_tail(&mut tail, chunk, COMMIT_QUERY.len() - 1);
        if to.write_all(chunk).is_err() {
            break;
        }
    }
    link.cut();
}

fn server_to_client(link: &Link) {
    let (mut from, mut to) = (&link.server, &link.client);
    let mut buffer = [0u8; 16 * 1024];
    let mut tail = Vec::new();
    loop {
        let n = match from.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let chunk = &buffer[..n];
        if link.swallow.load(Ordering::SeqCst) {
            // The answer to the COMMIT: dropped; the line is cut once it is all in.
            if found(&tail, chunk, READY).is_some() {
                break;
            }
            keep_tail(&mut tail, chunk, READY.len() - 1);
            continue;
        }
        if to.write_all(chunk).is_err() {
            break;
        }
    }
    link.cut();
}
