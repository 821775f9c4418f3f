//! `quickstart`: a local IRC server and Matrix homeserver with spellbridge bridging
//! `#magic` between them, to try the games with any IRC client and any Matrix client.
//! `scripts/quickstart.sh` (the README's first command) installs the servers, builds
//! this and the daemon in release, and runs it.
//!
//! It reuses the test harness (`spellbridge_tests::harness`) to:
//! 1. start InspIRCd on 127.0.0.1:6667 and Synapse on 127.0.0.1:8008, fixed ports so the
//!    printed instructions work (a taken port is an error, no other port is tried);
//! 2. register the bot `@spellbridge:localhost` and the demo users alice and bob through
//!    Synapse's shared-secret API; alice creates the public room `#magic:localhost` and
//!    bob joins it;
//! 3. write `spellbridge.toml` into the work dir (IRC with flood control, Matrix with the
//!    bot's password in a file, `[[bridge]] magic` = IRC `#magic` + that room) and run
//!    `spellbridge run` on it, its log going to `spellbridge.log` beside it;
//! 4. print how to connect and play, and run until Ctrl-C (or SIGTERM), which stops the
//!    daemon, Synapse and InspIRCd.
//!
//! Every run starts from scratch: the servers live in temp dirs, and the work dir's
//! database and Matrix store are removed first.
//!
//! `--check` does 1–3, then has a raw IRC client and alice's raw Matrix client send
//! `!games` until the bot answers in each, prints "quickstart OK" and tears everything
//! down; `tests/e2e/quickstart.rs` runs it on other ports.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{ExitCode, ExitStatus, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use spellbridge_tests::harness::HarnessError;
use spellbridge_tests::harness::inspircd::{self, InspIrcd};
use spellbridge_tests::harness::irc_client::IrcClient;
use spellbridge_tests::harness::matrix_client::{MatrixClient, Method};
use spellbridge_tests::harness::synapse::{self, Synapse};
use tokio::process::{Child, Command};
use tokio::time::Instant;

const USAGE: &str = "usage: quickstart [--check] [--dir DIR] [--spellbridge PATH] \
                     [--irc-port N] [--matrix-port N] [--http-port N]";

/// The bot's nick on IRC and localpart on Matrix.
const BOT: &str = "spellbridge";
/// A password for a throwaway homeserver on loopback.
const BOT_PASSWORD: &str = "spellbridge-quickstart";
/// The demo accounts, as (localpart, password).
const DEMO_USERS: [(&str, &str); 2] = [("alice", "alice-password"), ("bob", "bob-password")];
/// The IRC channel, and the Matrix room's alias localpart.
const CHANNEL: &str = "#magic";
/// How long the daemon may take to connect to both networks.
const STARTUP: Duration = Duration::from_secs(90);

/// The command line.
struct Args {
    check: bool,
    dir: PathBuf,
    spellbridge: Option<PathBuf>,
    irc_port: u16,
    matrix_port: u16,
    http_port: u16,
}

impl Args {
    fn parse() -> Result<Args, String> {
        let mut args = Args {
            check: false,
            dir: PathBuf::from("quickstart"),
            spellbridge: None,
            irc_port: 6667,
            matrix_port: 8008,
            http_port: 9180,
        };
        let mut words = std::env::args().skip(1);
        while let Some(word) = words.next() {
            let mut value = || words.next().ok_or_else(|| format!("{word} needs a value"));
            let port =
                |text: String| text.parse::<u16>().map_err(|_| format!("{word}: `{text}` is not a port"));
            match word.as_str() {
                "--check" => args.check = true,
                "--dir" => args.dir = PathBuf::from(value()?),
                "--spellbridge" => args.spellbridge = Some(PathBuf::from(value()?)),
                "--irc-port" => args.irc_port = port(value()?)?,
                "--matrix-port" => args.matrix_port = port(value()?)?,
                "--http-port" => args.http_port = port(value()?)?,
                "-h" | "--help" => return Err(String::new()),
                _ => return Err(format!("unknown argument `{word}`")),
            }
        }
        Ok(args)
    }
}

fn main() -> ExitCode {
    let args = match Args::parse() {
        Ok(args) => args,
        Err(problem) => {
            eprintln!("{problem}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(problem) => {
            eprintln!("quickstart: error: {problem}");
            ExitCode::FAILURE
        }
    }
}

fn say(text: &str) {
    println!("quickstart: {text}");
}

/// Starts the servers, runs the session, stops the servers (also when the session fails).
fn run(args: &Args) -> Result<(), String> {
    let daemon_binary = locate_daemon(args)?;
    let dir = prepare_dir(&args.dir)?;
    say(&format!("work dir {}", dir.display()));

    say(&format!("starting InspIRCd on 127.0.0.1:{}", args.irc_port));
    let ircd = InspIrcd::start_with(inspircd::Options { port: Some(args.irc_port), ..Default::default() })
        .map_err(|e| port_hint(e, "--irc-port"))?;
    say(&format!("starting Synapse on 127.0.0.1:{}", args.matrix_port));
    let synapse =
        Synapse::start_with(synapse::Options { port: Some(args.matrix_port), ..Default::default() })
            .map_err(|e| port_hint(e, "--matrix-port"))?;

    let mut accounts = Vec::new();
    for (localpart, password) in [(BOT, BOT_PASSWORD)].into_iter().chain(DEMO_USERS) {
        let (user_id, token) = synapse.register(localpart, password, false).map_err(|e| e.to_string())?;
        accounts.push(
            MatrixClient::from_token(&synapse.base_url(), &user_id, &token).map_err(|e| e.to_string())?,
        );
    }
    say("registered @spellbridge, @alice and @bob on Matrix");

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("starting the async runtime: {e}"))?;
    let result = runtime.block_on(session(args, &daemon_binary, &dir, &synapse, accounts));
    say("stopping Synapse and InspIRCd");
    drop(synapse);
    drop(ircd);
    result
}

/// The harness's error, naming the flag that picks another port when the port is taken.
fn port_hint(error: HarnessError, flag: &str) -> String {
    match error {
        HarnessError::PortInUse { .. } => format!("{error} ({flag} N)"),
        other => other.to_string(),
    }
}

/// Everything between the servers' start and stop: the room, the config, the daemon.
async fn session(
    args: &Args,
    daemon_binary: &Path,
    dir: &Path,
    synapse: &Synapse,
    accounts: Vec<MatrixClient>,
) -> Result<(), String> {
    let [mut bot, mut alice, mut bob]: [MatrixClient; 3] =
        accounts.try_into().map_err(|_| "three accounts were registered".to_owned())?;
    let fail = |e: HarnessError| e.to_string();
    // The daemon logs in as a device of its own: the registration's is not needed.
    bot.logout().await.map_err(fail)?;
    let alias = format!("{CHANNEL}:{}", synapse.server_name());
    let room = json!({
        "preset": "public_chat",
        "visibility": "public",
        "room_alias_name": CHANNEL.trim_start_matches('#'),
        "name": "magic",
        "topic": format!("spellbridge quick start, bridged with {CHANNEL} on IRC 127.0.0.1:{}", args.irc_port),
    });
    let created =
        alice.call(Method::POST, "/_matrix/client/v3/createRoom", Some(&room)).await.map_err(fail)?;
    let room_id = created
        .get("room_id")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("createRoom answered without a room_id: {created}"))?
        .to_owned();
    bob.join(&alias).await.map_err(fail)?;
    say(&format!("alice created the public room {alias} ({room_id}); bob joined it"));

    let config_path = write_config(args, dir, synapse, bot.user_id(), &room_id)?;
    let mut daemon = Daemon::start(daemon_binary, &config_path, &dir.join("spellbridge.log"))?;
    let outcome = if args.check {
        check(args, &mut daemon, &mut alice, &room_id).await
    } else {
        // alice and bob log in from a client of their own: drop the registration devices.
        for user in [&mut alice, &mut bob] {
            user.logout().await.map_err(fail)?;
        }
        serve(args, &mut daemon, dir, &alias).await
    };
    let stopped = daemon.stop().await;
    if outcome.is_err() {
        eprintln!("--- spellbridge's log ({}) ends:\n{}", daemon.log.display(), daemon.log_tail(40));
    }
    match stopped {
        Ok(status) if status.success() => say("spellbridge stopped"),
        Ok(status) => say(&format!("spellbridge stopped ({status})")),
        Err(problem) => say(&problem),
    }
    outcome
}

/// The daemon: `spellbridge run` as a child process, its log in a file.
struct Daemon {
    child: Child,
    log: PathBuf,
}

impl Daemon {
    fn start(binary: &Path, config: &Path, log: &Path) -> Result<Daemon, String> {
        let checked = std::process::Command::new(binary)
            .args(["check-config", "--config"])
            .arg(config)
            .output()
            .map_err(|e| format!("running {} check-config: {e}", binary.display()))?;
        if !checked.status.success() {
            return Err(format!(
                "spellbridge refuses the config {}:\n{}",
                config.display(),
                String::from_utf8_lossy(&checked.stderr)
            ));
        }
        let log_file = fs::File::create(log).map_err(|e| format!("creating {}: {e}", log.display()))?;
        say(&format!("starting spellbridge run --config {} (log: {})", config.display(), log.display()));
        let child = Command::new(binary)
            .args(["run", "--config"])
            .arg(config)
            .env("RUST_LOG", std::env::var("RUST_LOG").unwrap_or_else(|_| "info".to_owned()))
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log_file)
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("starting {}: {e}", binary.display()))?;
        Ok(Daemon { child, log: log.to_owned() })
    }

    fn log_text(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn log_tail(&self, lines: usize) -> String {
        let text = self.log_text();
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }

    /// An error if the daemon has exited.
    fn ensure_running(&mut self) -> Result<(), String> {
        match self.child.try_wait() {
            Ok(None) => Ok(()),
            Ok(Some(status)) => Err(format!("spellbridge exited ({status})")),
            Err(e) => Err(format!("watching spellbridge: {e}")),
        }
    }

    /// SIGTERM (through kill(1): the workspace forbids unsafe code), then SIGKILL after
    /// 15 s.
    async fn stop(&mut self) -> Result<ExitStatus, String> {
        if let Ok(Some(status)) = self.child.try_wait() {
            return Ok(status);
        }
        if let Some(pid) = self.child.id() {
            let _ = Command::new("kill").args(["-TERM", &pid.to_string()]).status().await;
        }
        match tokio::time::timeout(Duration::from_secs(15), self.child.wait()).await {
            Ok(status) => status.map_err(|e| format!("waiting for spellbridge: {e}")),
            Err(_) => {
                let _ = self.child.kill().await;
                Err("spellbridge did not stop within 15 s of SIGTERM: killed it".to_owned())
            }
        }
    }
}

/// `--check`: the bot answers `!games` on IRC and on Matrix.
async fn check(
    args: &Args,
    daemon: &mut Daemon,
    alice: &mut MatrixClient,
    room_id: &str,
) -> Result<(), String> {
    let irc = async {
        let mut client = IrcClient::connect(args.irc_port, "quickcheck").await.map_err(|e| e.to_string())?;
        client.join(CHANNEL).await.map_err(|e| e.to_string())?;
        let deadline = Instant::now() + STARTUP;
        while Instant::now() < deadline {
            client.privmsg(CHANNEL, "!games").await.map_err(|e| e.to_string())?;
            let until = Instant::now() + Duration::from_secs(2);
            while let Some(m) = client.next_privmsg(until.saturating_duration_since(Instant::now())).await {
                if m.from == BOT && m.text.contains("Games:") {
                    say(&format!("IRC: the bot answered !games in {CHANNEL}"));
                    let _ = client.quit().await;
                    return Ok(());
                }
            }
        }
        Err(format!("the bot did not answer !games in {CHANNEL} on IRC within {STARTUP:?}"))
    };
    let matrix = async {
        let bot = format!("@{BOT}:localhost");
        alice.catch_up().await.map_err(|e| e.to_string())?;
        let deadline = Instant::now() + STARTUP;
        while Instant::now() < deadline {
            alice.send_text(room_id, "!games").await.map_err(|e| e.to_string())?;
            let until = Instant::now() + Duration::from_secs(2);
            while let Some(m) = alice.next_message(until.saturating_duration_since(Instant::now())).await {
                if m.sender == bot && m.room_id == room_id && m.body.contains("Games:") {
                    say("Matrix: the bot answered alice's !games in the room");
                    return Ok(());
                }
            }
        }
        Err(format!("the bot did not answer !games in {room_id} on Matrix within {STARTUP:?}"))
    };
    tokio::select! {
        both = async { tokio::try_join!(irc, matrix) } => both?,
        status = daemon.child.wait() => {
            return Err(format!("spellbridge exited during the check ({})", describe(status)));
        }
    };
    println!("quickstart OK");
    Ok(())
}

/// The normal run: waits until the daemon is on both networks, prints how to play, and
/// runs until Ctrl-C or SIGTERM (or the daemon exits).
async fn serve(args: &Args, daemon: &mut Daemon, dir: &Path, alias: &str) -> Result<(), String> {
    say("waiting for spellbridge to connect to IRC and Matrix");
    let deadline = Instant::now() + STARTUP;
    let mut connected = false;
    while Instant::now() < deadline {
        daemon.ensure_running()?;
        let log = daemon.log_text();
        if log.contains("registered on IRC") && log.contains("joined a configured room") {
            connected = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    if !connected {
        say(&format!("spellbridge has not logged both connections yet; see {}", daemon.log.display()));
    }
    print_instructions(args, dir, alias);

    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(|e| format!("listening for SIGTERM: {e}"))?;
    tokio::select! {
        // Ctrl-C also reaches the daemon and the servers (one process group): look at
        // it first, so their exit is not taken for a crash.
        biased;
        _ = tokio::signal::ctrl_c() => {
            println!();
            say("Ctrl-C: stopping");
            Ok(())
        }
        _ = terminate.recv() => Ok(()),
        status = daemon.child.wait() => match status {
            Ok(status) if status.success() => Ok(()),
            other => Err(format!("spellbridge exited ({})", describe(other))),
        },
    }
}

fn describe(status: std::io::Result<ExitStatus>) -> String {
    match status {
        Ok(status) => status.to_string(),
        Err(e) => format!("cannot tell: {e}"),
    }
}

fn print_instructions(args: &Args, dir: &Path, alias: &str) {
    let [(alice, alice_password), (bob, bob_password)] = DEMO_USERS;
    println!(
        r#"
==========================================================================================
 spellbridge is running: IRC {CHANNEL} and Matrix {alias} are one bridged room.

 IRC      any client: server 127.0.0.1, port {irc}, no TLS, any nick; then /join {CHANNEL}
          e.g.  irssi -c 127.0.0.1 -p {irc} -n yourname
 Matrix   any client (Element, …): homeserver http://127.0.0.1:{matrix}
          log in as {alice} / {alice_password}  or  {bob} / {bob_password}  (or register your own)
          both are already in {alias}; others join it by that alias

 Play     in the room: `!new thaum` or `!duel <player>`; `!help` lists every command.
          The Duel's spells go by private message to the bot: `!cast …`
          (on IRC /msg {BOT} !cast …; on Matrix accept the bot's direct chat, or
          start one with @{BOT}:localhost).

 Watch    the spectator site: http://127.0.0.1:{http}/ (every table, live, and the
          leaderboard; `!board` in a room links there)

 Files    {dir}/spellbridge.toml (config), spellbridge.log (the bot's log),
          spellbridge.db (the games). Every run starts from scratch.
 Stop     Ctrl-C stops spellbridge, Synapse and InspIRCd.
==========================================================================================
"#,
        irc = args.irc_port,
        matrix = args.matrix_port,
        http = args.http_port,
        dir = dir.display(),
    );
}

/// The daemon binary: `--spellbridge`, or the one beside this executable (both are
/// built into the same target dir).
fn locate_daemon(args: &Args) -> Result<PathBuf, String> {
    let path = match &args.spellbridge {
        Some(path) => path.clone(),
        None => std::env::current_exe()
            .map_err(|e| format!("finding this executable: {e}"))?
            .with_file_name("spellbridge"),
    };
    if path.is_file() {
        Ok(path)
    } else {
        Err(format!(
            "the spellbridge binary is not at {}: build it with `cargo build --release -p spellbridge` \
             (scripts/quickstart.sh does) or pass --spellbridge PATH",
            path.display()
        ))
    }
}

/// Creates the work dir and removes what an earlier run left of the games and the bot's
/// Matrix session (their servers are gone). Returns its absolute path.
fn prepare_dir(dir: &Path) -> Result<PathBuf, String> {
    fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let dir = dir.canonicalize().map_err(|e| format!("resolving {}: {e}", dir.display()))?;
    for name in ["spellbridge.db", "spellbridge.db-wal", "spellbridge.db-shm", "spellbridge.db-journal"] {
        let path = dir.join(name);
        if path.exists() {
            fs::remove_file(&path).map_err(|e| format!("removing {}: {e}", path.display()))?;
        }
    }
    let store = dir.join("matrix-store");
    if store.exists() {
        fs::remove_dir_all(&store).map_err(|e| format!("removing {}: {e}", store.display()))?;
    }
    Ok(dir)
}

/// Writes the bot's password file and `spellbridge.toml`; returns the config's path.
fn write_config(
    args: &Args,
    dir: &Path,
    synapse: &Synapse,
    bot_id: &str,
    room_id: &str,
) -> Result<PathBuf, String> {
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        fs::write(&path, text).map_err(|e| format!("writing {}: {e}", path.display())).map(|()| path)
    };
    let password_file = write("bot-password", &format!("{BOT_PASSWORD}\n"))?;
    // JSON strings are TOML basic strings.
    let s = |text: &str| Value::from(text).to_string();
    let path = |p: &Path| s(&p.display().to_string());
    let config = format!(
        r#"# Written by the quick start (tests/bin/quickstart.rs) for its local InspIRCd and
# Synapse; rewritten on every run. Check it with: spellbridge check-config --config PATH
prefix = "!"

[store]
path = {database}

[thaum]
# Phases move only with `!phase next`: a demo need not wait for Sunday.
schedule = "manual"

[[irc]]
name = "irc"
server = "127.0.0.1"
port = {irc_port}
tls = false
nick = "{BOT}"
channels = ["{CHANNEL}"]
# The local InspIRCd runs no services: players are known by nick (none can be a game
# master). On a real network leave this out: it is on where the network has accounts.
require_account = false

# Flood control on, as for a small network: 8 lines at once, then one a second.
[irc.flood]
burst = 8
interval = "1s"

[[matrix]]
name = "matrix"
homeserver = {homeserver}
user_id = {bot_id}
password = {{ file = {password_file} }}
store = {store}
rooms = [{room_id}]
# Direct chats (the Duel's spells) and other rooms from local users are accepted.
invite_allow = ["*:localhost"]

[[bridge]]
name = "magic"
rooms = [
    {{ network = "irc", room = "{CHANNEL}" }},
    {{ network = "matrix", room = {room_id} }},
]
relay = true

[permissions]
admins = ["matrix/@alice:localhost"]

[http]
listen = "127.0.0.1:{http_port}"
# Where `!board` and the tables' links point (the spectator site).
public_url = "http://127.0.0.1:{http_port}"
"#,
        database = path(&dir.join("spellbridge.db")),
        irc_port = args.irc_port,
        homeserver = s(&synapse.base_url()),
        bot_id = s(bot_id),
        password_file = path(&password_file),
        store = path(&dir.join("matrix-store")),
        room_id = s(room_id),
        http_port = args.http_port,
    );
    write("spellbridge.toml", &config)
}
