//! A loopback proxy in front of two daemons' Matrix appservice listeners that sends each
//! new connection to whichever daemon answers `GET /leader` with 200 (the active one), as
//! HAProxy's `option httpchk GET /leader` would (docs/failover.md). The homeserver is
//! given the proxy's URL in the registration, so its transactions follow the lease.
//!
//! Each connection is routed when it is accepted: `/leader` of each backend is asked then
//! (1 s at most each) and bytes pass unread to the first that answers 200; with none
//! active the connection is closed at once (the homeserver retries its transaction
//! later). Std threads, like [`CutProxy`](super::cut_proxy::CutProxy); dropping the proxy
//! stops accepting and shuts every connection down.

use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use super::HarnessError;
use super::cut_proxy::copy;

/// How often the accepting thread looks whether the proxy was dropped.
const ACCEPT_POLL: Duration = Duration::from_millis(20);
/// The longest one `/leader` check or one connect to a backend takes.
const CHECK_TIMEOUT: Duration = Duration::from_secs(1);

/// One daemon behind the proxy: where it answers `/leader` and where it takes the traffic.
#[derive(Clone, Copy, Debug)]
pub struct Backend {
    /// Its `[http] listen` port (`/leader`).
    pub http: u16,
    /// Its appservice `listen` port.
    pub target: u16,
}

#[derive(Default)]
struct Routes {
    backends: Mutex<Vec<Backend>>,
    closed: AtomicBool,
    open: Mutex<Vec<(TcpStream, TcpStream)>>,
    /// Connections passed on to each backend (by index) and refused with none active.
    passed: Mutex<Vec<usize>>,
    refused: AtomicUsize,
}

/// The proxy, on a free port of 127.0.0.1.
pub struct LeaderProxy {
    addr: SocketAddr,
    routes: Arc<Routes>,
}

impl LeaderProxy {
    /// Starts the proxy with no backends yet ([`LeaderProxy::route_to`]): every connection
    /// is closed until then.
    pub fn start() -> Result<LeaderProxy, HarnessError> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .map_err(HarnessError::io("binding the leader proxy on 127.0.0.1"))?;
        listener.set_nonblocking(true).map_err(HarnessError::io("making the leader proxy non-blocking"))?;
        let addr = listener.local_addr().map_err(HarnessError::io("reading the leader proxy's address"))?;
        let routes = Arc::new(Routes::default());
        let shared = routes.clone();
        thread::Builder::new()
            .name("leader-proxy".into())
            .spawn(move || accept(&listener, &shared))
            .map_err(HarnessError::io("starting the leader proxy's thread"))?;
        Ok(LeaderProxy { addr, routes })
    }

    /// The proxy's port.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// The daemons to route to, in the order they are asked.
    pub fn route_to(&self, backends: &[Backend]) {
        *self.routes.backends.lock().expect("the proxy's backends") = backends.to_vec();
        *self.routes.passed.lock().expect("the proxy's counts") = vec![0; backends.len()];
    }

    /// How many connections went to backend `which` so far.
    pub fn passed(&self, which: usize) -> usize {
        self.routes.passed.lock().expect("the proxy's counts").get(which).copied().unwrap_or(0)
    }

    /// How many connections were closed because no backend was active.
    pub fn refused(&self) -> usize {
        self.routes.refused.load(Ordering::SeqCst)
    }
}

impl Drop for LeaderProxy {
    fn drop(&mut self) {
        self.routes.closed.store(true, Ordering::SeqCst);
        for (client, server) in self.routes.open.lock().expect("the proxy's connections").drain(..) {
            let _ = client.shutdown(Shutdown::Both);
            let _ = server.shutdown(Shutdown::Both);
        }
    }
}

/// Whether the daemon answering on `127.0.0.1:port` says `/leader` 200.
fn leads(port: u16) -> bool {
    let ask = || -> io::Result<bool> {
        let mut stream =
            TcpStream::connect_timeout(&SocketAddr::from((Ipv4Addr::LOCALHOST, port)), CHECK_TIMEOUT)?;
        stream.set_read_timeout(Some(CHECK_TIMEOUT))?;
        stream.write_all(b"GET /leader HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")?;
        let mut head = [0u8; 12];
        stream.read_exact(&mut head)?;
        Ok(head.starts_with(b"HTTP/1.1 200") || head.starts_with(b"HTTP/1.0 200"))
    };
    ask().unwrap_or(false)
}

fn accept(listener: &TcpListener, routes: &Routes) {
    while !routes.closed.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((client, _)) => {
                let backends = routes.backends.lock().expect("the proxy's backends").clone();
                match backends.iter().position(|b| leads(b.http)) {
                    Some(which) => {
                        if let Err(e) = pass_on(client, backends[which].target, which, routes) {
                            eprintln!("leader proxy: a connection to daemon {which} failed: {e}");
                        }
                    }
                    None => {
                        routes.refused.fetch_add(1, Ordering::SeqCst);
                        let _ = client.shutdown(Shutdown::Both);
                    }
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => thread::sleep(ACCEPT_POLL),
            Err(e) => {
                eprintln!("leader proxy: accepting failed: {e}");
                thread::sleep(ACCEPT_POLL);
            }
        }
    }
}

fn pass_on(client: TcpStream, port: u16, which: usize, routes: &Routes) -> io::Result<()> {
    client.set_nonblocking(false)?;
    let server = TcpStream::connect_timeout(&SocketAddr::from((Ipv4Addr::LOCALHOST, port)), CHECK_TIMEOUT)?;
    routes.open.lock().expect("the proxy's connections").push((client.try_clone()?, server.try_clone()?));
    if let Some(count) = routes.passed.lock().expect("the proxy's counts").get_mut(which) {
        *count += 1;
    }
    let (client_read, server_write) = (client.try_clone()?, server.try_clone()?);
    thread::Builder::new().name("leader-proxy-up".into()).spawn(move || copy(client_read, server_write))?;
    thread::Builder::new().name("leader-proxy-down".into()).spawn(move || copy(server, client))?;
    Ok(())
}
