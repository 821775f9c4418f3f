//! A Synapse homeserver (PyPI `matrix-synapse` in a venv, installed by
//! `tests/scripts/install-synapse.sh`) on a free loopback port (or a fixed one,
//! [`Options::port`]), configured from a temp dir, for one test. Facts this relies on (checked on Synapse 1.163.2, Python 3.11):
//!
//! - It runs in the foreground as `python -m synapse.app.homeserver -c homeserver.yaml`
//!   (one process, its own PID) and stops on SIGTERM in ~40 ms. A start takes ~1 s
//!   (fresh database) and a restart ~0.9 s on an idle 2-core machine, about twice that
//!   with several starting at once; the ready check is `GET /_matrix/client/versions`.
//! - The signing key file is `ed25519 <key id> <unpadded base64 of a 32-byte seed>`;
//!   the harness writes it itself instead of running `--generate-keys`, which costs
//!   another ~1.3 s of Python start-up per server. Nothing federates, so the key only
//!   has to be well formed.
//! - Every rate limit is raised to `{per_second: 10000, burst_count: 100000}` unless
//!   [`Options::rate_limited`] asks for Synapse's defaults: with the defaults a test
//!   suite is soon refused (`M_LIMIT_EXCEEDED`), and login locks out for ~5 minutes
//!   after 5 tries. `bcrypt_rounds: 4` makes a login ~10 ms instead of ~250 ms.
//! - A port taken by another process between our probe and Synapse's bind makes it exit
//!   ("Address already in use"), or a ready check could reach another server there. The
//!   config therefore serves a client `.well-known` naming this instance, the ready
//!   check requires that name, and a start that loses its port retries on a new one.
//! - Users are registered through the shared-secret admin API (`/_synapse/admin/v1/register`:
//!   GET a nonce, then POST with an HMAC-SHA1 over `nonce\0user\0password\0admin|notadmin`).
//! - Room version 12 is the default: room ids have no `:server` part. Never parse one.
//!
//! The API is blocking (std only, with a small HTTP/1.0 client for the ready check and
//! registration), so it works from plain and async tests alike; in a `#[tokio::test]` it
//! blocks the runtime while it starts (~1 s), stops, or registers a user (~20 ms).
//! For a raw client-server API client that plays a human user, see
//! [`super::matrix_client`].

use std::fmt::Write as _;
use std::fs::{self, OpenOptions};
use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha1::{Digest, Sha1};

use super::HarnessError;

/// The server name: user ids are `@name:localhost`.
pub const SERVER_NAME: &str = "localhost";

/// The shared secret for `/_synapse/admin/v1/register` (a test server's, not a secret).
pub const REGISTRATION_SHARED_SECRET: &str = "spellbridge-test-registration-secret";

/// The script that installs Synapse into [`venv_dir`].
pub const INSTALL_SCRIPT: &str = "tests/scripts/install-synapse.sh";

/// Rate-limit keys whose value is one `{per_second, burst_count}` pair (SERVERS.md and
/// Synapse 1.163's `synapse/config/ratelimiting.py`).
const FLAT_RATE_LIMITS: &[&str] = &[
    "rc_message",
    "rc_registration",
    "rc_registration_token_validity",
    "rc_joins_per_room",
    "rc_room_creation",
    "rc_profile",
    "rc_key_requests",
    "rc_3pid_validation",
    "rc_third_party_invite",
    "rc_media_create",
    "rc_delayed_event_mgmt",
    "rc_reports",
    "rc_user_directory",
    "rc_admin_redaction",
];

/// Rate-limit keys with sub-keys, each a `{per_second, burst_count}` pair.
const NESTED_RATE_LIMITS: &[(&str, &[&str])] = &[
    ("rc_login", &["address", "account", "failed_attempts"]),
    ("rc_joins", &["local", "remote"]),
    ("rc_invites", &["per_room", "per_user", "per_issuer"]),
    ("rc_presence", &["per_user"]),
];

/// A raised limit: in effect none.
const NO_LIMIT: &str = "{per_second: 10000, burst_count: 100000}";

/// Where the Synapse venv is: `$SPELLBRIDGE_SYNAPSE_VENV`, or
/// `$HOME/.cache/spellbridge/synapse-venv` (as `tests/scripts/install-synapse.sh` has it).
pub fn venv_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("SPELLBRIDGE_SYNAPSE_VENV").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("/root"), PathBuf::from);
    home.join(".cache").join("spellbridge").join("synapse-venv")
}

/// How a test server is set up.
#[derive(Clone, Debug)]
pub struct Options {
    /// Whether Synapse's own default rate limits apply (as on a public homeserver), so a
    /// fast client gets `M_LIMIT_EXCEEDED`. Off by default: every limit is raised.
    pub rate_limited: bool,
    /// YAML appended to `homeserver.yaml` verbatim. A top-level key given here wins
    /// over the harness's (the YAML loader keeps the last of duplicate keys).
    pub extra_config: String,
    /// How long a start may take until `/_matrix/client/versions` answers.
    pub ready_timeout: Duration,
    /// How long `stop` waits after SIGTERM before it sends SIGKILL.
    pub stop_timeout: Duration,
    /// The venv Synapse is installed in ([`venv_dir`] by default).
    pub venv: PathBuf,
    /// Listen on this loopback port instead of a free one the harness picks (the quick
    /// start's well-known 8008). A taken port is then [`HarnessError::PortInUse`], and no
    /// other port is tried. `None` by default.
    pub port: Option<u16>,
    /// Whether the log also keeps Synapse's access lines (`synapse.access`, INFO): one
    /// per request, with when it ended and how long it took (the Matrix benchmark's
    /// server-side steps). Off by default: the log has warnings and errors only.
    pub access_log: bool,
    /// Appservice registration files, listed in `app_service_config_files` (issue 17):
    /// the homeserver reads each when it starts (a restart reads them again). None by
    /// default, so the other tests' server is as before.
    pub app_services: Vec<PathBuf>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            rate_limited: false,
            extra_config: String::new(),
            ready_timeout: Duration::from_secs(60),
            stop_timeout: Duration::from_secs(10),
            venv: venv_dir(),
            port: None,
            access_log: false,
            app_services: Vec::new(),
        }
    }
}

/// A running (or stopped, between `stop` and `restart`) Synapse. Dropping it stops the
/// server; the temp dir with its config, database and logs goes with it.
pub struct Synapse {
    options: Options,
    python: PathBuf,
    port: u16,
    instance: String,
    dir: tempfile::TempDir,
    child: Option<Child>,
    last_start: Duration,
}

impl Synapse {
    /// Starts a server with the default [`Options`] (no rate limits) and waits until it
    /// answers `/_matrix/client/versions`.
    pub fn start() -> Result<Self, HarnessError> {
        Self::start_with(Options::default())
    }

    /// Starts a server set up as `options` say and waits until it answers.
    pub fn start_with(options: Options) -> Result<Self, HarnessError> {
        let python = options.venv.join("bin").join("python");
        if !python.exists() {
            return Err(error(
                io::ErrorKind::NotFound,
                "Synapse is not installed",
                format!(
                    "{} is missing: run {INSTALL_SCRIPT} (or the README's test command, bash scripts/test.sh, which installs it)",
                    python.display()
                ),
            ));
        }
        let fixed_port = options.port;
        if let Some(port) = fixed_port {
            super::check_port_free("Synapse", port)?;
        }
        let dir = tempfile::Builder::new()
            .prefix("spellbridge-synapse-")
            .tempdir()
            .map_err(HarnessError::io("creating the Synapse temp dir"))?;
        static INSTANCES: AtomicU32 = AtomicU32::new(0);
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
        let instance = format!(
            "spellbridge-{}-{}-{nanos}",
            std::process::id(),
            INSTANCES.fetch_add(1, Ordering::Relaxed)
        );
        let mut server =
            Self { options, python, port: 0, instance, dir, child: None, last_start: Duration::ZERO };
        server.write_signing_key()?;
        // Another process may take the free port between our probe and Synapse's bind:
        // then try another one.
        let mut attempts = 0;
        loop {
            attempts += 1;
            server.port = match fixed_port {
                Some(port) => port,
                None => free_port()?,
            };
            server.write_config()?;
            match server.launch() {
                Err(e) if e.to_string().contains(PORT_TAKEN) && attempts < 3 && fixed_port.is_none() => {
                    server.stop()?;
                }
                Err(e) if e.to_string().contains(PORT_TAKEN) && fixed_port.is_some() => {
                    let _ = server.stop();
                    return Err(HarnessError::PortInUse {
                        server: "Synapse",
                        port: server.port,
                        reason: e.to_string(),
                    });
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

    /// `127.0.0.1:port`.
    pub fn address(&self) -> SocketAddr {
        SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::LOCALHOST, self.port))
    }

    /// `http://127.0.0.1:port` (no trailing slash): the homeserver URL for clients.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The server name, [`SERVER_NAME`].
    pub fn server_name(&self) -> &'static str {
        SERVER_NAME
    }

    /// The full user id of a local user: `@localpart:localhost`.
    pub fn user_id(&self, localpart: &str) -> String {
        format!("@{localpart}:{SERVER_NAME}")
    }

    /// The process id of the running server, or `None` when stopped.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// The temp dir with the config, database, media and logs.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The config file.
    pub fn config_path(&self) -> PathBuf {
        self.dir.path().join("homeserver.yaml")
    }

    /// How long the last start or restart took until the server answered.
    pub fn last_start_time(&self) -> Duration {
        self.last_start
    }

    /// The last `lines` lines of the server's log (WARNING and above) and of what it
    /// printed, for failure messages.
    pub fn log_tail(&self, lines: usize) -> String {
        let log = tail(&self.log_path(), lines);
        let output = tail(&self.output_path(), lines);
        match (log.is_empty(), output.is_empty()) {
            (_, true) => log,
            (true, false) => output,
            (false, false) => format!("{log}\n--- stdout/stderr ends:\n{output}"),
        }
    }

    /// Stops the server: SIGTERM, then SIGKILL after [`Options::stop_timeout`]. Does
    /// nothing when it is not running.
    pub fn stop(&mut self) -> Result<(), HarnessError> {
        match self.child.take() {
            Some(child) => super::terminate(child, self.options.stop_timeout, "Synapse"),
            None => Ok(()),
        }
    }

    /// Stops the server and starts it again on the same port with the same config and
    /// database: users, devices, access tokens and rooms survive, every connection (and
    /// long-poll sync) is cut.
    pub fn restart(&mut self) -> Result<(), HarnessError> {
        self.stop()?;
        self.launch()
    }

    /// Registers a user through the shared-secret admin API and returns its user id and
    /// an access token (for a new device). `localpart` is the name without `@` and
    /// server. Fails when the name is taken.
    pub fn register(
        &self,
        localpart: &str,
        password: &str,
        admin: bool,
    ) -> Result<(String, String), HarnessError> {
        let what = format!("registering {localpart} on Synapse at {}", self.base_url());
        let fail = |reason: String| error(io::ErrorKind::Other, what.clone(), reason);
        let timeout = Duration::from_secs(30);
        let (status, body) = http(self.address(), "GET", REGISTER_PATH, None, timeout)
            .map_err(|e| fail(format!("GET {REGISTER_PATH}: {e}")))?;
        let nonce = (status == 200)
            .then(|| json_field(&body, "nonce"))
            .flatten()
            .ok_or_else(|| fail(format!("GET {REGISTER_PATH} answered {status}: {body}")))?;
        let request = json!({
            "nonce": nonce,
            "username": localpart,
            "password": password,
            "admin": admin,
            "mac": registration_mac(REGISTRATION_SHARED_SECRET, &nonce, localpart, password, admin),
        });
        let (status, body) = http(self.address(), "POST", REGISTER_PATH, Some(&request), timeout)
            .map_err(|e| fail(format!("POST {REGISTER_PATH}: {e}")))?;
        match (status, json_field(&body, "user_id"), json_field(&body, "access_token")) {
            (200, Some(user_id), Some(token)) => Ok((user_id, token)),
            _ => Err(fail(format!("POST {REGISTER_PATH} answered {status}: {body}"))),
        }
    }

    fn log_path(&self) -> PathBuf {
        self.dir.path().join("homeserver.log")
    }

    fn output_path(&self) -> PathBuf {
        self.dir.path().join("synapse.out")
    }

    /// Spawns the server from the written config and waits until it answers.
    fn launch(&mut self) -> Result<(), HarnessError> {
        let started = Instant::now();
        let output = OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.output_path())
            .map_err(HarnessError::io("opening the Synapse output file"))?;
        let offsets = (file_len(&self.output_path()), file_len(&self.log_path()));
        let stderr = output.try_clone().map_err(HarnessError::io("sharing the Synapse output file"))?;
        let child = Command::new(&self.python)
            .args(["-m", "synapse.app.homeserver", "-c"])
            .arg(self.config_path())
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .stdout(output)
            .stderr(stderr)
            .spawn()
            .map_err(HarnessError::io(format!(
                "starting {} -m synapse.app.homeserver",
                self.python.display()
            )))?;
        self.child = Some(child);
        self.wait_ready(started, offsets)?;
        self.last_start = started.elapsed();
        Ok(())
    }

    fn wait_ready(
        &mut self,
        started: Instant,
        (output_offset, log_offset): (u64, u64),
    ) -> Result<(), HarnessError> {
        let deadline = started + self.options.ready_timeout;
        let mut last_problem = String::from("its port never accepted a connection");
        loop {
            let this_run = read_from(&self.output_path(), output_offset)
                + read_from(&self.log_path(), log_offset).as_str();
            let port_taken = this_run.contains("Address already in use");
            if let Some(child) = self.child.as_mut()
                && let Ok(Some(status)) = child.try_wait()
            {
                self.child = None;
                let reason = if port_taken { PORT_TAKEN.to_owned() } else { format!("it exited ({status})") };
                return Err(self.start_failed(reason));
            }
            if Instant::now() >= deadline {
                return Err(error(
                    io::ErrorKind::TimedOut,
                    format!(
                        "Synapse on port {} did not answer /_matrix/client/versions within {:?}",
                        self.port, self.options.ready_timeout
                    ),
                    format!("{last_problem}\n--- its log ends:\n{}", self.log_tail(30)),
                ));
            }
            match self.probe() {
                Ok(()) => return Ok(()),
                Err(Probe::NotOurs(answer)) => {
                    return Err(self.start_failed(format!("{PORT_TAKEN}: another server answered: {answer}")));
                }
                Err(Probe::Failed(problem)) => last_problem = problem,
            }
            thread::sleep(Duration::from_millis(25));
        }
    }

    /// Ready when the client `.well-known` names this instance and the client API answers.
    fn probe(&self) -> Result<(), Probe> {
        let timeout = Duration::from_secs(2);
        let (status, body) = http(self.address(), "GET", "/.well-known/matrix/client", None, timeout)
            .map_err(Probe::Failed)?;
        let instance = serde_json::from_str::<Value>(&body)
            .ok()
            .and_then(|v| v.get(INSTANCE_KEY).and_then(Value::as_str).map(str::to_owned));
        if instance.as_deref() != Some(self.instance.as_str()) {
            return Err(Probe::NotOurs(format!("{status} {body}")));
        }
        match http(self.address(), "GET", "/_matrix/client/versions", None, timeout).map_err(Probe::Failed)? {
            (200, _) => Ok(()),
            (status, body) => {
                Err(Probe::Failed(format!("/_matrix/client/versions answered {status}: {body}")))
            }
        }
    }

    fn start_failed(&self, reason: String) -> HarnessError {
        error(
            io::ErrorKind::Other,
            format!("Synapse on port {} failed to start", self.port),
            format!("{reason}\n--- its log ends:\n{}", self.log_tail(30)),
        )
    }

    /// Writes an ed25519 signing key in Synapse's format: `ed25519 <id> <seed>`.
    fn write_signing_key(&self) -> Result<(), HarnessError> {
        let mut seed = Vec::with_capacity(40);
        for salt in ["signing key 1", "signing key 2"] {
            seed.extend_from_slice(&Sha1::new().chain_update(&self.instance).chain_update(salt).finalize());
        }
        seed.truncate(32);
        let encoded = base64::engine::general_purpose::STANDARD_NO_PAD.encode(&seed);
        let path = self.dir.path().join("signing.key");
        fs::write(&path, format!("ed25519 a_test {encoded}\n"))
            .map_err(HarnessError::io(format!("writing {}", path.display())))
    }

    fn write_config(&self) -> Result<(), HarnessError> {
        for (name, text) in [("log_config.yaml", self.log_config()), ("homeserver.yaml", self.config())] {
            let path = self.dir.path().join(name);
            fs::write(&path, text).map_err(HarnessError::io(format!("writing {}", path.display())))?;
        }
        let media = self.dir.path().join("media_store");
        fs::create_dir_all(&media).map_err(HarnessError::io(format!("creating {}", media.display())))
    }

    fn config(&self) -> String {
        let path = |name: &str| quoted(&self.dir.path().join(name).display().to_string());
        let port = self.port;
        let mut rate_limits = String::new();
        if !self.options.rate_limited {
            rate_limits
                .push_str("# Every rate limit raised (SERVERS.md): tests send fast and log in often.\n");
            for key in FLAT_RATE_LIMITS {
                let _ = writeln!(rate_limits, "{key}: {NO_LIMIT}");
            }
            for (key, subs) in NESTED_RATE_LIMITS {
                let _ = writeln!(rate_limits, "{key}:");
                for sub in *subs {
                    let _ = writeln!(rate_limits, "  {sub}: {NO_LIMIT}");
                }
            }
        }
        format!(
            r#"# Written by spellbridge's test harness (tests/harness/synapse.rs).
server_name: {SERVER_NAME}
pid_file: {pid}
public_baseurl: "http://127.0.0.1:{port}/"
# Names this instance: the ready check asks for it, so it cannot mistake another
# server on the port for this one.
extra_well_known_client_content: {{{INSTANCE_KEY}: {instance}}}
listeners:
  - port: {port}
    bind_addresses: ['127.0.0.1']
    type: http
    tls: false
    x_forwarded: false
    resources:
      - names: [client]
        compress: false
database:
  name: sqlite3
  args:
    database: {database}
log_config: {log_config}
media_store_path: {media}
signing_key_path: {signing_key}
registration_shared_secret: {secret}
macaroon_secret_key: "spellbridge-test-macaroon-secret"
form_secret: "spellbridge-test-form-secret"
report_stats: false
enable_metrics: false
trusted_key_servers: []
suppress_key_server_warning: true
presence:
  enabled: false
bcrypt_rounds: 4
enable_registration: true
enable_registration_without_verification: true
{app_services}{rate_limits}{extra}
"#,
            pid = path("homeserver.pid"),
            instance = quoted(&self.instance),
            database = path("homeserver.db"),
            log_config = path("log_config.yaml"),
            media = path("media_store"),
            signing_key = path("signing.key"),
            secret = quoted(REGISTRATION_SHARED_SECRET),
            extra = self.options.extra_config,
            app_services = self.app_services(),
        )
    }

    /// `app_service_config_files: [...]`, or nothing when there are none.
    fn app_services(&self) -> String {
        if self.options.app_services.is_empty() {
            return String::new();
        }
        let files: Vec<String> =
            self.options.app_services.iter().map(|p| quoted(&p.display().to_string())).collect();
        format!("app_service_config_files: [{}]\n", files.join(", "))
    }

    fn log_config(&self) -> String {
        let file = quoted(&self.log_path().display().to_string());
        let (handler_level, access) = if self.options.access_log {
            ("INFO", "loggers:\n  synapse.access:\n    level: INFO\n")
        } else {
            ("WARNING", "")
        };
        format!(
            r#"# Written by spellbridge's test harness (tests/harness/synapse.rs).
version: 1
formatters:
  precise:
    format: '%(asctime)s - %(name)s - %(lineno)d - %(levelname)s - %(message)s'
handlers:
  file:
    class: logging.FileHandler
    formatter: precise
    filename: {file}
    level: {handler_level}
{access}root:
  level: WARNING
  handlers: [file]
disable_existing_loggers: false
"#
        )
    }
}

impl Drop for Synapse {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

const PORT_TAKEN: &str = "its port was taken by another process";
const INSTANCE_KEY: &str = "org.spellbridge.instance";
const REGISTER_PATH: &str = "/_synapse/admin/v1/register";

/// A harness error with a message that says what failed and why. (The shared
/// `HarnessError` has no Synapse variants yet: its `Io` variant carries them, with the
/// kind telling `NotFound` — not installed — and `TimedOut` apart.)
fn error(kind: io::ErrorKind, what: impl Into<String>, reason: impl Into<String>) -> HarnessError {
    HarnessError::Io { what: what.into(), source: io::Error::new(kind, reason.into()) }
}

/// The MAC of a shared-secret registration: HMAC-SHA1 keyed by the shared secret over
/// `nonce\0user\0password\0admin|notadmin`, in lowercase hex.
pub fn registration_mac(secret: &str, nonce: &str, user: &str, password: &str, admin: bool) -> String {
    let Ok(mut mac) = Hmac::<Sha1>::new_from_slice(secret.as_bytes()) else {
        unreachable!("HMAC takes a key of any length")
    };
    let role = if admin { "admin" } else { "notadmin" };
    for (i, part) in [nonce, user, password, role].into_iter().enumerate() {
        if i > 0 {
            mac.update(b"\0");
        }
        mac.update(part.as_bytes());
    }
    let mut hex = String::with_capacity(40);
    for byte in mac.finalize().into_bytes() {
        let _ = write!(hex, "{byte:02x}");
    }
    hex
}

/// A YAML double-quoted scalar (JSON's string syntax is valid YAML).
fn quoted(text: &str) -> String {
    Value::from(text).to_string()
}

fn json_field(body: &str, key: &str) -> Option<String> {
    serde_json::from_str::<Value>(body).ok()?.get(key)?.as_str().map(str::to_owned)
}

/// One HTTP/1.0 request (the server closes the connection after the answer, so no
/// chunked bodies): the status and the body.
fn http(
    address: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&Value>,
    timeout: Duration,
) -> Result<(u16, String), String> {
    let mut stream =
        TcpStream::connect_timeout(&address, timeout).map_err(|e| format!("connecting to {address}: {e}"))?;
    let _ = stream.set_nodelay(true);
    stream.set_read_timeout(Some(timeout)).map_err(|e| format!("setting a read timeout: {e}"))?;
    stream.set_write_timeout(Some(timeout)).map_err(|e| format!("setting a write timeout: {e}"))?;
    let body = body.map(Value::to_string).unwrap_or_default();
    let request = format!(
        "{method} {path} HTTP/1.0\r\nHost: {address}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).map_err(|e| format!("sending the request: {e}"))?;
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).map_err(|e| format!("reading the answer: {e}"))?;
    let answer = String::from_utf8_lossy(&answer);
    let (head, body) =
        answer.split_once("\r\n\r\n").ok_or_else(|| format!("a malformed answer: {answer:?}"))?;
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("no status in the answer: {head:?}"))?;
    Ok((status, body.to_owned()))
}

enum Probe {
    /// Not ready yet (or not at all): why.
    Failed(String),
    /// Some other server answered on the port.
    NotOurs(String),
}

/// A loopback port nobody listens on now (the kernel's pick for port 0).
fn free_port() -> Result<u16, HarnessError> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .map_err(HarnessError::io("binding 127.0.0.1:0 to find a free port"))?;
    listener.local_addr().map(|addr| addr.port()).map_err(HarnessError::io("reading the free port"))
}

fn file_len(path: &Path) -> u64 {
    fs::metadata(path).map(|m| m.len()).unwrap_or(0)
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
    fn the_registration_mac_is_hmac_sha1_over_nul_separated_fields() {
        // Python: hmac.new(b"secret", b"abc\0alice\0pw\0notadmin", hashlib.sha1).hexdigest()
        assert_eq!(
            registration_mac("secret", "abc", "alice", "pw", false),
            "42e32623fe124933c326f9d2d67ff7c617915a10"
        );
        assert_ne!(
            registration_mac("secret", "abc", "alice", "pw", true),
            registration_mac("secret", "abc", "alice", "pw", false)
        );
    }

    #[test]
    fn quoted_strings_are_yaml_safe() {
        assert_eq!(quoted("/tmp/a b"), r#""/tmp/a b""#);
        assert_eq!(quoted("x\"y: z"), r#""x\"y: z""#);
    }

    #[test]
    fn tail_keeps_the_last_lines() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("out");
        fs::write(&path, "a\nb\nc\n").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(tail(&path, 2), "b\nc");
        assert_eq!(read_from(&path, 4), "c\n");
        assert_eq!(tail(&dir.path().join("missing"), 3), "");
    }
}
