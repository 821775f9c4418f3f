//! `spellbridge console`: plays through the real router and games over stdin/stdout,
//! with no network (CONTRACT.md).
//!
//! Each input line is `name: text` (said in the console room), `name (dm): text` (said
//! privately to the bot), or `#clock +3d` (the virtual clock moves and due timers fire).
//! Every message the bot sends is printed as `[room] text` or `[dm:name] text`. The
//! messages travel through the in-memory [`GameTransport`], as they would through IRC or
//! Matrix; the clock moves only with `#clock`, so a script replays the same way every time.

use std::io::{BufRead, Write};

use anyhow::Context as _;
use serde_json::Value;
use spellbridge_adapters::memory::MemoryTransport;
use spellbridge_core::time::parse_duration;
use spellbridge_core::{Destination, GameTransport, Inbound, NetworkId, PlayerId, Registry, RoomId, Timestamp};

use crate::router::{Outbound, Router, RouterOptions};

/// The console's one room.
pub const CONSOLE_ROOM: &str = "console";
/// The console's network name.
pub const CONSOLE_NETWORK: &str = "console";

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
    let (speaker, text) = trimmed.split_once(':').ok_or_else(|| ScriptError::Unreadable(trimmed.to_owned()))?;
    let speaker = speaker.trim();
    let (player, private) = match speaker.strip_suffix("(dm)") {
        Some(name) => (name.trim(), true),
        None => (speaker, false),
    };
    if player.is_empty() || player.contains(char::is_whitespace) {
        return Err(ScriptError::Unreadable(trimmed.to_owned()));
    }
    Ok(ScriptLine::Say { player: player.to_owned(), text: text.trim().to_owned(), private })
}

/// A console session: a router, an in-memory transport and a virtual clock.
pub struct Console {
    router: Router,
    transport: MemoryTransport,
    now: Timestamp,
    next_message: u64,
}

impl Console {
    /// A console whose random draws all derive from `seed`.
    pub fn new(seed: u64) -> Self {
        let options = RouterOptions { master_seed: seed, ..RouterOptions::default() };
        Self {
            router: Router::new(Registry::standard(), options),
            transport: MemoryTransport::new(NetworkId::new(CONSOLE_NETWORK)),
            now: Timestamp::CONSOLE_EPOCH,
            next_message: 0,
        }
    }

    /// Plays one script line; returns the printed lines.
    pub async fn feed(&mut self, line: &str) -> Result<Vec<String>, ScriptError> {
        let outbound = match read_line(line)? {
            ScriptLine::Blank => return Ok(Vec::new()),
            ScriptLine::Clock(seconds) => {
                self.now = self.now.plus(seconds);
                self.router.tick(self.now)
            }
            ScriptLine::Say { player, text, private } => {
                self.next_message = self.next_message.saturating_add(1);
                let room = if private { format!("dm:{player}") } else { CONSOLE_ROOM.to_owned() };
                self.transport.inject(Inbound {
                    network: NetworkId::new(CONSOLE_NETWORK),
                    room: RoomId::new(room),
                    sender: PlayerId::new(player.clone()),
                    display_name: player,
                    text,
                    private,
                    message_id: Some(self.next_message.to_string()),
                });
                match self.transport.recv().await {
                    Some(inbound) => self.router.handle(&inbound, self.now),
                    None => Vec::new(),
                }
            }
        };
        Ok(self.send(outbound).await)
    }

    /// Every table's state (CONTRACT.md `--state-json`).
    pub fn snapshot(&self) -> Value {
        self.router.snapshot()
    }

    async fn send(&self, outbound: Vec<Outbound>) -> Vec<String> {
        for message in &outbound {
            // The in-memory transport cannot fail to send.
            let _ = self.transport.send(&message.to, &message.text).await;
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

/// Plays a whole script from `input`, printing to `output`; script errors go to `errors`.
pub async fn play(
    console: &mut Console,
    input: impl BufRead,
    mut output: impl Write,
    mut errors: impl Write,
) -> anyhow::Result<()> {
    for (number, line) in input.lines().enumerate() {
        let line = line.context("reading the console input")?;
        match console.feed(&line).await {
            Ok(printed) => {
                for text in printed {
                    writeln!(output, "{text}")?;
                }
            }
            Err(error) => writeln!(errors, "line {}: {error}", number + 1)?,
        }
        output.flush()?;
    }
    Ok(())
}

/// Plays a script held in memory and returns what was printed and the final state; an
/// unreadable line is an error. Scenario tests use this; it runs its own runtime.
pub fn run_script(script: &str, seed: u64) -> anyhow::Result<(String, Value)> {
    let runtime = tokio::runtime::Builder::new_current_thread().build()?;
    let mut console = Console::new(seed);
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
            Ok(ScriptLine::Say { player: "alice".into(), text: "!new thaum".into(), private: false })
        );
        assert_eq!(
            read_line("bob (dm): !cast surge fire"),
            Ok(ScriptLine::Say { player: "bob".into(), text: "!cast surge fire".into(), private: true })
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
}
