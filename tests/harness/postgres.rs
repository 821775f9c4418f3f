//! A throwaway PostgreSQL cluster (Debian's `postgresql` packages, installed by
//! `tests/scripts/install-postgres.sh`) on a free loopback port, for one test. Facts this
//! relies on (checked on PostgreSQL 15, Debian 12):
//!
//! - `postgres` refuses to run as root, so when the tests run as root the harness runs
//!   `initdb` and `postgres` as the package's system user `postgres` (its temp dir is
//!   handed to that user); otherwise as the user running the tests.
//! - The server runs in the foreground as the harness's child; SIGINT is its "fast"
//!   shutdown (clients disconnected, a checkpoint written), SIGQUIT its "immediate" one
//!   (a crash: WAL replayed on the next start). SIGTERM would wait for every client.
//! - It accepts TCP connections while it is still starting (and answers "the database
//!   system is starting up"): ready means `pg_isready` says so and a query as our own
//!   superuser, with our password, answers from our data directory.
//!
//! The superuser `postgres` has a random password (SCRAM-SHA-256 over TCP, as on a real
//! server), carried in [`Postgres::url`]; the unix socket lives in the temp dir and
//! trusts only the harness's user. The API is blocking (std only), as the other servers'.

use std::fs::{self, OpenOptions};
use std::io::Read;
use std::net::{Ipv4Addr, TcpListener};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use super::HarnessError;

/// Where Debian's packages put each major version's programs (`<dir>/<major>/bin`).
pub const PACKAGE_DIR: &str = "/usr/lib/postgresql";

/// The database [`Postgres::url`] names, created at the first start.
pub const DATABASE: &str = "spellbridge";

/// The superuser the cluster is made with.
pub const SUPERUSER: &str = "postgres";

/// How a test cluster is set up.
#[derive(Clone, Debug)]
pub struct Options {
    /// How long a start may take until the server answers a query.
    pub ready_timeout: Duration,
    /// How long `stop` waits after SIGINT before it sends SIGQUIT, then SIGKILL.
    pub stop_timeout: Duration,
    /// Extra `postgresql.conf` settings, as `-c name=value` on the command line.
    pub settings: Vec<(String, String)>,
    /// A server certificate and key: TLS on (`ssl = on`) with them, plain TCP still
    /// accepted (as `hostssl` is not required).
    pub tls: Option<super::certs::Pem>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            ready_timeout: Duration::from_secs(60),
            stop_timeout: Duration::from_secs(10),
            settings: Vec::new(),
            tls: None,
        }
    }
}

/// A running (or stopped, between [`Postgres::stop`] and [`Postgres::start`]) cluster.
/// Dropping it stops the server; its data directory goes with the temp dir.
pub struct Postgres {
    options: Options,
    bin: PathBuf,
    /// The uid and gid the server runs as, when the tests run as root.
    run_as: Option<(u32, u32)>,
    port: u16,
    password: String,
    dir: tempfile::TempDir,
    child: Option<Child>,
}

impl Postgres {
    /// Makes a cluster with the default [`Options`], starts it and creates [`DATABASE`].
    pub fn start_new() -> Result<Self, HarnessError> {
        Self::start_with(Options::default())
    }

    /// Makes a cluster set up as `options` say, starts it and creates [`DATABASE`].
    pub fn start_with(options: Options) -> Result<Self, HarnessError> {
        let bin = find_bin()?;
        let run_as = if is_root()? { Some(system_user(SUPERUSER)?) } else { None };
        let dir = tempfile::Builder::new()
            .prefix("spellbridge-postgres-")
            .tempdir()
            .map_err(HarnessError::io("creating the PostgreSQL temp dir"))?;
        let socket_dir = dir.path().join("run");
        fs::create_dir(&socket_dir).map_err(HarnessError::io("creating the socket dir"))?;
        if let Some((uid, gid)) = run_as {
            for path in [dir.path(), &socket_dir] {
                std::os::unix::fs::chown(path, Some(uid), Some(gid)).map_err(HarnessError::io(format!(
                    "handing {} to the user {SUPERUSER}",
                    path.display()
                )))?;
            }
        }
        let mut cluster =
            Self { options, bin, run_as, port: 0, password: random_password()?, dir, child: None };
        cluster.initdb()?;
        cluster.write_tls()?;
        // Another process may take the free port between our probe and the server's
        // bind: then try another one.
        let mut attempts = 0;
        loop {
            attempts += 1;
            cluster.port = free_port()?;
            match cluster.start() {
                Err(HarnessError::Postgres { reason, .. }) if reason.contains(PORT_TAKEN) && attempts < 3 => {
                    cluster.stop()?;
                }
                Err(e) => return Err(e),
                Ok(()) => break,
            }
        }
        cluster.psql("postgres", &format!("CREATE DATABASE {DATABASE}"))?;
        Ok(cluster)
    }

    /// `postgres://postgres:PASSWORD@127.0.0.1:PORT/spellbridge`: what a daemon's
    /// `[store] url` would say.
    pub fn url(&self) -> String {
        format!("postgres://{SUPERUSER}:{}@127.0.0.1:{}/{DATABASE}", self.password, self.port)
    }

    /// The port the server listens on (the same across restarts).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The process id of the running server (the postmaster), or `None` when stopped.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// The temp dir: `data/` (the cluster), `run/` (its socket), `postgres.out` (its log).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The last `lines` lines the server printed (all runs, for failure messages).
    pub fn output_tail(&self, lines: usize) -> String {
        let text = fs::read_to_string(self.output_path()).unwrap_or_default();
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }

    /// Runs `sql` with `psql` as the superuser on [`DATABASE`]; what it printed (unaligned,
    /// tuples only).
    pub fn query(&self, sql: &str) -> Result<String, HarnessError> {
        self.psql(DATABASE, sql)
    }

    /// Starts the (stopped) server again on the same port and data directory, and waits
    /// until it answers a query; an error when it is already running.
    pub fn start(&mut self) -> Result<(), HarnessError> {
        if self.child.is_some() {
            return Err(self.failed("starting", "it is already running".to_owned()));
        }
        let started = Instant::now();
        let output = OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.output_path())
            .map_err(HarnessError::io("opening the PostgreSQL output file"))?;
        let offset = output.metadata().map(|m| m.len()).unwrap_or(0);
        let stderr = output.try_clone().map_err(HarnessError::io("sharing the PostgreSQL output file"))?;
        let mut command = self.command("postgres");
        command
            .arg("-D")
            .arg(self.data_dir())
            .args(["-p", &self.port.to_string(), "-c", "listen_addresses=127.0.0.1"])
            .arg("-c")
            .arg(format!("unix_socket_directories={}", self.socket_dir().display()))
            // Small: several clusters (and other tests' servers) share a 2-core machine.
            .args(["-c", "shared_buffers=16MB", "-c", "max_connections=50"]);
        for (name, value) in &self.options.settings {
            command.arg("-c").arg(format!("{name}={value}"));
        }
        let child = command
            .stdin(Stdio::null())
            .stdout(output)
            .stderr(stderr)
            .spawn()
            .map_err(HarnessError::io(format!("starting {}", self.bin.join("postgres").display())))?;
        self.child = Some(child);
        self.wait_ready(started, offset)
    }

    /// Stops the server the fast way (SIGINT: clients are disconnected, a checkpoint is
    /// written), then SIGQUIT and SIGKILL after [`Options::stop_timeout`]. Does nothing
    /// when it is not running.
    pub fn stop(&mut self) -> Result<(), HarnessError> {
        self.signal_and_wait("INT")
    }

    /// Stops the server as a crash would (SIGQUIT, "immediate" shutdown): no checkpoint,
    /// so the next start replays the write-ahead log.
    pub fn stop_immediately(&mut self) -> Result<(), HarnessError> {
        self.signal_and_wait("QUIT")
    }

    /// Stops the server and starts it again on the same port with the same data, as an
    /// operator's restart looks to clients: every connection is closed.
    pub fn restart(&mut self) -> Result<(), HarnessError> {
        self.stop()?;
        self.start()
    }

    fn signal_and_wait(&mut self, first: &str) -> Result<(), HarnessError> {
        let Some(mut child) = self.child.take() else { return Ok(()) };
        for signal in [first, "QUIT"] {
            if child.try_wait().ok().flatten().is_some() {
                return Ok(());
            }
            let _ = Command::new("kill")
                .args([&format!("-{signal}"), &child.id().to_string()])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
            let deadline = Instant::now() + self.options.stop_timeout;
            while Instant::now() < deadline {
                match child.try_wait() {
                    Ok(Some(_)) => return Ok(()),
                    Ok(None) => thread::sleep(Duration::from_millis(10)),
                    Err(_) => break,
                }
            }
        }
        let _ = child.kill();
        child.wait().map(drop).map_err(HarnessError::io("waiting for PostgreSQL to exit"))
    }

    fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn socket_dir(&self) -> PathBuf {
        self.dir.path().join("run")
    }

    fn output_path(&self) -> PathBuf {
        self.dir.path().join("postgres.out")
    }

    /// A command for one of the package's programs, run as the cluster's user.
    fn command(&self, program: &str) -> Command {
        let mut command = Command::new(self.bin.join(program));
        command.current_dir(self.dir.path()).env_remove("PGPASSWORD").env("LC_ALL", "C.UTF-8");
        if let Some((uid, gid)) = self.run_as {
            // std drops the supplementary groups too when root changes its uid.
            command.uid(uid).gid(gid);
        }
        command
    }

    /// Writes [`Options::tls`]'s certificate and key where the server reads them (the key
    /// private to the server's user, as PostgreSQL insists) and turns `ssl` on.
    fn write_tls(&mut self) -> Result<(), HarnessError> {
        let Some(pem) = self.options.tls.clone() else { return Ok(()) };
        let (cert, key) = pem.write(self.dir.path(), "server")?;
        use std::os::unix::fs::PermissionsExt as _;
        fs::set_permissions(&key, fs::Permissions::from_mode(0o600))
            .map_err(HarnessError::io("making the server key private"))?;
        if let Some((uid, gid)) = self.run_as {
            for path in [&cert, &key] {
                std::os::unix::fs::chown(path, Some(uid), Some(gid))
                    .map_err(HarnessError::io("handing the TLS files to the user postgres"))?;
            }
        }
        self.options.settings.push(("ssl".to_owned(), "on".to_owned()));
        self.options.settings.push(("ssl_cert_file".to_owned(), cert.display().to_string()));
        self.options.settings.push(("ssl_key_file".to_owned(), key.display().to_string()));
        Ok(())
    }

    fn initdb(&self) -> Result<(), HarnessError> {
        let pwfile = self.dir.path().join("pwfile");
        fs::write(&pwfile, format!("{}\n", self.password))
            .map_err(HarnessError::io("writing the password file"))?;
        if let Some((uid, gid)) = self.run_as {
            std::os::unix::fs::chown(&pwfile, Some(uid), Some(gid))
                .map_err(HarnessError::io("handing the password file to the user postgres"))?;
        }
        let output = self
            .command("initdb")
            .arg("-D")
            .arg(self.data_dir())
            .args(["-U", SUPERUSER, "--encoding=UTF8", "--locale=C.UTF-8", "--no-sync"])
            .args(["--auth-local=trust", "--auth-host=scram-sha-256"])
            .arg(format!("--pwfile={}", pwfile.display()))
            .stdin(Stdio::null())
            .output()
            .map_err(HarnessError::io(format!("running {}", self.bin.join("initdb").display())));
        let _ = fs::remove_file(&pwfile);
        let output = output?;
        if !output.status.success() {
            return Err(self.failed("initdb", describe(&output)));
        }
        Ok(())
    }

    fn wait_ready(&mut self, started: Instant, offset: u64) -> Result<(), HarnessError> {
        let deadline = started + self.options.ready_timeout;
        let mut last_problem = String::from("it never answered");
        loop {
            let this_run = read_from(&self.output_path(), offset);
            if let Some(child) = self.child.as_mut()
                && let Ok(Some(status)) = child.try_wait()
            {
                self.child = None;
                let reason = if this_run.contains("Address already in use") {
                    format!("{PORT_TAKEN} (it exited: {status})")
                } else {
                    format!("it exited ({status})")
                };
                return Err(self.failed("starting", reason));
            }
            if Instant::now() >= deadline {
                let waited = self.options.ready_timeout;
                return Err(self.failed("starting", format!("not ready within {waited:?}: {last_problem}")));
            }
            let ready = Command::new(self.bin.join("pg_isready"))
                .args(["-q", "-h", "127.0.0.1", "-p", &self.port.to_string(), "-t", "1"])
                .stdin(Stdio::null())
                .status();
            match ready {
                Ok(status) if status.success() => match self.psql("postgres", "SHOW data_directory") {
                    Ok(dir) if Path::new(dir.trim()) == self.data_dir() => return Ok(()),
                    Ok(other) => {
                        return Err(self.failed(
                            "starting",
                            format!("{PORT_TAKEN}: the server on it has the data directory {}", other.trim()),
                        ));
                    }
                    Err(e) => last_problem = e.to_string(),
                },
                Ok(status) => last_problem = format!("pg_isready: {status}"),
                Err(e) => last_problem = format!("running pg_isready: {e}"),
            }
            thread::sleep(Duration::from_millis(50));
        }
    }

    /// `psql` over TCP as the superuser, with the password (as a daemon connects).
    fn psql(&self, database: &str, sql: &str) -> Result<String, HarnessError> {
        let output = Command::new(self.bin.join("psql"))
            .args(["-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1"])
            .args(["-p", &self.port.to_string(), "-U", SUPERUSER, "-d", database, "-c", sql])
            .env("PGPASSWORD", &self.password)
            .env("PGCONNECT_TIMEOUT", "5")
            .stdin(Stdio::null())
            .output()
            .map_err(HarnessError::io("running psql"))?;
        if !output.status.success() {
            return Err(self.failed(&format!("psql -c {sql:?}"), describe(&output)));
        }
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }

    fn failed(&self, what: &str, reason: String) -> HarnessError {
        HarnessError::Postgres {
            what: what.to_owned(),
            port: self.port,
            reason,
            log_tail: self.output_tail(30),
        }
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

const PORT_TAKEN: &str = "its port was taken by another process";

/// The newest major version's `bin` directory under [`PACKAGE_DIR`].
fn find_bin() -> Result<PathBuf, HarnessError> {
    let not_installed =
        || HarnessError::PostgresNotInstalled { binary: format!("{PACKAGE_DIR}/<version>/bin/postgres") };
    let entries = fs::read_dir(PACKAGE_DIR).map_err(|_| not_installed())?;
    let mut versions: Vec<(u32, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let major = entry.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = entry.path().join("bin");
            bin.join("postgres").exists().then_some((major, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin).ok_or_else(not_installed)
}

/// Whether the tests run as root (`id -u`: std has no getuid and unsafe code is forbidden).
fn is_root() -> Result<bool, HarnessError> {
    let output = Command::new("id").arg("-u").output().map_err(HarnessError::io("running id -u"))?;
    Ok(String::from_utf8_lossy(&output.stdout).trim() == "0")
}

/// The uid and gid of a system user, from /etc/passwd.
fn system_user(name: &str) -> Result<(u32, u32), HarnessError> {
    let passwd = fs::read_to_string("/etc/passwd").map_err(HarnessError::io("reading /etc/passwd"))?;
    passwd
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split(':').collect();
            (fields.first() == Some(&name) && fields.len() > 3)
                .then(|| Some((fields[2].parse().ok()?, fields[3].parse().ok()?)))
                .flatten()
        })
        .next()
        .ok_or_else(|| HarnessError::Postgres {
            what: "finding the user to run PostgreSQL as".to_owned(),
            port: 0,
            reason: format!(
                "the tests run as root, which PostgreSQL refuses, and there is no system user {name:?} \
                 (Debian's postgresql package makes it): run tests/scripts/install-postgres.sh"
            ),
            log_tail: String::new(),
        })
}

/// 32 hex digits from the OS's random source.
fn random_password() -> Result<String, HarnessError> {
    let mut bytes = [0u8; 16];
    fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(HarnessError::io("reading /dev/urandom for the cluster's password"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// A loopback port nobody listens on now (the kernel's pick for port 0).
fn free_port() -> Result<u16, HarnessError> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .map_err(HarnessError::io("binding 127.0.0.1:0 to find a free port"))?;
    listener.local_addr().map(|addr| addr.port()).map_err(HarnessError::io("reading the free port"))
}

/// A finished program's status and what it wrote.
fn describe(output: &Output) -> String {
    format!(
        "{}\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// What the file holds from `offset` on (empty when it cannot be read).
fn read_from(path: &Path, offset: u64) -> String {
    let bytes = fs::read(path).unwrap_or_default();
    let start = usize::try_from(offset).unwrap_or(usize::MAX).min(bytes.len());
    String::from_utf8_lossy(&bytes[start..]).into_owned()
}
