//! A component's example transcript, which `game check` plays: a text file beside the
//! component with the same name and `.transcript` for `.wasm` (`nim.wasm`,
//! `nim.transcript`). The game's author writes it; the build copies it beside the
//! component. Its lines:
//!
//! ```text
//! # a comment; blank lines are skipped
//! open alice                      the first line: who opens the table (more names: more seats)
//! alice !take 1 a -> refused      a step: who types what, and what must come of it
//! bob !join -> ok nim-joined
//! alice !take 9 a -> refused at most 3
//! bob !take 3 b -> ok
//! winners bob                     the last line, if any: who won when it ended
//! ```
//!
//! After `->`: `ok`, then the ids of the news the step must tell, in order (none: any
//! news); or `refused`, then words its English refusal must contain (none: any refusal).
//! Each step runs as `game check` runs every call, with the host's limits.

use std::fmt::Write as _;

use spellbridge_core::dice::Dice;
use spellbridge_core::grammar::parse;
use spellbridge_core::plugin::{Action, GamePlugin, Refusal, Role, Seat, TableSetup};
use spellbridge_core::{Language, PlayerId, RoomId, Timestamp};

use crate::plugin::WasmGame;

/// What a step must come to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expect {
    /// Played, telling these news ids in order (empty: any).
    Ok(Vec<String>),
    /// Refused, with these words in its English refusal (empty: any).
    Refused(String),
}

/// One step: a player types a command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// Its line in the file (from 1).
    pub line: usize,
    /// Who types it.
    pub player: String,
    /// What they type, without the `!`.
    pub typed: String,
    /// What must come of it.
    pub expect: Expect,
}

/// A transcript read from its file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transcript {
    /// Who opens the table, and any other seats.
    pub seats: Vec<String>,
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// Who must have won at the end, if the transcript says.
    pub winners: Option<Vec<String>>,
}

/// The form of a step, for error messages.
const STEP: &str = "`PLAYER !COMMAND ARGS -> ok [NEWS-ID…]` or `PLAYER !COMMAND ARGS -> refused [WORDS]`";

/// Reads a transcript; an error names the line and says what to write instead.
pub fn read(text: &str) -> Result<Transcript, String> {
    let mut seats = None;
    let mut steps = Vec::new();
    let mut winners = None;
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let wrong = |what: &str| format!("line {number}: {what}");
        if winners.is_some() {
            return Err(wrong("nothing may follow `winners`; put it last"));
        }
        let mut words = line.split_whitespace();
        let first = words.next().unwrap_or_default();
        if seats.is_none() {
            let names: Vec<String> = words.map(str::to_owned).collect();
            if first != "open" || names.is_empty() {
                return Err(wrong("the first line must be `open PLAYER` (who opens the table)"));
            }
            seats = Some(names);
            continue;
        }
        if first == "winners" {
            winners = Some(words.map(str::to_owned).collect());
            continue;
        }
        let Some((typed, expected)) = line.split_once("->") else {
            return Err(wrong(&format!("a step is {STEP}; this line has no `->`")));
        };
        let Some(typed) = typed.trim().strip_prefix(first).map(str::trim).and_then(|t| t.strip_prefix('!'))
        else {
            return Err(wrong(&format!("a step is {STEP}; the command must start with `!`")));
        };
        if typed.trim().is_empty() {
            return Err(wrong(&format!("a step is {STEP}; there is no command after `!`")));
        }
        let expected = expected.trim();
        let expect = if let Some(ids) = word_after(expected, "ok") {
            Expect::Ok(ids.split_whitespace().map(str::to_owned).collect())
        } else if let Some(words) = word_after(expected, "refused") {
            Expect::Refused(words.trim().to_owned())
        } else {
            return Err(wrong(&format!("after `->` write `ok` or `refused`, not `{expected}`")));
        };
        steps.push(Step { line: number, player: first.to_owned(), typed: typed.trim().to_owned(), expect });
    }
    let Some(seats) = seats else {
        return Err("the transcript is empty: its first line must be `open PLAYER`".to_owned());
    };
    Ok(Transcript { seats, steps, winners })
}

/// What follows `word` in `text`, if `text` is `word` or starts with it and a space.
fn word_after<'a>(text: &'a str, word: &str) -> Option<&'a str> {
    let rest = text.strip_prefix(word)?;
    (rest.is_empty() || rest.starts_with(char::is_whitespace)).then_some(rest)
}

/// A transcript's player, with a network as every identity has.
fn player(name: &str) -> PlayerId {
    PlayerId::new(format!("{name}@check"))
}

/// Plays `transcript` at a new table of `game`, adding a line per step to `report`; the
/// first step whose result is not the expected one is the error, named.
pub fn play(game: &WasmGame, transcript: &Transcript, report: &mut String) -> Result<(), String> {
    let setup = TableSetup {
        room: RoomId::new("#check@check"),
        seats: transcript.seats.iter().map(|name| Seat { player: player(name), choice: None }).collect(),
        now: Timestamp(1_700_000_000),
    };
    let mut table =
        game.open(&setup).map_err(|refusal| format!("opening the table was refused: {}", said(&refusal)))?;
    for (number, step) in transcript.steps.iter().enumerate() {
        let before = game.runner().usage();
        let got = act(game, table.as_mut(), step, number);
        let used = game.runner().usage();
        let shown = match &got {
            Ok(ids) if ids.is_empty() => "ok".to_owned(),
            Ok(ids) => format!("ok {}", ids.join(" ")),
            Err(refusal) => format!("refused: {refusal}"),
        };
        let _ = writeln!(
            report,
            "  {}. {} !{} -> {shown} ({} fuel in {} calls)",
            number + 1,
            step.player,
            step.typed,
            used.fuel - before.fuel,
            used.calls - before.calls
        );
        let matched = match (&step.expect, &got) {
            (Expect::Ok(want), Ok(ids)) => want.is_empty() || want == ids,
            (Expect::Refused(words), Err(refusal)) => refusal.contains(words.as_str()),
            _ => false,
        };
        if !matched {
            let want = match &step.expect {
                Expect::Ok(ids) if ids.is_empty() => "ok".to_owned(),
                Expect::Ok(ids) => format!("ok {}", ids.join(" ")),
                Expect::Refused(words) if words.is_empty() => "refused".to_owned(),
                Expect::Refused(words) => format!("refused with `{words}`"),
            };
            return Err(format!(
                "step {} (line {}) `{} !{}`: expected {want}, got {shown}",
                number + 1,
                step.line,
                step.player,
                step.typed
            ));
        }
    }
    if let Some(want) = &transcript.winners {
        let want: Vec<PlayerId> = want.iter().map(|name| player(name)).collect();
        let got: Vec<PlayerId> =
            table.ending().map(|e| e.winners().into_iter().cloned().collect()).unwrap_or_default();
        if !table.is_finished() || got != want {
            let names =
                |ids: &[PlayerId]| ids.iter().map(|p| p.as_str().to_owned()).collect::<Vec<_>>().join(" ");
            return Err(format!(
                "the transcript ends with `winners {}`, but the game {}",
                transcript.winners.as_deref().unwrap_or_default().join(" "),
                if table.is_finished() {
                    format!("was won by `{}`", names(&got))
                } else {
                    "did not end".to_owned()
                }
            ));
        }
    }
    Ok(())
}

/// Plays one step: the news ids it told, or its refusal in English.
fn act(
    game: &WasmGame,
    table: &mut dyn spellbridge_core::plugin::Table,
    step: &Step,
    number: usize,
) -> Result<Vec<String>, String> {
    let words: Vec<&str> = step.typed.split_whitespace().collect();
    let Some(command) = game.commands().iter().find(|c| c.is_called(words[0])) else {
        return Err(format!("`!{}` is not a command of this game", words[0]));
    };
    let parsed = parse(command, &words).map_err(|error| format!("does not read: {error:?}"))?;
    let actor = player(&step.player);
    let action = Action {
        actor: &actor,
        command: &parsed,
        typed: &step.typed,
        private: false,
        now: Timestamp(1_700_000_000 + i64::try_from(number).unwrap_or(0) + 1),
        role: Role::Player,
    };
    let mut dice = Dice::from_seed(u64::try_from(number).unwrap_or(0) + 1);
    let events = table.act(&action, &mut dice).map_err(|refusal| said(&refusal))?;
    // A failed call is journaled as the host's pause, but the step was not played.
    if let Some(paused) = events.iter().find_map(|event| event.get::<crate::plugin::Paused>()) {
        return Err(format!("the game failed: {}", paused.paused));
    }
    // The component's own news; the host's `Ended` (for ratings) is not one of them.
    Ok(events
        .iter()
        .filter(|event| event.get::<crate::ending::Ended>().is_none())
        .map(|event| event.record().event["id"].as_str().unwrap_or("?").to_owned())
        .collect())
}

/// A refusal in English, without the isolation marks around names.
fn said(refusal: &Refusal) -> String {
    let text = match refusal {
        Refusal::UnknownCommand(word) => format!("unknown command {word}"),
        other => other.text(Language::En).map(|t| t.plain()).unwrap_or_default(),
    };
    text.replace(['\u{2068}', '\u{2069}'], "")
}
