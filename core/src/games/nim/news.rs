//! What a Nim table tells ([`NimNews`]) and why it refuses ([`NimError`]), as data, and
//! both in words, in each language (`locales/*/nim.ftl`). Nothing in Nim is hidden, so
//! every piece of news is for the whole table.

use serde::{Deserialize, Serialize};

use super::command::Pile;
use super::state::MOST;
use crate::event::{Event, Presentation};
use crate::ids::PlayerId;
use crate::language::Language;
use crate::locale::{self, Args, Localized};
use crate::plugin::Announcement;
use crate::text::RichText;

/// One thing that happened at a Nim table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "news")]
pub enum NimNews {
    /// The table opened; `player` waits for an opponent.
    Opened {
        /// The opener.
        player: PlayerId,
        /// The piles.
        piles: [u32; 3],
    },
    /// `player` took the second seat; `first` moves first (RULES N-1).
    Joined {
        /// Who joined.
        player: PlayerId,
        /// Who moves first.
        first: PlayerId,
        /// The piles.
        piles: [u32; 3],
    },
    /// `player` took stones.
    Took {
        /// Who took.
        player: PlayerId,
        /// How many.
        amount: u32,
        /// From where.
        pile: Pile,
        /// The piles after.
        piles: [u32; 3],
        /// Who moves next (`None` when that was the last stone).
        next: Option<PlayerId>,
    },
    /// `player` took the last stone (RULES N-4).
    Won {
        /// The winner.
        player: PlayerId,
        /// The other player.
        loser: PlayerId,
    },
    /// `!status`.
    Status {
        /// Who plays.
        players: Vec<PlayerId>,
        /// The piles.
        piles: [u32; 3],
        /// Who moves next, once both seats are taken.
        next: Option<PlayerId>,
    },
    /// `player` conceded; `winner` wins (nobody, when nobody had joined yet).
    Conceded {
        /// Who gave up.
        player: PlayerId,
        /// The other player, if there was one.
        winner: Option<PlayerId>,
    },
    /// A room operator or game master stopped the game.
    Stopped {
        /// Who stopped it.
        by: PlayerId,
    },
}

/// Why a Nim table refused a command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NimError {
    /// The game is over.
    Over,
    /// `!join` by a player who is seated.
    AlreadySeated,
    /// `!join` when both seats are taken.
    SeatsTaken {
        /// Who plays.
        players: Vec<PlayerId>,
    },
    /// A move by someone not seated, while the second seat is free.
    NotSeatedYet,
    /// A move by someone not seated at a full table.
    NotSeated {
        /// Who plays.
        players: Vec<PlayerId>,
    },
    /// A take before anyone joined.
    NoOpponent,
    /// A take out of turn.
    NotYourTurn {
        /// Whose turn it is.
        player: PlayerId,
    },
    /// A take of no stones, or more than [`MOST`] (RULES N-3).
    Amount {
        /// What was asked for.
        amount: u32,
    },
    /// A take from an empty pile.
    PileEmpty {
        /// The pile.
        pile: Pile,
        /// All the piles.
        piles: [u32; 3],
    },
    /// A take of more stones than the pile has.
    PileShort {
        /// The pile.
        pile: Pile,
        /// What it has.
        left: u32,
    },
    /// `!stop` by a player (RULES N-5).
    MayNotStop,
}

/// The piles in words: "a 3 · b 5 · c 7".
fn piles(language: Language, piles: &[u32; 3]) -> RichText {
    let args = Pile::ALL.iter().zip(["a", "b", "c"]).fold(Args::new(), |args, (pile, name)| {
        args.num(name, piles[pile.index()])
    });
    locale::say(language, "nim-piles", args)
}

fn pile(language: Language, pile: Pile) -> String {
    locale::word(language, pile.message()).into_owned()
}

/// `news` in `language`.
pub fn said(language: Language, news: &NimNews) -> RichText {
    let say = |id: &str, args: Args| locale::say(language, id, args);
    match news {
        NimNews::Opened { player, piles: p } => {
            say("nim-opened", Args::new().mention("player", player).rich("piles", piles(language, p)))
        }
        NimNews::Joined { player, first, piles: p } => say(
            "nim-joined",
            Args::new().mention("player", player).mention("first", first).rich("piles", piles(language, p)),
        ),
        NimNews::Took { player, amount, pile: taken, piles: p, next } => {
            let args = Args::new()
                .name("player", player)
                .num("amount", *amount)
                .text("pile", pile(language, *taken))
                .rich("piles", piles(language, p));
            match next {
                Some(next) => say("nim-took", args.mention("next", next)),
                None => say("nim-took-last", args),
            }
        }
        NimNews::Won { player, loser } => {
            say("nim-won", Args::new().mention("player", player).name("loser", loser))
        }
        NimNews::Status { players, piles: p, next } => match (players.as_slice(), next) {
            ([first, second], Some(next)) => say(
                "nim-status",
                Args::new()
                    .name("first", first)
                    .name("second", second)
                    .rich("piles", piles(language, p))
                    .name("next", next),
            ),
            ([first, ..], _) => {
                say("nim-status-waiting", Args::new().name("player", first).rich("piles", piles(language, p)))
            }
            ([], _) => say("nim-status-waiting", Args::new().text("player", "?").rich("piles", piles(language, p))),
        },
        NimNews::Conceded { player, winner: Some(winner) } => {
            say("nim-conceded", Args::new().name("player", player).mention("winner", winner))
        }
        NimNews::Conceded { player, winner: None } => say("nim-closed", Args::new().name("player", player)),
        NimNews::Stopped { by } => say("nim-stopped", Args::new().name("player", by)),
    }
}

/// What `events` say to readers shown `presentation` (every event is the table's; the
/// compact form is the full one: each is one line).
pub fn render(events: &[Event], presentation: &Presentation) -> Vec<Announcement> {
    events
        .iter()
        .filter_map(|event| {
            let news = event.get::<NimNews>()?;
            Some(Announcement::to(event.to.clone(), said(presentation.language, news)))
        })
        .collect()
}

/// Why a command was refused, in every language.
pub fn refusal(error: &NimError) -> Localized {
    Localized::new(|language| refusal_in(language, error))
}

fn refusal_in(language: Language, error: &NimError) -> RichText {
    let say = |id: &str, args: Args| locale::say(language, id, args);
    let both = |players: &[PlayerId]| match players {
        [first, second] => Args::new().name("first", first).name("second", second),
        _ => Args::new().text("first", "?").text("second", "?"),
    };
    match error {
        NimError::Over => say("nim-over", Args::new()),
        NimError::AlreadySeated => say("nim-already-seated", Args::new()),
        NimError::SeatsTaken { players } => say("nim-seats-taken", both(players)),
        NimError::NotSeatedYet => say("nim-not-seated-yet", Args::new()),
        NimError::NotSeated { players } => say("nim-not-seated", both(players)),
        NimError::NoOpponent => say("nim-no-opponent", Args::new()),
        NimError::NotYourTurn { player } => say("nim-not-your-turn", Args::new().name("player", player)),
        NimError::Amount { amount } => say("nim-amount", Args::new().num("amount", *amount).num("most", MOST)),
        NimError::PileEmpty { pile: empty, piles: p } => say(
            "nim-pile-empty",
            Args::new().text("pile", pile(language, *empty)).rich("piles", piles(language, p)),
        ),
        NimError::PileShort { pile: short, left } => {
            say("nim-pile-short", Args::new().text("pile", pile(language, *short)).num("left", *left))
        }
        NimError::MayNotStop => say("nim-may-not-stop", Args::new()),
    }
}
