//! `spellbridge console`: plays through the real router and games over stdin/stdout,
//! with no network (CONTRACT.md).
//!
//! Each input line is `name: text` (said in the console room), `name (dm): text` (said
//! privately to the bot), or `#clock +3d` (the virtual clock moves and due timers fire).
//! A said line may start with an IRCv3-style tag, `@msgid=42 alice: …`, giving the
//! message an id: a line whose id was already handled is not applied again, as when a
//! network redelivers. Every message the bot sends is printed as `[room] text` or
//! `[dm:name] text`. The messages travel through the in-memory [`GameTransport`], as they
//! would through IRC or Matrix; the clock moves only with `#clock`, so a script replays
//! the same way every time.
//!
//! The games are told in English, or in the language `--lang` names (`zh-CN`).
//!
//! Lines go through the same [`Engine`] as the daemon's messages. With a [`Store`],
//! every step is committed before its messages are printed, and a later
//! run on the same file continues every game (and first prints what the last run queued
//! but never printed).

use std::io::{BufRead, Write};
use std::path::Path;

use anyhow::Context as _;
use serde_json::Value;
use spellbridge_adapters::memory::MemoryTransport;
use spellbridge_core::time::parse_duration;
use spellbridge_core::{
    Destination, GameTransport, Inbound, Language, NetworkId, PlayerId, Registry, RoomId, Timestamp,
};

use crate::engine::{Engine, EngineError, Saved};
use crate::identity::Scope;
use crate::router::{Router, RouterConfig};
use crate::secrets::Secrets;
use crate::store::{Durability, OpenMode, Queued, Store};
use crate::turn::Outbound;

/// The console's one room.
pub const CONSOLE_ROOM: &str = "console";
/// The console's network name.
pub use crate::identity::CONSOLE_NETWORK;
/// Where a console with a store keeps its virtual clock, so a later run goes on from it.
const CLOCK_KEY: &str = "console.clock";

/// One line of a console script, read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScriptLine {
    /// Nothing to do: blank or a `# ` comment.
    Blank,
    /// A player says something, in the room or privately.
    Say {
        /// Who.
        player: String,
        /// What.
        text: String,
        /// True for `name (dm): …`.
        private: bool,
        /// The message's id, from a leading `@msgid=…` tag.
        message_id: Option<String>,
    },
    /// `#clock +<duration>`: seconds to move the clock forward.
    Clock(i64),
}

/// Why a script line could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ScriptError {
    /// The line has no `name:` in front.
    #[error("cannot read `{0}`: write `name: text`, `name (dm): text` or `#clock +3d`")]
    Unreadable(String),
    /// The `#clock` line has a bad duration.
    #[error("cannot read the duration in `{0}`: write `#clock +<n><s|m|h|d>`, e.g. `#clock +3d`")]
    BadClock(String),
    /// The line is not UTF-8 text; it is skipped and the session goes on.
    #[error(
        "not UTF-8 text (the bytes at column {at} are not a character); the line was skipped: save the script as UTF-8"
    )]
    NotUtf8 {
        /// The 1-based byte column of the first byte that is not part of a character.
        at: usize,
    },
    /// The store failed and the games could not be reloaded: the session stops.
    #[error("{0}")]
    Stopped(String),
}

/// Reads one line of a console script.
pub fn read_line(line: &str) -> Result<ScriptLine, ScriptError> {
    let trimmed = line.trim();
    if trimmed.is_empty() || trimmed == "#" || trimmed.starts_with("# ") {
        return Ok(ScriptLine::Blank);
    }
    if let Some(rest) = trimmed.strip_prefix("#clock") {
        let duration = rest.trim().strip_prefix('+').and_then(parse_duration);
        return duration.map(ScriptLine::Clock).ok_or_else(|| ScriptError::BadClock(trimmed.to_owned()));
    }
    let (message_id, said) = match trimmed.strip_prefix("@msgid=") {
        Some(tagged) => {
            let (id, rest) =
                tagged.split_once(' ').ok_or_else(|| ScriptError::Unreadable(trimmed.to_owned()))?;
            (Some(id.to_owned()), rest.trim_start())
        }
        None => (None, trimmed),
    };
    let (speaker, text) = said.split_once(':').ok_or_else(|| ScriptError::Unreadable(trimmed.to_owned()))?;
    let speaker = speaker.trim();
    let (player, private) = match speaker.strip_suffix("(dm)") {
        Some(name) => (name.trim(), true),
        None => (speaker, false),
    };
    if player.is_empty() || player.contains(char::is_whitespace) {
        return Err(ScriptError::Unreadable(trimmed.to_owned()));
    }
    Ok(ScriptLine::Say { player: player.to_owned(), text: text.trim().to_owned(), private, message_id })
}

/// A console session: the [`Engine`] (a router and optionally a store), an in-memory
/// transport and a virtual clock.
pub struct Console {
    engine: Engine,
    transport: MemoryTransport,
    now: Timestamp,
}

/// A console that ends (the script or input is done) shuts down cleanly: every table's
/// snapshot is written, so the next start has no journal rows to replay.
impl Drop for Console {
    fn drop(&mut self) {
        if let Err(error) = self.engine.write_snapshots() {
            tracing::warn!(%error, "could not write the tables' snapshots; the next start replays their latest moves");
        }
    }
}

impl Console {
    /// The console's router options: random draws from `seed`, bare player names, English
    /// (the engine's tests and the site bench build their own console with these).
    pub fn options(seed: u64) -> RouterConfig {
        Console::options_in(seed, Language::En)
    }

    /// The console's router options, its games told in `language` (`--lang`).
    fn options_in(seed: u64, language: Language) -> RouterConfig {
        // The console is the only network: its players keep bare names (CONTRACT.md).
        let network = NetworkId::new(CONSOLE_NETWORK);
        let scopes = [(network.clone(), Scope::Bare)].into();
        let languages = crate::config::LanguageSettings::all(language);
        RouterConfig { secrets: Secrets::Seeded(seed), scopes, languages, ..RouterConfig::default() }
    }

    /// A console whose random draws all derive from `seed`, keeping its games in memory.
    pub fn new(seed: u64) -> Self {
        Console::with_games(seed, Registry::standard())
    }

    /// As [`Console::new`], telling the games in `language` (`spellbridge console --lang`).
    pub fn new_in(seed: u64, language: Language) -> Self {
        Console::with_games_in(seed, Registry::standard(), language)
    }

    /// A console offering the games of `games` (e.g. `Registry::standard()` with one
    /// more [`Registry::register`]ed), keeping them in memory.
    pub fn with_games(seed: u64, games: Registry) -> Self {
        Console::with_games_in(seed, games, Language::En)
    }

    /// As [`Console::with_games`], telling the games in `language`.
    pub fn with_games_in(seed: u64, games: Registry, language: Language) -> Self {
        let options = Console::options_in(seed, language);
        let router = Router::new(games.clone(), options.clone());
        Console::over(Engine::new(router, None, Box::new(move || games.clone()), options))
    }

    fn over(engine: Engine) -> Self {
        Self {
            engine,
            transport: MemoryTransport::new(NetworkId::new(CONSOLE_NETWORK)),
            now: Timestamp::CONSOLE_EPOCH,
        }
    }

    /// A console that keeps its games in the SQLite file at `path` (created if missing),
    /// continuing whatever an earlier run left there.
    pub fn with_store(seed: u64, path: &Path) -> anyhow::Result<Self> {
        Console::with_store_in(seed, path, Language::En)
    }

    /// As [`Console::with_store`], telling the games in `language`.
    pub fn with_store_in(seed: u64, path: &Path, language: Language) -> anyhow::Result<Self> {
        let store = Store::open(path, OpenMode::CreateIfMissing, Durability::Full)?;
        Console::on_in(seed, store, language)
    }

    /// A console on an open `store`, continuing whatever it holds.
    pub fn on(seed: u64, store: Store) -> anyhow::Result<Self> {
        Console::on_in(seed, store, Language::En)
    }

    /// As [`Console::on`], telling the games in `language`.
    pub fn on_in(seed: u64, store: Store, language: Language) -> anyhow::Result<Self> {
        let options = Console::options_in(seed, language);
        let router = store.load(Registry::standard(), options.clone())?;
        let clock = store.meta(CLOCK_KEY)?;
        let path = store.path().to_owned();
        let mut console =
            Console::over(Engine::new(router, Some(store), Box::new(Registry::standard), options));
        if let Some(clock) = clock {
            let seconds = clock.parse().with_context(|| {
                format!("{}: the stored console clock `{clock}` is not a number", path.display())
            })?;
            console.now = Timestamp(seconds);
        }
        Ok(console)
    }

    /// Messages an earlier run committed but did not print (it stopped first); printing
    /// them empties the outbox.
    pub async fn drain_outbox(&mut self) -> anyhow::Result<Vec<String>> {
        let Some(store) = self.engine.store() else { return Ok(Vec::new()) };
        let mut printed = Vec::new();
        for queued in store.pending()? {
            printed.extend(self.deliver(&[queued.outbound]).await);
            if let Some(store) = self.engine.store() {
                store.sent(queued.id)?;
            }
        }
        Ok(printed)
    }

    /// Plays one script line; returns the printed lines.
    pub async fn feed(&mut self, line: &str) -> Result<Vec<String>, ScriptError> {
        let done = match read_line(line)? {
            ScriptLine::Blank => return Ok(Vec::new()),
            ScriptLine::Clock(seconds) => {
                self.now = self.now.plus(seconds);
                let meta = vec![(CLOCK_KEY.to_owned(), self.now.0.to_string())];
                let (queued, saved) = self.engine.tick(self.now, meta).map_err(stopped)?;
                let mut printed = self.send(queued).await;
                if let Saved::Failed(error) = saved {
                    printed.push(format!("(timers not applied: {error})"));
                }
                return Ok(printed);
            }
            ScriptLine::Say { player, text, private, message_id } => {
                let room = if private { format!("dm:{player}") } else { CONSOLE_ROOM.to_owned() };
                self.transport.inject(Inbound {
                    private,
                    message_id,
                    ..Inbound::new(
                        NetworkId::new(CONSOLE_NETWORK),
                        RoomId::new(room),
                        PlayerId::new(player),
                        text,
                    )
                });
                let Some(inbound) = self.transport.recv().await else { return Ok(Vec::new()) };
                self.engine
                    .handle_batch(std::slice::from_ref(&inbound), self.now, Vec::new())
                    .map_err(stopped)?
            }
        };
        Ok(self.send(done.queued).await)
    }

    /// Every table's state (CONTRACT.md `--state-json`).
    pub fn snapshot(&self) -> Value {
        self.engine.router().snapshot()
    }

    /// Prints what the engine handed out, taking each committed one out of the outbox.
    async fn send(&mut self, queued: Vec<Queued>) -> Vec<String> {
        let mut printed = Vec::new();
        for q in queued {
            printed.extend(self.deliver(std::slice::from_ref(&q.outbound)).await);
            if let (Some(store), true) = (self.engine.store(), q.id >= 0) {
                // Already printed: if this fails the message prints again on restart.
                let _ = store.sent(q.id);
            }
        }
        printed
    }

    async fn deliver(&self, outbound: &[Outbound]) -> Vec<String> {
        for message in outbound {
            // The in-memory transport cannot fail to send.
            let _ = self.transport.send(&message.to, &message.message).await;
        }
        self.transport
            .take_sent()
            .into_iter()
            .map(|(to, text)| match to {
                Destination::Room(room) => format!("[{room}] {}", text.plain()),
                Destination::Private(player) => format!("[dm:{player}] {}", text.plain()),
            })
            .collect()
    }
}

/// The engine stopped: the session cannot go on.
fn stopped(error: EngineError) -> ScriptError {
    ScriptError::Stopped(error.to_string())
}

/// Plays a whole script from `input`, printing to `output`; script errors go to `errors`.
pub async fn play(
    console: &mut Console,
    input: impl BufRead,
    mut output: impl Write,
    mut errors: impl Write,
) -> anyhow::Result<()> {
    for text in console.drain_outbox().await? {
        writeln!(output, "{text}")?;
    }
    let mut input = input;
    let mut bytes = Vec::new();
    for number in 1.. {
        bytes.clear();
        if input.read_until(b'\n', &mut bytes).context("reading the console input")? == 0 {
            break;
        }
        let line = match utf8_line(&bytes) {
            Ok(line) => line,
            Err(error) => {
                writeln!(errors, "line {number}: {error}")?;
                continue;
            }
        };
        match console.feed(line).await {
            Ok(printed) => {
                for text in printed {
                    writeln!(output, "{text}")?;
                }
            }
            Err(ScriptError::Stopped(reason)) => anyhow::bail!("line {number}: {reason}"),
            Err(error) => writeln!(errors, "line {number}: {error}")?,
        }
        output.flush()?;
    }
    Ok(())
}

/// One input line without its `\n` or `\r\n`, as text; a line that is not UTF-8 is
/// refused (and skipped by [`play`]) rather than ending the session.
fn utf8_line(bytes: &[u8]) -> Result<&str, ScriptError> {
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    std::str::from_utf8(bytes).map_err(|error| ScriptError::NotUtf8 { at: error.valid_up_to() + 1 })
}

/// Plays a script held in memory and returns what was printed and the final state; an
/// unreadable line is an error. Scenario tests use this; it runs its own runtime.
pub fn run_script(script: &str, seed: u64) -> anyhow::Result<(String, Value)> {
    run_in(Console::new(seed), script)
}

/// As [`run_script`], the games told in `language` (the zh-CN scenario transcripts).
pub fn run_script_in(script: &str, seed: u64, language: Language) -> anyhow::Result<(String, Value)> {
    run_in(Console::new_in(seed, language), script)
}

/// As [`run_script`], with the games of `games` (a game kept outside the core, added
/// with one [`Registry::register`]).
pub fn run_script_with_games(script: &str, seed: u64, games: Registry) -> anyhow::Result<(String, Value)> {
    run_in(Console::with_games(seed, games), script)
}

/// As [`run_script`], on the database at `db` (created if missing, continued if not), as
/// `spellbridge console --db` plays.
pub fn run_script_with_db(script: &str, seed: u64, db: &Path) -> anyhow::Result<(String, Value)> {
    run_in(Console::with_store(seed, db)?, script)
}

/// The scenario transcript `tests/scenarios/<name>.txt` and the seed its first line names
/// (`# seed: N`; 0 without one), for the unit tests that play one.
#[cfg(test)]
pub(crate) fn scenario(name: &str) -> (String, u64) {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/scenarios")
        .join(format!("{name}.txt"));
    let script = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let seed = script
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("# seed:"))
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0);
    (script, seed)
}

fn run_in(mut console: Console, script: &str) -> anyhow::Result<(String, Value)> {
    let runtime = tokio::runtime::Builder::new_current_thread().build()?;
    let (mut printed, mut errors) = (Vec::new(), Vec::new());
    runtime.block_on(play(&mut console, script.as_bytes(), &mut printed, &mut errors))?;
    if !errors.is_empty() {
        anyhow::bail!("the script has unreadable lines:\n{}", String::from_utf8_lossy(&errors));
    }
    Ok((String::from_utf8(printed)?, console.snapshot()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_lines_are_read() {
        assert_eq!(
            read_line("alice: !new thaum"),
            Ok(ScriptLine::Say {
                player: "alice".into(),
                text: "!new thaum".into(),
                private: false,
                message_id: None
            })
        );
        assert_eq!(
            read_line("bob (dm): !cast surge fire"),
            Ok(ScriptLine::Say {
                player: "bob".into(),
                text: "!cast surge fire".into(),
                private: true,
                message_id: None
            })
        );
        assert_eq!(
            read_line("@msgid=7 bob: !join"),
            Ok(ScriptLine::Say {
                player: "bob".into(),
                text: "!join".into(),
                private: false,
                message_id: Some("7".into())
            })
        );
        assert_eq!(read_line("#clock +3d"), Ok(ScriptLine::Clock(3 * 86_400)));
        assert_eq!(read_line("# a comment"), Ok(ScriptLine::Blank));
        assert_eq!(read_line(""), Ok(ScriptLine::Blank));
        assert!(matches!(read_line("#clock 3d"), Err(ScriptError::BadClock(_))));
        assert!(matches!(read_line("no colon here"), Err(ScriptError::Unreadable(_))));
    }

    #[test]
    fn lobby_answers_in_the_console_room() {
        let (printed, _) = run_script("alice: !games\nalice: !frobnicate", 1).expect("script runs");
        let lines: Vec<&str> = printed.lines().collect();
        assert!(lines[0].starts_with("[console] alice: Games:"), "{printed}");
        assert!(lines[1].contains("Unknown command"), "{printed}");
    }

    #[test]
    fn a_line_that_is_not_utf8_is_skipped_with_a_message_and_the_session_goes_on() {
        let runtime = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
        let mut console = Console::new(1);
        let script: &[u8] = b"alice: !games\r\nbob: caf\xe9 \xff!frobnicate\nalice: !frobnicate\n";
        let (mut printed, mut errors) = (Vec::new(), Vec::new());
        runtime.block_on(play(&mut console, script, &mut printed, &mut errors)).expect("the session goes on");
        let (printed, errors) = (String::from_utf8_lossy(&printed), String::from_utf8_lossy(&errors));
        let lines: Vec<&str> = printed.lines().collect();
        assert_eq!(lines.len(), 2, "{printed}");
        assert!(lines[0].starts_with("[console] alice: Games:"), "{printed}");
        assert!(
            lines[1].starts_with("[console] alice:") && lines[1].contains("Unknown command"),
            "{printed}"
        );
        assert_eq!(
            errors,
            "line 2: not UTF-8 text (the bytes at column 9 are not a character); the line was skipped: \
             save the script as UTF-8\n"
        );
    }
}
