//! An InspIRCd 3 (Debian package `inspircd`, installed by
//! `tests/scripts/install-inspircd.sh`) on a free loopback port (or a fixed one,
//! [`Options::port`]), configured from a temp dir, for one test. Facts this relies on
//! (checked on InspIRCd 3.15, Debian 12):
//!
//! - It runs in the foreground with `--nofork --nopid`, refuses root without
//!   `--runasroot`, and stops on SIGTERM in about 1.3 s.
//! - A client registers on the server's 1-second timer: every connect takes ~1 s, so
//!   tests connect their clients in parallel. The ready check is such a registration.
//! - When its port is taken it only warns ("Some of your listeners failed to bind") and
//!   keeps running with no listener, so a ready check could reach another server on that
//!   port. The config therefore names a network unique to this instance, and the ready
//!   check requires that name in numeric 001; a start that loses its port to another
//!   process retries on a new one.
//! - A client's `softsendq` is what InspIRCd buffers for it before it stops reading that
//!   client's own lines; it starts again only when more arrive. A bench client that sends
//!   thousands of commands before reading the answers (and the channel's echo of the
//!   others') passed 1 MiB, and the run stalled ~17 s (issue 30: it looked like a
//!   regression of the daemon's); the main port's is 16 MiB.
//! - `<connect threshold commandrate fakelag …>` values below turn flood penalties off
//!   (with `threshold="5"` a fast client is killed for Excess Flood);
//!   `<performance netbuffersize="65534">` is the largest value it accepts (a larger one
//!   is ignored, and the default 10240 stalls large writes for 1–5 s).
//!
//! The API is blocking (std only), so it works from plain and async tests alike; in a
//! `#[tokio::test]` it blocks the runtime while it starts or stops (about 1–3 s).

use std::fs::{self, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use super::HarnessError;

/// Where the Debian package installs the server.
pub const BINARY: &str = "/usr/sbin/inspircd";

/// The server's name, as clients see it in prefixes and numerics.
pub const SERVER_NAME: &str = "irc.test";

/// The services server's name ([`Options::services`]).
pub const SERVICES_NAME: &str = "services.irc.test";

/// The link password between InspIRCd and the services.
pub const LINK_PASSWORD: &str = "spellbridge-link";

/// IRCv3 and other modules loaded (SERVERS.md), as the daemon's transport expects them.
const MODULES: &[&str] = &[
    "cap",
    "ircv3",
    "ircv3_servertime",
    "ircv3_msgid",
    "ircv3_ctctags",
    "ircv3_batch",
    "ircv3_capnotify",
    "ircv3_accounttag",
    "ircv3_chghost",
    "ircv3_echomessage",
    "ircv3_labeledresponse",
    "botmode",
    "namesx",
    "uhnames",
    "monitor",
];

/// How a test server is set up.
#[derive(Clone, Debug)]
pub struct Options {
    /// Whether the server penalises fast clients as a public network does (fake lag,
    /// then a disconnect for Excess Flood). Off by default, so tests can be fast.
    pub flood_penalties: bool,
    /// How long a start may take until a client registers.
    pub ready_timeout: Duration,
    /// How long `stop` waits after SIGTERM before it sends SIGKILL.
    pub stop_timeout: Duration,
    /// Listen on this loopback port instead of a free one the harness picks (the quick
    /// start's well-known 6667). A taken port is then [`HarnessError::PortInUse`], and no
    /// other port is tried. `None` by default.
    pub port: Option<u16>,
    /// Also listen on a second free port ([`InspIrcd::strict_port`]) whose clients are
    /// treated as on a public network: InspIRCd's default flood penalties (fake lag after
    /// a burst) and its default receive queue of 8 KiB, so a client that writes too much
    /// too fast is disconnected ("RecvQ exceeded"). Clients on the main port are not.
    /// Off by default.
    pub strict_port: bool,
    /// TLS listeners, one per certificate (see [`InspIrcd::tls_port`]), each serving its
    /// certificate with GnuTLS and asking clients for theirs (CertFP, SHA-256).
    pub tls: Vec<super::certs::Pem>,
    /// Listen for a services server ([`super::atheme`], `services.irc.test`) and load the
    /// modules SASL and accounts need (spanningtree, services_account, sasl, svshold).
    /// Off by default.
    pub services: bool,
    /// Load `ircv3_accounttag`, so messages carry the sender's services account in an
    /// `account` tag. On by default; off, clients learn accounts only from
    /// `extended-join`, `account-notify` and WHOX, as on a network without the tag.
    pub account_tag: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            flood_penalties: false,
            ready_timeout: Duration::from_secs(20),
            stop_timeout: Duration::from_secs(5),
            port: None,
            strict_port: false,
            tls: Vec::new(),
            services: false,
            account_tag: true,
        }
    }
}

/// A running (or stopped, between `stop` and `restart`) InspIRCd. Dropping it stops
/// the server; the temp dir with its config and output goes with it.
pub struct InspIrcd {
    options: Options,
    port: u16,
    strict_port: Option<u16>,
    tls_ports: Vec<u16>,
    services_port: Option<u16>,
    network: String,
    dir: tempfile::TempDir,
    child: Option<Child>,
    last_start: Duration,
}

impl InspIrcd {
    /// Starts a server with the default [`Options`] (no flood penalties) and waits until
    /// a client can register.
    pub fn start() -> Result<Self, HarnessError> {
        Self::start_with(Options::default())
    }

    /// Starts a server set up as `options` say and waits until a client can register.
    pub fn start_with(options: Options) -> Result<Self, HarnessError> {
        if !Path::new(BINARY).exists() {
            return Err(HarnessError::NotInstalled { binary: BINARY.to_owned() });
        }
        let fixed_port = options.port;
        if let Some(port) = fixed_port {
            super::check_port_free("InspIRCd", port)?;
        }
        let dir = tempfile::Builder::new()
            .prefix("spellbridge-inspircd-")
            .tempdir()
            .map_err(HarnessError::io("creating the InspIRCd temp dir"))?;
        for sub in ["conf", "data", "logs", "run"] {
            let path = dir.path().join(sub);
            fs::create_dir_all(&path).map_err(HarnessError::io(format!("creating {}", path.display())))?;
        }
        static INSTANCES: AtomicU32 = AtomicU32::new(0);
        let network =
            format!("spellbridge-{}-{}", std::process::id(), INSTANCES.fetch_add(1, Ordering::Relaxed));
        let mut server = Self {
            options,
            port: 0,
            strict_port: None,
            tls_ports: Vec::new(),
            services_port: None,
            network,
            dir,
            child: None,
            last_start: Duration::ZERO,
        };
        // Another process may take the free port between our probe and the server's
        // bind: then try another one.
        let mut attempts = 0;
        loop {
            attempts += 1;
            server.port = match fixed_port {
                Some(port) => port,
                None => free_port()?,
            };
            if server.options.strict_port {
                let mut strict = free_port()?;
                while strict == server.port {
                    strict = free_port()?;
                }
                server.strict_port = Some(strict);
            }
            let mut taken = vec![server.port];
            taken.extend(server.strict_port);
            server.tls_ports = (0..server.options.tls.len())
                .map(|_| other_free_port(&mut taken))
                .collect::<Result<_, _>>()?;
            server.services_port =
                if server.options.services { Some(other_free_port(&mut taken)?) } else { None };
            server.write_config()?;
            match server.launch() {
                Err(HarnessError::StartFailed { reason, .. })
                    if reason.contains(PORT_TAKEN) && attempts < 3 && fixed_port.is_none() =>
                {
                    server.stop()?;
                }
                Err(HarnessError::StartFailed { port, reason, .. })
                    if reason.contains(PORT_TAKEN) && fixed_port.is_some() =>
                {
                    let _ = server.stop();
                    return Err(HarnessError::PortInUse { server: "InspIRCd", port, reason });
                }
                Err(e) => {
                    let _ = server.stop();
                    return Err(e);
                }
                Ok(()) => return Ok(server),
            }
        }
    }

    /// The port the server listens on (the same across restarts).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The second port of [`Options::strict_port`], with a public network's flood
    /// penalties and receive queue; `None` without that option.
    pub fn strict_port(&self) -> Option<u16> {
        self.strict_port
    }

    /// The port of the `index`th TLS listener of [`Options::tls`].
    pub fn tls_port(&self, index: usize) -> Option<u16> {
        self.tls_ports.get(index).copied()
    }

    /// The port a services server links to, with [`Options::services`].
    pub fn services_port(&self) -> Option<u16> {
        self.services_port
    }

    /// The temp dir holding the config (certificates written for the TLS listeners too).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// `127.0.0.1:port`.
    pub fn address(&self) -> SocketAddr {
        SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::LOCALHOST, self.port))
    }

    /// The network name in the config, unique to this instance (it appears in 001 and
    /// in `NETWORK=` of 005).
    pub fn network(&self) -> &str {
        &self.network
    }

    /// The process id of the running server, or `None` when stopped.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// The config file.
    pub fn config_path(&self) -> PathBuf {
        self.dir.path().join("conf").join("inspircd.conf")
    }

    /// How long the last start or restart took until a client registered.
    pub fn last_start_time(&self) -> Duration {
        self.last_start
    }

    /// The last `lines` lines the server printed (all runs, for failure messages).
    pub fn output_tail(&self, lines: usize) -> String {
        tail(&self.output_path(), lines)
    }

    /// Stops the server: SIGTERM, then SIGKILL after [`Options::stop_timeout`]. Does
    /// nothing when it is not running.
    pub fn stop(&mut self) -> Result<(), HarnessError> {
        match self.child.take() {
            Some(child) => super::terminate(child, self.options.stop_timeout, "InspIRCd"),
            None => Ok(()),
        }
    }

    /// Stops the server and starts it again on the same port with the same config, as a
    /// network's server restart looks to its clients (every connection is closed).
    pub fn restart(&mut self) -> Result<(), HarnessError> {
        self.stop()?;
        self.launch()
    }

    fn output_path(&self) -> PathBuf {
        self.dir.path().join("inspircd.out")
    }

    /// Spawns the server from the written config and waits until a client registers.
    fn launch(&mut self) -> Result<(), HarnessError> {
        let started = Instant::now();
        let output = OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.output_path())
            .map_err(HarnessError::io("opening the InspIRCd output file"))?;
        let output_offset = output.metadata().map(|m| m.len()).unwrap_or(0);
        let stderr = output.try_clone().map_err(HarnessError::io("sharing the InspIRCd output file"))?;
        let child = Command::new(BINARY)
            .arg("--config")
            .arg(self.config_path())
            .args(["--nofork", "--nopid", "--runasroot"])
            // A core dump (InspIRCd 3.15 sometimes crashes on SIGTERM while a services
            // server is linked) stays in the temp dir, not in the source tree.
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .stdout(output)
            .stderr(stderr)
            .spawn()
            .map_err(HarnessError::io(format!("starting {BINARY}")))?;
        self.child = Some(child);
        self.wait_ready(started, output_offset)?;
        self.last_start = started.elapsed();
        Ok(())
    }

    fn wait_ready(&mut self, started: Instant, output_offset: u64) -> Result<(), HarnessError> {
        let deadline = started + self.options.ready_timeout;
        let mut last_problem = String::from("its port never accepted a connection");
        loop {
            let this_run = read_from(&self.output_path(), output_offset);
            if this_run.contains("listeners failed to bind") {
                return Err(self.start_failed(PORT_TAKEN.to_owned()));
            }
            if let Some(child) = self.child.as_mut()
                && let Ok(Some(status)) = child.try_wait()
            {
                self.child = None;
                return Err(self.start_failed(format!("it exited ({status})")));
            }
            if Instant::now() >= deadline {
                return Err(HarnessError::NotReady {
                    port: self.port,
                    waited: self.options.ready_timeout,
                    reason: last_problem,
                    log_tail: self.output_tail(30),
                });
            }
            match probe(self.address(), &self.network, deadline) {
                Ok(()) => return Ok(()),
                Err(Probe::NotOurs(welcome)) => {
                    return Err(
                        self.start_failed(format!("{PORT_TAKEN}: another server answered: {welcome}"))
                    );
                }
                Err(Probe::Failed(problem)) => last_problem = problem,
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    fn start_failed(&self, reason: String) -> HarnessError {
        HarnessError::StartFailed { port: self.port, reason, log_tail: self.output_tail(30) }
    }

    fn write_config(&self) -> Result<(), HarnessError> {
        for (index, pem) in self.options.tls.iter().enumerate() {
            pem.write(&self.dir.path().join("conf"), &format!("tls{index}"))?;
        }
        let path = self.config_path();
        fs::write(&path, self.config()).map_err(HarnessError::io(format!("writing {}", path.display())))
    }

    fn config(&self) -> String {
        let dir = self.dir.path().display();
        let port = self.port;
        let network = &self.network;
        let flood = if self.options.flood_penalties {
            // InspIRCd's defaults, as on a public network.
            r#"threshold="10" commandrate="1000" fakelag="yes""#
        } else {
            r#"threshold="1000000" commandrate="1000000000" fakelag="no""#
        };
        let modules: String = MODULES
            .iter()
            .filter(|m| self.options.account_tag || **m != "ircv3_accounttag")
            .map(|m| format!("<module name=\"{m}\">\n"))
            .collect();
        let tls = self.tls_config();
        let services = self.services_config();
        // The first <connect> a client matches is its class: the strict port's comes first.
        let strict = match self.strict_port {
            Some(strict) => format!(
                r#"<bind address="127.0.0.1" port="{strict}" type="clients">
<connect name="strict" port="{strict}" allow="*" resolvehostnames="no" useident="no"
         threshold="10" commandrate="1000" fakelag="yes" recvq="8K" softsendq="8K" hardsendq="1M"
         localmax="10000" globalmax="10000" maxchans="20" timeout="20" pingfreq="120">
"#
            ),
            None => String::new(),
        };
        format!(
            r#"# Written by spellbridge's test harness (tests/harness/inspircd.rs).
<server name="{SERVER_NAME}" description="spellbridge test server" network="{network}">
<admin name="spellbridge tests" nick="admin" email="admin@{SERVER_NAME}">
<bind address="127.0.0.1" port="{port}" type="clients">
{strict}<connect name="main" allow="*" resolvehostnames="no" useident="no" {flood}
         localmax="10000" globalmax="10000" maxchans="1000"
         recvq="1M" softsendq="16M" hardsendq="64M" timeout="20" pingfreq="120">
<performance netbuffersize="65534" somaxconn="128">
<path configdir="{dir}/conf" datadir="{dir}/data" logdir="{dir}/logs"
      runtimedir="{dir}/run" moduledir="/usr/lib/inspircd/modules">
<dns server="127.0.0.1" timeout="1">
<log method="file" type="* -USERINPUT -USEROUTPUT" level="default" target="{dir}/logs/ircd.log">
{modules}{tls}{services}"#
        )
    }

    /// One GnuTLS profile and listener per certificate; client certificates are asked for
    /// and their SHA-256 is the CertFP services see.
    fn tls_config(&self) -> String {
        if self.tls_ports.is_empty() {
            return String::new();
        }
        let conf = self.dir.path().join("conf");
        let mut text = String::from("<module name=\"ssl_gnutls\">\n<module name=\"sslinfo\">\n");
        for (index, port) in self.tls_ports.iter().enumerate() {
            let cert = conf.join(format!("tls{index}.pem"));
            let key = conf.join(format!("tls{index}.key"));
            text.push_str(&format!(
                r#"<sslprofile name="tls{index}" provider="gnutls" certfile="{}" keyfile="{}" dhfile="" hash="sha256" requestclientcert="yes">
<bind address="127.0.0.1" port="{port}" type="clients" ssl="tls{index}">
"#,
                cert.display(),
                key.display()
            ));
        }
        text
    }

    /// The link block and modules for Atheme ([`super::atheme`]).
    fn services_config(&self) -> String {
        let Some(port) = self.services_port else { return String::new() };
        format!(
            r#"<module name="spanningtree">
<module name="services_account">
<module name="sasl">
<module name="svshold">
<bind address="127.0.0.1" port="{port}" type="servers">
<link name="{SERVICES_NAME}" ipaddr="127.0.0.1" port="{port}" allowmask="127.0.0.0/8"
      sendpass="{LINK_PASSWORD}" recvpass="{LINK_PASSWORD}">
<uline server="{SERVICES_NAME}" silent="yes">
<sasl target="{SERVICES_NAME}">
"#
        )
    }
}

impl Drop for InspIrcd {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

const PORT_TAKEN: &str = "its port was taken by another process";

/// A loopback port nobody listens on now (the kernel's pick for port 0).
fn free_port() -> Result<u16, HarnessError> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .map_err(HarnessError::io("binding 127.0.0.1:0 to find a free port"))?;
    listener.local_addr().map(|addr| addr.port()).map_err(HarnessError::io("reading the free port"))
}

/// A free port not in `taken`, added to it.
fn other_free_port(taken: &mut Vec<u16>) -> Result<u16, HarnessError> {
    loop {
        let port = free_port()?;
        if !taken.contains(&port) {
            taken.push(port);
            return Ok(port);
        }
    }
}

enum Probe {
    /// Not ready yet (or not at all): why.
    Failed(String),
    /// A server answered with another network's welcome.
    NotOurs(String),
}

/// Connects and registers a client; ready when numeric 001 names our network.
fn probe(address: SocketAddr, network: &str, deadline: Instant) -> Result<(), Probe> {
    // A fresh nick per probe, so a half-registered earlier probe cannot hold it.
    static PROBES: AtomicU32 = AtomicU32::new(0);
    let nick = format!("ready{}", PROBES.fetch_add(1, Ordering::Relaxed));
    let remaining = |what: &str| {
        deadline
            .checked_duration_since(Instant::now())
            .filter(|d| !d.is_zero())
            .ok_or_else(|| Probe::Failed(format!("timed out {what}")))
    };
    let connect_timeout = remaining("connecting")?.min(Duration::from_millis(500));
    let mut stream = TcpStream::connect_timeout(&address, connect_timeout)
        .map_err(|e| Probe::Failed(format!("connecting to {address}: {e}")))?;
    let _ = stream.set_nodelay(true);
    stream
        .write_all(format!("NICK {nick}\r\nUSER ready 0 * :spellbridge harness\r\n").as_bytes())
        .map_err(|e| Probe::Failed(format!("sending NICK/USER: {e}")))?;
    let mut reader =
        BufReader::new(stream.try_clone().map_err(|e| Probe::Failed(format!("cloning the socket: {e}")))?);
    let mut line = Vec::new();
    loop {
        stream
            .set_read_timeout(Some(remaining("waiting for 001")?))
            .map_err(|e| Probe::Failed(format!("setting a read timeout: {e}")))?;
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) => {
                return Err(Probe::Failed("the server closed the connection before 001".into()));
            }
            Ok(_) => {}
            Err(e) => return Err(Probe::Failed(format!("waiting for 001: {e}"))),
        }
        let text = String::from_utf8_lossy(&line);
        let mut words = text.split(' ');
        if let (Some(_prefix), Some("001")) = (words.next(), words.next()) {
            let _ = stream.write_all(b"QUIT :ready\r\n");
            return if text.contains(&format!(" {network} ")) {
                Ok(())
            } else {
                Err(Probe::NotOurs(text.trim_end().to_owned()))
            };
        }
        if let Some(token) = text.strip_prefix("PING ") {
            let _ = stream.write_all(format!("PONG {}\r\n", token.trim_end()).as_bytes());
        }
    }
}

/// What the file holds from `offset` on (empty when it cannot be read).
fn read_from(path: &Path, offset: u64) -> String {
    let bytes = fs::read(path).unwrap_or_default();
    let start = usize::try_from(offset).unwrap_or(usize::MAX).min(bytes.len());
    String::from_utf8_lossy(&bytes[start..]).into_owned()
}

/// The last `lines` lines of a file.
fn tail(path: &Path, lines: usize) -> String {
    let text = read_from(path, 0);
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_keeps_the_last_lines() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("out");
        fs::write(&path, "a\nb\nc\n").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(tail(&path, 2), "b\nc");
        assert_eq!(tail(&path, 10), "a\nb\nc");
        assert_eq!(read_from(&path, 4), "c\n");
        assert_eq!(read_from(&path, 100), "");
        assert_eq!(tail(&dir.path().join("missing"), 3), "");
    }
}
