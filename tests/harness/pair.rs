//! Two `spellbridge run` daemons on one PostgreSQL with the same config (issue 34's hot
//! standby): each in a temp dir of its own ([`Daemon`]) with its own `[http] listen`
//! port, and what each says it is: [`role`] asks `/leader` (200 only on the active
//! daemon) and `/healthz` (`"role": "standby"` on a standby).
//!
//! The test writes one config for both through a closure that is given which daemon
//! (0 or 1) and its http port, so the two differ only where the test says (the port,
//! and for the database cut, the `[store] url` of one of them through a cut proxy).
//! [`Servers`] starts the real servers they play on and the bot's one Matrix login.

use std::time::Duration;

use tokio::time::Instant;

use super::HarnessError;
use super::daemon::Daemon;
use super::endpoint;
use super::inspircd::InspIrcd;
use super::postgres::Postgres;
use super::synapse::Synapse;

/// What a daemon's endpoint says it is now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Role {
    /// `/leader` answers 200: it holds the lease and plays.
    Active,
    /// `/healthz` says `"role": "standby"` (and `/leader` does not answer 200).
    Standby,
    /// Nothing answers on its port (not started, exited, paused, or still starting).
    Silent,
    /// It answers, but neither as the leader nor as a standby: the `/healthz` body.
    Other(String),
}

/// The role of the daemon whose `[http] listen` is `127.0.0.1:port`.
pub async fn role(port: u16) -> Role {
    match endpoint::get(port, "/leader").await {
        Some((200, _)) => return Role::Active,
        None => return Role::Silent,
        Some(_) => {}
    }
    match endpoint::get(port, "/healthz").await {
        None => Role::Silent,
        Some((_, body)) => {
            let said = serde_json::from_str::<serde_json::Value>(&body)
                .ok()
                .and_then(|v| v.get("role").and_then(|r| r.as_str()).map(str::to_owned));
            if said.as_deref() == Some("standby") { Role::Standby } else { Role::Other(body) }
        }
    }
}

/// Two daemons with one config each, made by the same closure.
pub struct Pair {
    daemons: [Daemon; 2],
    http: [u16; 2],
}

impl Pair {
    /// Two daemons, not started: `config(which, http_port)` is each one's config (it must
    /// say `[http] listen = "127.0.0.1:<http_port>"`), `files` are written into both dirs
    /// (a password file) and `rust_log` is both daemons' `RUST_LOG`.
    pub fn new(
        binary: &str,
        files: &[(&str, &str)],
        rust_log: &str,
        config: impl Fn(usize, u16) -> String,
    ) -> Result<Pair, HarnessError> {
        let make = |which: usize| -> Result<(Daemon, u16), HarnessError> {
            let port = endpoint::free_port()?;
            let mut daemon = Daemon::new(binary)?;
            daemon.env("RUST_LOG", rust_log);
            for (name, contents) in files {
                daemon.write(name, contents)?;
            }
            daemon.set_config(&config(which, port))?;
            Ok((daemon, port))
        };
        let (a, a_port) = make(0)?;
        let (b, b_port) = make(1)?;
        Ok(Pair { daemons: [a, b], http: [a_port, b_port] })
    }

    /// Daemon 0 or 1.
    pub fn daemon(&mut self, which: usize) -> &mut Daemon {
        &mut self.daemons[which]
    }

    /// Daemon 0 or 1's http port.
    pub fn http(&self, which: usize) -> u16 {
        self.http[which]
    }

    /// Starts daemon 0 or 1 and waits (as [`Pair::wait_role`]) until it says `wanted`.
    pub async fn start(
        &mut self,
        which: usize,
        wanted: Role,
        limit: Duration,
    ) -> Result<Duration, HarnessError> {
        self.daemons[which].spawn()?;
        self.wait_role(which, wanted, limit).await
    }

    /// What daemon 0 or 1 says it is now.
    pub async fn role(&self, which: usize) -> Role {
        role(self.http[which]).await
    }

    /// Polls daemon `which` every 100 ms until it says `wanted`, for at most `limit`; how
    /// long that took. The error names both daemons' last roles and logs' ends.
    pub async fn wait_role(
        &self,
        which: usize,
        wanted: Role,
        limit: Duration,
    ) -> Result<Duration, HarnessError> {
        let started = Instant::now();
        let deadline = started + limit;
        loop {
            let now = self.role(which).await;
            if now == wanted {
                return Ok(started.elapsed());
            }
            if Instant::now() >= deadline {
                let other = self.role(1 - which).await;
                return Err(HarnessError::Io {
                    what: format!("waiting for daemon {which} to be {wanted:?}"),
                    source: std::io::Error::other(format!(
                        "it is still {now:?} after {limit:?} (daemon {} is {other:?})\n\
                         --- daemon {which}'s log ends:\n{}\n--- daemon {}'s log ends:\n{}",
                        1 - which,
                        self.daemons[which].log_tail(40),
                        1 - which,
                        self.daemons[1 - which].log_tail(40),
                    )),
                });
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// The start of a pair's config, the same for every pair: the prefix, the `[store]` both
/// daemons share with its `lease`, and this daemon's `[http] listen` on `http`.
pub fn config_head(url: &str, lease: Duration, http: u16) -> String {
    format!(
        "prefix = \"!\"\n\n[store]\nurl = \"{url}\"\nlease = \"{lease}s\"\n\n[http]\nlisten = \"127.0.0.1:{http}\"\n",
        lease = lease.as_secs(),
    )
}

/// Runs `start` (the other servers' starts) while a new PostgreSQL starts beside it;
/// panics if PostgreSQL, which a pair needs, did not start. Blocking.
pub fn beside_postgres<T>(start: impl FnOnce() -> T) -> (T, Postgres) {
    std::thread::scope(|scope| {
        let pg = scope.spawn(Postgres::start_new);
        let started = start();
        let pg = pg
            .join()
            .unwrap_or_else(|_| panic!("starting PostgreSQL panicked"))
            .unwrap_or_else(|e| panic!("PostgreSQL is needed: {e}"));
        (started, pg)
    })
}

/// The servers the two daemons of the failover tests and the takeover bench play on: a
/// real InspIRCd, Synapse and a new PostgreSQL, started side by side (Synapse takes the
/// longest). Blocking: call it from `block_in_place` on a runtime.
pub struct Servers {
    /// The IRC server.
    pub irc: InspIrcd,
    /// The Matrix homeserver.
    pub synapse: Synapse,
    /// The database both daemons share.
    pub pg: Postgres,
}

impl Servers {
    /// Starts the three at once; panics naming the one that is needed and did not start.
    pub fn start() -> Servers {
        let ((irc, synapse), pg) = beside_postgres(|| {
            std::thread::scope(|scope| {
                let synapse = scope.spawn(Synapse::start);
                let irc = InspIrcd::start().unwrap_or_else(|e| panic!("InspIRCd is needed: {e}"));
                let synapse = synapse
                    .join()
                    .unwrap_or_else(|_| panic!("starting Synapse panicked"))
                    .unwrap_or_else(|e| panic!("Synapse is needed: {e}"));
                (irc, synapse)
            })
        });
        Servers { irc, synapse, pg }
    }

    /// Registers the bot `localpart` with `password` and returns its login's access token
    /// as the file `access_token = { file = "…" }` reads: one device for both daemons (bot
    /// mode on PostgreSQL takes no password).
    pub fn bot_token(&self, localpart: &str, password: &str) -> String {
        let (_, token) = self
            .synapse
            .register(localpart, password, false)
            .unwrap_or_else(|e| panic!("registering the bot {localpart}: {e}"));
        format!("{token}\n")
    }
}
