//! What the benches share: percentiles, a process's memory and CPU time from /proc,
//! stopping a bot's child process and reading its log, a Matrix listener (a long-poll
//! `/sync` loop in its own task), and an appservice daemon's config and registration
//! ([`appservice`]). Each bench uses part of it, so unused items are allowed here.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use spellbridge_tests::harness::matrix_client::{Event, MatrixClient};
use tokio::sync::mpsc;

/// How long one `/sync` long poll of a measuring client waits on the server.
const SYNC_TIMEOUT_MS: u64 = 30_000;

/// A long-poll `/sync` loop in its own task, handing on each timeline event with the
/// moment its sync returned.
pub struct Listener {
    /// Each event, with the moment its sync returned.
    pub events: mpsc::UnboundedReceiver<(Instant, Event)>,
    task: tokio::task::JoinHandle<()>,
}

impl Listener {
    /// Starts syncing from now on (what is already in the rooms is not handed on).
    pub async fn start(base_url: &str, user_id: &str, token: &str) -> Listener {
        let mut client = MatrixClient::from_token(base_url, user_id, token).unwrap_or_else(|e| panic!("{e}"));
        client.catch_up().await.unwrap_or_else(|e| panic!("{e}"));
        let (tx, events) = mpsc::unbounded_channel();
        let task = tokio::spawn(async move {
            loop {
                match client.sync_once(SYNC_TIMEOUT_MS).await {
                    Ok(batch) => {
                        let now = Instant::now();
                        for event in batch {
                            if tx.send((now, event)).is_err() {
                                return;
                            }
                        }
                    }
                    Err(e) => {
                        eprintln!("bench: a sync failed (retrying): {e}");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                }
            }
        });
        Listener { events, task }
    }

    /// Waits (within `limit`) for an event that `wanted` accepts; returns when its sync
    /// returned, or the events skipped (the last 10) on timeout.
    pub async fn wait_for(
        &mut self,
        limit: Duration,
        wanted: impl Fn(&Event) -> bool,
    ) -> Result<Instant, Vec<String>> {
        let deadline = tokio::time::Instant::now() + limit;
        let mut skipped = Vec::new();
        loop {
            match tokio::time::timeout_at(deadline, self.events.recv()).await {
                Ok(Some((at, event))) if wanted(&event) => return Ok(at),
                Ok(Some((_, event))) => {
                    if skipped.len() == 10 {
                        skipped.remove(0);
                    }
                    skipped.push(event.to_string());
                }
                Ok(None) | Err(_) => return Err(skipped),
            }
        }
    }

    /// Drops whatever arrives until `quiet` passes with nothing.
    pub async fn drain(&mut self, quiet: Duration) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline
            && tokio::time::timeout(quiet, self.events.recv()).await.is_ok_and(|e| e.is_some())
        {}
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.task.abort();
    }
}

pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index]
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The process's resident memory, from /proc.
pub fn rss_mib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let kib: f64 = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0.0);
    kib / 1024.0
}

/// CPU time (user + system) the process has used so far.
pub fn cpu_time(pid: u32, ticks_per_second: f64) -> Duration {
    cpu_time_of(&format!("/proc/{pid}/stat"), ticks_per_second)
}

/// The user + system CPU time in a `/proc/…/stat` file (a process's, or a thread's:
/// `/proc/<pid>/task/<tid>/stat`); zero if it cannot be read.
pub fn cpu_time_of(path: &str, ticks_per_second: f64) -> Duration {
    let stat = std::fs::read_to_string(path).unwrap_or_default();
    // Fields after the `(comm)`, which may hold spaces: state is field 3, utime 14, stime 15.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = [11, 12].iter().filter_map(|&i| fields.get(i)?.parse::<f64>().ok()).sum();
    Duration::from_secs_f64(ticks / ticks_per_second)
}

pub fn clock_ticks() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .unwrap_or(100.0)
}

/// The last 40 lines of a bot's log file (empty when there is none).
pub fn log_tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(40)..].join("\n")
}

/// Whether a bot's process has exited (or was stopped); its log then says why.
pub fn exited(child: Option<&mut Child>) -> bool {
    child.is_none_or(|c| c.try_wait().ok().flatten().is_some())
}

/// Stops a bot's process: SIGTERM, a bounded wait for the exit, then SIGKILL.
pub fn stop(child: &mut Child) {
    if child.try_wait().ok().flatten().is_none() {
        // std cannot send SIGTERM and the workspace forbids unsafe code: use kill(1).
        let _ = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline && child.try_wait().ok().flatten().is_none() {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}
pub mod appservice;
pub mod process;
