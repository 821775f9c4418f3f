//! `spellbridge run` as a child process, for the tests that drive the daemon from the
//! outside (they live in `daemon/tests/`, the only place that knows the binary's path:
//! pass `env!("CARGO_BIN_EXE_spellbridge")`).
//!
//! A [`Daemon`] owns a temp dir that outlives restarts: the config (`spellbridge.toml`),
//! whatever files the test writes beside it (a password file, a wizards file), the
//! daemon's log (`daemon.log`, stderr of every start appended, each start headed by
//! `=== start N ===`) and, with relative paths in the config, the database and the Matrix
//! store. The child runs with the temp dir as its working directory, so relative secret
//! files (`password = { file = "bot-password" }`) resolve there too.
//!
//! Signals go through kill(1), as elsewhere in the harness (std sends only SIGKILL and
//! the workspace forbids unsafe code). Every wait is bounded. Dropping a `Daemon` kills
//! it; when the test is panicking the log's end is printed first.

use std::ffi::OsString;
use std::fs::{self, OpenOptions};
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

use super::HarnessError;

/// The config file's name in the daemon's dir.
pub const CONFIG: &str = "spellbridge.toml";

/// The log file's name in the daemon's dir.
pub const LOG: &str = "daemon.log";

/// How many log lines a failure message shows.
const LOG_LINES: usize = 80;

/// The daemon: its temp dir and, while it runs, its process.
pub struct Daemon {
    binary: PathBuf,
    dir: tempfile::TempDir,
    child: Option<Child>,
    starts: u32,
    env: Vec<(OsString, OsString)>,
    /// Variables the child does not inherit (`RUST_LOG`, to run at the default level).
    unset: Vec<OsString>,
}

impl Daemon {
    /// A daemon in a new temp dir, not started: write files with [`Daemon::write`] and
    /// the config with [`Daemon::set_config`], then [`Daemon::spawn`].
    pub fn new(binary: impl Into<PathBuf>) -> Result<Daemon, HarnessError> {
        let binary = binary.into();
        if !binary.exists() {
            return Err(failure(format!("the spellbridge binary {} does not exist", binary.display())));
        }
        let dir = tempfile::Builder::new()
            .prefix("spellbridge-daemon-")
            .tempdir()
            .map_err(HarnessError::io("creating the daemon's temp dir"))?;
        Ok(Daemon {
            binary,
            dir,
            child: None,
            starts: 0,
            unset: Vec::new(),
            env: vec![
                ("RUST_LOG".into(), "info".into()),
                ("NO_COLOR".into(), "1".into()),
                ("RUST_BACKTRACE".into(), "1".into()),
            ],
        })
    }

    /// Writes `config` as the config and starts `spellbridge run` on it.
    pub fn start(binary: impl Into<PathBuf>, config: &str) -> Result<Daemon, HarnessError> {
        let mut daemon = Daemon::new(binary)?;
        daemon.set_config(config)?;
        daemon.spawn()?;
        Ok(daemon)
    }

    /// Writes `files` (a password, a CA certificate, a client key: name and contents)
    /// and `config` into a new temp dir and starts `spellbridge run` there with
    /// `RUST_LOG=rust_log`.
    pub fn launch(
        binary: impl Into<PathBuf>,
        config: &str,
        rust_log: &str,
        files: &[(&str, &str)],
    ) -> Result<Daemon, HarnessError> {
        let mut daemon = Daemon::new(binary)?;
        daemon.env("RUST_LOG", rust_log);
        for (name, contents) in files {
            daemon.write(name, contents)?;
        }
        daemon.set_config(config)?;
        daemon.spawn()?;
        Ok(daemon)
    }

    /// Sets an environment variable for the next starts (`RUST_LOG` is `info` unless set).
    pub fn env(&mut self, name: impl Into<OsString>, value: impl Into<OsString>) -> &mut Self {
        let name = name.into();
        self.env.retain(|(n, _)| *n != name);
        self.unset.retain(|n| *n != name);
        self.env.push((name, value.into()));
        self
    }

    /// Leaves a variable out of the next starts' environment, even when the test process
    /// has it (`env_remove("RUST_LOG")`: the daemon's default log level).
    pub fn env_remove(&mut self, name: impl Into<OsString>) -> &mut Self {
        let name = name.into();
        self.env.retain(|(n, _)| *n != name);
        self.unset.push(name);
        self
    }

    /// The temp dir (the working directory of the daemon).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// A path inside the temp dir, such as the database the config names relatively.
    pub fn path(&self, name: impl AsRef<Path>) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The config file.
    pub fn config_path(&self) -> PathBuf {
        self.path(CONFIG)
    }

    /// The log file.
    pub fn log_path(&self) -> PathBuf {
        self.path(LOG)
    }

    /// Writes a file into the temp dir; returns its path.
    pub fn write(&self, name: impl AsRef<Path>, contents: impl AsRef<[u8]>) -> Result<PathBuf, HarnessError> {
        let path = self.path(name);
        fs::write(&path, contents).map_err(HarnessError::io(format!("writing {}", path.display())))?;
        Ok(path)
    }

    /// (Re)writes the config; a running daemon reads it again on [`Daemon::hangup`].
    pub fn set_config(&self, config: &str) -> Result<(), HarnessError> {
        self.write(CONFIG, config).map(drop)
    }

    /// How many times the daemon was started.
    pub fn starts(&self) -> u32 {
        self.starts
    }

    /// The process id while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Starts `spellbridge run --config spellbridge.toml` (again, on the same dir and so
    /// the same database). Fails when it is already running or the config is refused
    /// (`spellbridge check-config` is asked first, so the error names the problem).
    pub fn spawn(&mut self) -> Result<(), HarnessError> {
        if self.is_running() {
            return Err(failure("the daemon is already running".to_owned()));
        }
        let checked = self.command(&["check-config", "--config", CONFIG])?;
        if !checked.status.success() {
            return Err(failure(format!(
                "spellbridge check-config refuses the config:\n{}\n--- the config:\n{}",
                String::from_utf8_lossy(&checked.stderr).trim_end(),
                fs::read_to_string(self.config_path()).unwrap_or_default()
            )));
        }
        self.starts += 1;
        let mut log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.log_path())
            .map_err(HarnessError::io("opening the daemon's log"))?;
        let _ = writeln!(log, "=== start {} ===", self.starts);
        let mut command = Command::new(&self.binary);
        for name in &self.unset {
            command.env_remove(name);
        }
        let child = command
            .args(["run", "--config", CONFIG])
            .current_dir(self.dir.path())
            .envs(self.env.iter().map(|(n, v)| (n, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(HarnessError::io(format!("starting {}", self.binary.display())))?;
        self.child = Some(child);
        Ok(())
    }

    /// Stops the daemon if it runs (SIGTERM, bounded) and starts it again on the same
    /// config, database and store.
    pub fn restart(&mut self) -> Result<(), HarnessError> {
        if self.is_running() {
            self.terminate(Duration::from_secs(15))?;
        }
        self.spawn()
    }

    /// True while the process runs (an exit is noticed and reaped).
    pub fn is_running(&mut self) -> bool {
        match self.child.as_mut().map(Child::try_wait) {
            Some(Ok(None)) => true,
            Some(_) => {
                self.child = None;
                false
            }
            None => false,
        }
    }

    /// An error with the log's end if the daemon is not running (it exited by itself).
    pub fn ensure_running(&mut self) -> Result<(), HarnessError> {
        let status = match self.child.as_mut().map(Child::try_wait) {
            Some(Ok(None)) => return Ok(()),
            Some(Ok(Some(status))) => format!("exited ({status})"),
            Some(Err(e)) => format!("cannot be watched: {e}"),
            None => "is not started".to_owned(),
        };
        Err(failure(format!("the daemon {status}; its log ends:\n{}", self.log_tail(LOG_LINES))))
    }

    /// SIGKILL (no chance to save or say goodbye), then waits for the exit.
    pub fn kill(&mut self) -> Result<(), HarnessError> {
        let Some(mut child) = self.child.take() else { return Ok(()) };
        let _ = child.kill();
        child.wait().map(drop).map_err(HarnessError::io("waiting for the killed daemon"))
    }

    /// SIGTERM, then waits up to `timeout` for the exit; its status. When it does not
    /// exit in time it is killed and that is an error with the log's end.
    pub fn terminate(&mut self, timeout: Duration) -> Result<ExitStatus, HarnessError> {
        let Some(mut child) = self.child.take() else {
            return Err(failure("the daemon is not running".to_owned()));
        };
        if let Ok(Some(status)) = child.try_wait() {
            return Ok(status);
        }
        signal(&child, "TERM")?;
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            match child.try_wait() {
                Ok(Some(status)) => return Ok(status),
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                Err(e) => return Err(HarnessError::io("waiting for the daemon")(e)),
            }
        }
        let _ = child.kill();
        let _ = child.wait();
        Err(failure(format!(
            "the daemon did not exit within {timeout:?} of SIGTERM (killed it); its log ends:\n{}",
            self.log_tail(LOG_LINES)
        )))
    }

    /// SIGHUP: the daemon reads its config again.
    pub fn hangup(&self) -> Result<(), HarnessError> {
        self.signal("HUP")
    }

    /// SIGSTOP: the process is paused, not dead (its sockets stay open, it does nothing,
    /// its lease runs out), until [`Daemon::resume`].
    pub fn pause(&self) -> Result<(), HarnessError> {
        self.signal("STOP")
    }

    /// SIGCONT: a paused process runs on from where it stopped.
    pub fn resume(&self) -> Result<(), HarnessError> {
        self.signal("CONT")
    }

    /// Sends `SIG<name>` (`"TERM"`, `"STOP"` …) to the running daemon.
    pub fn signal(&self, name: &str) -> Result<(), HarnessError> {
        match &self.child {
            Some(child) => signal(child, name),
            None => Err(failure("the daemon is not running".to_owned())),
        }
    }

    /// Runs another subcommand of the binary (`export 0 --db games.db`, `verify …`) in
    /// the daemon's dir, to completion.
    pub fn command(&self, args: &[&str]) -> Result<Output, HarnessError> {
        let mut command = Command::new(&self.binary);
        for name in &self.unset {
            command.env_remove(name);
        }
        command
            .args(args)
            .current_dir(self.dir.path())
            .envs(self.env.iter().map(|(n, v)| (n, v)))
            .stdin(Stdio::null())
            .output()
            .map_err(HarnessError::io(format!("running spellbridge {}", args.join(" "))))
    }

    /// The whole log, every start's.
    pub fn log(&self) -> String {
        fs::read_to_string(self.log_path()).unwrap_or_default()
    }

    /// Waits until the log contains `needle`, for at most `limit`: a line the daemon writes
    /// when a signal or a background task is handled, which may come after the test's next
    /// step. The error names the line and shows the log's end.
    pub fn wait_for_log(&self, needle: &str, limit: Duration) -> Result<(), HarnessError> {
        let deadline = Instant::now() + limit;
        while !self.log().contains(needle) {
            if Instant::now() >= deadline {
                return Err(failure(format!(
                    "the log did not say {needle:?} within {limit:?}; it ends:\n{}",
                    self.log_tail(LOG_LINES)
                )));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(())
    }

    /// The log's last `lines` lines, for failure messages.
    pub fn log_tail(&self, lines: usize) -> String {
        let log = self.log();
        let all: Vec<&str> = log.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        if std::thread::panicking() {
            eprintln!(
                "--- the daemon's log ({}) ends:\n{}",
                self.log_path().display(),
                self.log_tail(LOG_LINES)
            );
        }
    }
}

/// Sends `SIG<name>` to the child through kill(1).
fn signal(child: &Child, name: &str) -> Result<(), HarnessError> {
    let status = Command::new("kill")
        .args([format!("-{name}"), child.id().to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(HarnessError::io(format!("running kill -{name}")))?;
    if status.success() {
        Ok(())
    } else {
        Err(failure(format!("kill -{name} {} failed ({status})", child.id())))
    }
}

fn failure(reason: String) -> HarnessError {
    HarnessError::Io { what: "spellbridge daemon".to_owned(), source: io::Error::other(reason) }
}
