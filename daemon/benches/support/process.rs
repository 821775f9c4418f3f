//! A bot as a child process of a bench, the one wrapper every bench uses (each adds what
//! it answers as): started from files in its own temp dir with its output in `bot.log`
//! there, stopped (SIGTERM, then SIGKILL) when dropped, also when the bench panics, its
//! log kept in `$SPELLBRIDGE_BENCH_KEEP_LOGS` when that is set; and the daemon's
//! `/metrics` read over plain HTTP.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A bot running as a child process from files in its own temp dir. Dropping it stops it.
pub struct Process {
    /// What the bench calls it in its messages.
    pub name: &'static str,
    child: Option<Child>,
    dir: tempfile::TempDir,
}

impl Process {
    /// Runs `command` in `dir`, its stdout and stderr appended to `dir/bot.log` (a restart
    /// in the same dir keeps the earlier run's lines).
    pub fn spawn(name: &'static str, dir: tempfile::TempDir, command: &mut Command) -> Process {
        let mut process = Process { name, child: None, dir };
        process.start(command);
        process
    }

    /// Starts `command` again in the same dir (after [`Process::stop`]).
    pub fn start(&mut self, command: &mut Command) {
        self.stop();
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.log_path())
            .expect("bot log file");
        let child = command
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("bot log file"))
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("{} does not start: {e}", self.name));
        self.child = Some(child);
    }

    /// The process id, or 0 when stopped.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// The temp dir it runs in.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    pub fn log_path(&self) -> PathBuf {
        self.dir.path().join("bot.log")
    }

    /// The last 40 lines of its log.
    pub fn log(&self) -> String {
        super::log_tail(&self.log_path())
    }

    /// Whether the process has exited (then its log says why).
    pub fn exited(&mut self) -> bool {
        super::exited(self.child.as_mut())
    }

    /// SIGTERM, a bounded wait for the exit, then SIGKILL. With
    /// `SPELLBRIDGE_BENCH_KEEP_LOGS=DIR`, its log is then copied to `DIR/<name>-<pid>.log`.
    pub fn stop(&mut self) {
        let Some(mut child) = self.child.take() else { return };
        let pid = child.id();
        super::stop(&mut child);
        if let Some(dir) = std::env::var_os("SPELLBRIDGE_BENCH_KEEP_LOGS").filter(|d| !d.is_empty()) {
            let to = Path::new(&dir).join(format!("{}-{pid}.log", self.name));
            let _ = std::fs::create_dir_all(&dir);
            match std::fs::copy(self.log_path(), &to) {
                Ok(_) => eprintln!("bench: {}'s log kept as {}", self.name, to.display()),
                Err(e) => eprintln!("bench: cannot keep {}'s log as {}: {e}", self.name, to.display()),
            }
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The text of the daemon's `/metrics` on `127.0.0.1:port` (`None` when it does not answer
/// within 5 s).
pub fn metrics(port: u16) -> Option<String> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    stream.write_all(b"GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut text = String::new();
    stream.read_to_string(&mut text).ok()?;
    Some(text)
}

/// A free loopback port (for the daemon's `/metrics`).
pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).expect("a free port");
    listener.local_addr().expect("its address").port()
}
