//! Real servers for the end-to-end tests: [`inspircd`] starts and stops an InspIRCd on a
//! free loopback port from a config in a temp dir, and [`irc_client`] is a small raw IRC
//! client that plays a human user against it ([`irc_player`]: one facing the bot). [`synapse`] and [`matrix_client`] do the
//! same for Matrix; [`fault_proxy`] stands in front of a server and fails chosen requests.
//! [`atheme`] links Atheme services (NickServ, SASL) to an InspIRCd, and [`certs`] makes
//! the certificates for its TLS listeners and for CertFP. [`daemon`] runs `spellbridge run`
//! as a child process and [`endpoint`] reads its `/healthz` and `/metrics`; [`chromium`]
//! drives a headless Chromium over the DevTools protocol, to look at the spectator site,
//! and [`site_flood`] floods that site as hostile spectators would. [`postgres`] makes a
//! throwaway PostgreSQL cluster (initdb in a temp dir, a free loopback port) and
//! [`cut_proxy`] a TCP proxy in front of it whose line a test cuts ([`commit_cut`]: cut
//! at a `COMMIT`, its answer dropped or the `COMMIT` itself); [`pair`] runs two
//! daemons on one PostgreSQL (active and standby) and reads each one's role.
//! All report failures as a [`HarnessError`] whose message says what to do.

use std::time::Duration;

pub mod atheme;
pub mod certs;
pub mod chromium;
pub mod commit_cut;
pub mod cut_proxy;
pub mod daemon;
pub mod endpoint;
pub mod fault_proxy;
pub mod inspircd;
pub mod irc_client;
pub mod irc_player;
pub mod matrix_client;
pub mod pair;
pub mod postgres;
pub mod site_flood;
pub mod synapse;

/// Why a test server or test client could not do what a test asked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HarnessError {
    /// The server binary is missing.
    #[error(
        "InspIRCd is not installed ({binary} is missing): run tests/scripts/install-inspircd.sh (or the README's test command, bash scripts/test.sh, which installs it)"
    )]
    NotInstalled {
        /// The path looked at.
        binary: String,
    },
    /// Chromium is missing.
    #[error(
        "Chromium is not installed ({binary} is missing): run tests/scripts/install-chromium.sh \
         (Debian's chromium package; or the README's test command, bash scripts/test.sh, which installs it)"
    )]
    ChromiumNotInstalled {
        /// The path looked at.
        binary: String,
    },
    /// Chromium did not do what the test asked over the DevTools protocol.
    #[error("Chromium: {0}")]
    Browser(String),
    /// The services binary is missing.
    #[error("Atheme is not installed ({binary} is missing): run tests/scripts/install-atheme.sh")]
    ServicesNotInstalled {
        /// The path looked at.
        binary: String,
    },
    /// The services did not link to InspIRCd in time.
    #[error("Atheme did not link to InspIRCd within {waited:?}\n--- its output ends:\n{log_tail}")]
    ServicesNotLinked {
        /// How long the harness waited.
        waited: Duration,
        /// The last lines the services printed.
        log_tail: String,
    },
    /// PostgreSQL's programs are missing.
    #[error(
        "PostgreSQL is not installed ({binary} is missing): run tests/scripts/install-postgres.sh \
         (Debian's postgresql package; or the README's test command, bash scripts/test.sh, which installs it)"
    )]
    PostgresNotInstalled {
        /// The path looked for.
        binary: String,
    },
    /// The PostgreSQL cluster could not be made, started or queried.
    #[error("PostgreSQL on port {port}: {what} failed: {reason}\n--- its output ends:\n{log_tail}")]
    Postgres {
        /// What the harness was doing.
        what: String,
        /// The port it was given (0 before one was chosen).
        port: u16,
        /// What went wrong.
        reason: String,
        /// The last lines the server printed.
        log_tail: String,
    },
    /// A file or process operation failed.
    #[error("{what}: {source}")]
    Io {
        /// What the harness was doing.
        what: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The server exited while starting or could not bind its port.
    #[error("InspIRCd on port {port} failed to start: {reason}\n--- its output ends:\n{log_tail}")]
    StartFailed {
        /// The port it was given.
        port: u16,
        /// What went wrong.
        reason: String,
        /// The last lines the server printed.
        log_tail: String,
    },
    /// The server did not register a client in time.
    #[error(
        "InspIRCd on port {port} did not register a client within {waited:?}: {reason}\n\
         --- its output ends:\n{log_tail}"
    )]
    NotReady {
        /// The port it listens on.
        port: u16,
        /// How long the harness waited.
        waited: Duration,
        /// The last thing that went wrong.
        reason: String,
        /// The last lines the server printed.
        log_tail: String,
    },
    /// A fixed port asked for (`inspircd::Options::port`, `synapse::Options::port`) is
    /// taken by another process.
    #[error(
        "{server} cannot listen on 127.0.0.1:{port}: {reason}; stop whatever uses that port \
         (`ss -ltnp 'sport = :{port}'` shows it) or choose another port"
    )]
    PortInUse {
        /// Which server: "InspIRCd" or "Synapse".
        server: &'static str,
        /// The port asked for.
        port: u16,
        /// What failed.
        reason: String,
    },
    /// A test client did not get what it waited for.
    #[error("IRC client {nick}: {reason}")]
    Client {
        /// The client's nick.
        nick: String,
        /// What it waited for, and the lines it saw instead.
        reason: String,
    },
}

impl HarnessError {
    fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> HarnessError {
        let what = what.into();
        move |source| HarnessError::Io { what, source }
    }
}

/// Fails with [`HarnessError::PortInUse`] unless `127.0.0.1:port` can be bound now (a
/// quick check before a server is started on a fixed port).
pub(crate) fn check_port_free(server: &'static str, port: u16) -> Result<(), HarnessError> {
    std::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, port))
        .map(drop)
        .map_err(|e| HarnessError::PortInUse { server, port, reason: e.to_string() })
}

/// Stops a server child: SIGTERM (std cannot send it and the workspace forbids unsafe
/// code, so through kill(1)), then SIGKILL once `timeout` has passed. `what` names the
/// server in the error.
pub(crate) fn terminate(
    mut child: std::process::Child,
    timeout: Duration,
    what: &str,
) -> Result<(), HarnessError> {
    if child.try_wait().ok().flatten().is_some() {
        return Ok(());
    }
    let _ = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
    let deadline = std::time::Instant::now() + timeout;
    while std::time::Instant::now() < deadline {
        match child.try_wait() {
            Ok(Some(_)) => return Ok(()),
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(_) => break,
        }
    }
    let _ = child.kill();
    child.wait().map(|_| ()).map_err(HarnessError::io(format!("waiting for {what} to exit")))
}
