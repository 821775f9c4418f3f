//! Rock-paper-scissors with hidden throws: a third game kept outside the core, to prove
//! that a game is added with one `Registry::register` and no change in the daemon.
//!
//! `!new rps` opens a table, a second player `!join`s, and each sends `!throw <rock,
//! paper or scissors>` to the bot privately: nobody sees a throw until both are in, then
//! both are revealed together. Rock blunts scissors, scissors cut paper, paper wraps
//! rock; a draw is thrown again. A throw said in the room is refused without echoing
//! it. Options (`[games.rps]`): `best_of`, the wins needed being its majority.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use spellbridge_core::grammar::{Arg, Kind, Query};
use spellbridge_core::options::GameOptions;
use spellbridge_core::{
    Action, Command, Dice, Event, GamePlugin, PlayerId, Refusal, RichText, Table, TableSetup, Timestamp,
};

/// The game's commands, in the order help lists them. The throw is read by the table, not
/// the grammar, so a throw said in the room is refused before its word is looked at (and
/// never echoed in a usage line).
const COMMANDS: &[Command] = &[
    Command::new("join", "Takes the second seat.").example("join"),
    Command::new("throw", "Throws, privately: both throws are revealed together.")
        .args(&[Arg::new(Kind::Rest, "<rock|paper|scissors>").optional()], "your throw")
        .example("throw rock"),
    Command::new("status", "Shows the score.").query(Query::Yes).example("status"),
];

/// What happened, as the table tells it: plain text, which the default `render` says to
/// every destination as it is.
fn told(text: String) -> RichText {
    RichText::from(text)
}

/// A throw.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Throw {
    /// Blunts scissors.
    Rock,
    /// Wraps rock.
    Paper,
    /// Cut paper.
    Scissors,
}

impl Throw {
    fn parse(word: &str) -> Option<Throw> {
        match word.to_lowercase().as_str() {
            "rock" => Some(Throw::Rock),
            "paper" => Some(Throw::Paper),
            "scissors" => Some(Throw::Scissors),
            _ => None,
        }
    }

    fn beats(self, other: Throw) -> bool {
        matches!(
            (self, other),
            (Throw::Rock, Throw::Scissors) | (Throw::Scissors, Throw::Paper) | (Throw::Paper, Throw::Rock)
        )
    }

    fn word(self) -> &'static str {
        match self {
            Throw::Rock => "rock",
            Throw::Paper => "paper",
            Throw::Scissors => "scissors",
        }
    }
}

/// The game, with how many rounds a match is the best of.
#[derive(Clone, Copy, Debug)]
pub struct Rps {
    best_of: u32,
}

impl Default for Rps {
    fn default() -> Self {
        Rps { best_of: 1 }
    }
}

/// `[games.rps]` as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Written {
    best_of: Option<u32>,
}

impl GamePlugin for Rps {
    fn name(&self) -> &'static str {
        "rps"
    }

    fn summary(&self) -> &'static str {
        "rock-paper-scissors with hidden throws, revealed together"
    }

    fn commands(&self) -> &'static [Command] {
        COMMANDS
    }

    fn open(&self, setup: &TableSetup) -> Result<Box<dyn Table>, Refusal> {
        let players = setup.seats.iter().map(|s| s.player.clone()).collect();
        Ok(Box::new(RpsTable { state: State { players, best_of: self.best_of, ..State::default() } }))
    }

    fn restore(&self, snapshot: &Value) -> Result<Box<dyn Table>, String> {
        let state = serde_json::from_value(snapshot.clone()).map_err(|e| e.to_string())?;
        Ok(Box::new(RpsTable { state }))
    }

    fn configure(&self, options: &GameOptions<'_>) -> Result<Option<Box<dyn GamePlugin>>, String> {
        let written: Written = options.parse()?;
        let best_of = written.best_of.unwrap_or(1);
        if best_of.is_multiple_of(2) {
            return Err(format!(
                "{} best_of = {best_of}: write an odd number, e.g. best_of = 3",
                options.section
            ));
        }
        Ok(Some(Box::new(Rps { best_of })))
    }
}

/// A table's whole state (its snapshot).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct State {
    players: Vec<PlayerId>,
    best_of: u32,
    /// This round's throws, hidden until both are in.
    throws: Vec<(PlayerId, Throw)>,
    wins: Vec<(PlayerId, u32)>,
    winner: Option<PlayerId>,
}

/// A running match.
#[derive(Clone, Debug)]
struct RpsTable {
    state: State,
}

impl RpsTable {
    fn wins(&self, player: &PlayerId) -> u32 {
        self.state.wins.iter().find(|(p, _)| p == player).map_or(0, |(_, n)| *n)
    }

    fn throw(&mut self, actor: &PlayerId, word: Option<&str>, private: bool) -> Result<Vec<Event>, Refusal> {
        if !private {
            return Err(Refusal::because(
                "Throw privately, so your opponent cannot see it: send `!throw` and your choice to me in a private message.",
            ));
        }
        if !self.state.players.contains(actor) {
            return Err(Refusal::because("You are not playing at this table; `!join` it in its room first."));
        }
        if self.state.players.len() < 2 {
            return Err(Refusal::because("Wait for an opponent to `!join` before you throw."));
        }
        let Some(throw) = word.and_then(Throw::parse) else {
            return Err(Refusal::because("Throw one of rock, paper or scissors: `!throw rock`."));
        };
        if self.state.throws.iter().any(|(p, _)| p == actor) {
            return Err(Refusal::because("You have thrown this round already; wait for your opponent."));
        }
        self.state.throws.push((actor.clone(), throw));
        // Revealed in seat order, whoever threw first.
        let seat = |p: &PlayerId| self.state.players.iter().position(|s| s == p);
        let mut throws = std::mem::take(&mut self.state.throws);
        throws.sort_by_key(|(p, _)| seat(p));
        self.state.throws = throws;
        let [(a, ta), (b, tb)] = match self.state.throws.as_slice() {
            [one, two] => [one.clone(), two.clone()],
            _ => {
                let text = format!("You throw {}; waiting for your opponent.", throw.word());
                return Ok(vec![Event::player(actor, told(text))]);
            }
        };
        self.state.throws.clear();
        let mut out = vec![Event::player(actor, told(format!("You throw {}.", throw.word())))];
        let revealed = format!("{a} throws {}, {b} throws {}", ta.word(), tb.word());
        let round_winner = if ta.beats(tb) {
            Some(a)
        } else if tb.beats(ta) {
            Some(b)
        } else {
            None
        };
        let Some(winner) = round_winner else {
            out.push(Event::table(told(format!("{revealed}: a draw. Throw again."))));
            return Ok(out);
        };
        let wins = self.wins(&winner) + 1;
        self.state.wins.retain(|(p, _)| p != &winner);
        self.state.wins.push((winner.clone(), wins));
        if wins > self.state.best_of / 2 {
            out.push(Event::table(told(format!("{revealed}: {winner} wins the match!"))));
            self.state.winner = Some(winner);
        } else {
            out.push(Event::table(told(format!("{revealed}: {winner} wins the round ({wins})."))));
        }
        Ok(out)
    }
}

impl Table for RpsTable {
    fn game(&self) -> &'static str {
        "rps"
    }

    fn commands(&self) -> &'static [Command] {
        COMMANDS
    }

    fn opening(&self) -> Vec<Event> {
        let opener = self.state.players.first().map(PlayerId::as_str).unwrap_or_default();
        vec![Event::table(told(format!(
            "{opener} opens rock-paper-scissors (best of {}); someone `!join`s, then both `!throw` privately.",
            self.state.best_of
        )))]
    }

    fn act(&mut self, action: &Action<'_>, _dice: &mut Dice) -> Result<Vec<Event>, Refusal> {
        match action.command.name() {
            "join" if self.state.players.contains(action.actor) => {
                Err(Refusal::because("You are at this table already."))
            }
            "join" if self.state.players.len() >= 2 => Err(Refusal::because("Both seats are taken.")),
            "join" => {
                self.state.players.push(action.actor.clone());
                Ok(vec![Event::table(told(format!(
                    "{} joins. Both players: send `!throw <rock|paper|scissors>` to me privately.",
                    action.actor
                )))])
            }
            "throw" => {
                let word = match action.command.rest(0) {
                    [one] => Some(one.as_str()),
                    _ => None,
                };
                self.throw(action.actor, word, action.private)
            }
            "status" => {
                let score: Vec<String> =
                    self.state.players.iter().map(|p| format!("{p} {}", self.wins(p))).collect();
                let waiting = self.state.throws.len();
                Ok(vec![Event::table(told(format!("Score: {}; {waiting} of 2 thrown.", score.join(", "))))])
            }
            other => Err(Refusal::UnknownCommand(other.to_owned())),
        }
    }

    fn next_timer(&self) -> Option<Timestamp> {
        None
    }

    fn fire_timer(&mut self, _at: Timestamp, _dice: &mut Dice) -> Vec<Event> {
        Vec::new()
    }

    fn is_finished(&self) -> bool {
        self.state.winner.is_some()
    }

    fn players(&self) -> Vec<PlayerId> {
        self.state.players.clone()
    }

    fn snapshot(&self) -> Value {
        serde_json::to_value(&self.state).unwrap_or(Value::Null)
    }

    fn boxed_clone(&self) -> Box<dyn Table> {
        Box::new(self.clone())
    }
}
