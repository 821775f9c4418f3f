//! Nim's commands: declared once, in [`COMMANDS`] (the grammar the daemon reads every
//! command against, which also makes `!help`), and as this game's type, [`NimCommand`].

use serde::{Deserialize, Serialize};

use crate::grammar::{Arg, Choice, Command, Kind, Parsed, Query, Who};

/// One of the three piles (RULES N-2), named `a`, `b` and `c` (甲 乙 丙).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pile {
    /// The first pile, 3 stones at the start.
    A,
    /// The second, 5 stones.
    B,
    /// The third, 7 stones.
    C,
}

impl Pile {
    /// The piles in order.
    pub const ALL: [Pile; 3] = [Pile::A, Pile::B, Pile::C];

    /// Its place in [`Pile::ALL`] (and in a table's piles).
    pub fn index(self) -> usize {
        self as usize
    }

    /// Its catalogue word (`nim-pile-a`: `a`, `甲`).
    pub fn message(self) -> &'static str {
        match self {
            Pile::A => "nim-pile-a",
            Pile::B => "nim-pile-b",
            Pile::C => "nim-pile-c",
        }
    }
}

/// The piles as a choice of words, in [`Pile::ALL`]'s order.
pub const PILES: Choice = Choice {
    noun: Some("pile"),
    list: "the piles are a, b and c",
    words: &[&["a", "甲"], &["b", "乙"], &["c", "丙"]],
};

/// Every Nim command, declared once (arguments, help, who may use it), in the order help
/// lists them, each with its Chinese name as its first Han alias.
pub const COMMANDS: &[Command] = &[
    Command::new("join", "Takes the second seat at this Nim table; the opener moves first (RULES N-1).")
        .aliases(&["加入"])
        .example("join"),
    Command::new(
        "take",
        "On your turn: takes 1 to 3 stones from one pile, a, b or c (`!take 2 b`); whoever takes \
         the last stone wins (RULES N-3, N-4).",
    )
    .aliases(&["取", "拿"])
    .args(
        &[
            Arg::new(Kind::Number, "<amount>").what("amount").missing("the amount is missing"),
            Arg::new(Kind::Choice(&PILES), "<a|b|c>").missing("the pile is missing"),
        ],
        "an amount and a pile",
    )
    .example("take 2 b"),
    Command::new("status", "Shows the piles and whose turn it is.")
        .aliases(&["状态"])
        .args(&[Arg::new(Kind::Rest, "").optional()], "nothing after it")
        .query(Query::Yes)
        .example("status"),
    Command::new("concede", "Gives up the game: your opponent wins.")
        .aliases(&["resign", "认输"])
        .example("concede"),
    Command::new(
        "stop",
        "Room operators, game masters and bot admins: ends the game with no winner \
         (a player gives up with `!concede`).",
    )
    .aliases(&["停止", "中止"])
    .who(Who::GameMasterOrOperator)
    .example("stop"),
];

/// The declarations' phrases no shared catalogue has, with the messages of `nim.ftl`
/// that say them ([`crate::games::Shipped::PHRASES`]).
pub const PHRASES: &[(&str, &str)] = &[
    ("an amount and a pile", "nim-phrase-needs-amount-pile"),
    ("the pile is missing", "nim-phrase-missing-pile"),
    ("pile", "nim-phrase-noun-pile"),
    ("the piles are a, b and c", "nim-phrase-list-piles"),
    ("<a|b|c>", "nim-phrase-shown-piles"),
    ("take 2 b", "nim-phrase-example-take"),
];

/// The catalogue's message for a command's help (`locales/*/nim.ftl`), which says in
/// English exactly what [`COMMANDS`] declares.
pub fn help_id(command: &str) -> Option<&'static str> {
    Some(match command {
        "join" => "nim-help-join",
        "take" => "nim-help-take",
        "status" => "nim-help-status",
        "concede" => "nim-help-concede",
        "stop" => "nim-help-stop",
        _ => return None,
    })
}

/// A command at a Nim table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NimCommand {
    /// `!join`: take the second seat.
    Join,
    /// `!take <amount> <pile>`.
    Take {
        /// How many stones (any number the grammar reads; the rules judge it).
        amount: u32,
        /// From which pile.
        pile: Pile,
    },
    /// `!status`.
    Status,
    /// `!concede`.
    Concede,
    /// `!stop`.
    Stop,
}

impl NimCommand {
    /// The command the grammar read, as Nim's type; `None` when it is none of
    /// [`COMMANDS`] (or lacks what its declaration requires).
    pub fn from_parsed(parsed: &Parsed) -> Option<NimCommand> {
        Some(match parsed.name() {
            "join" => NimCommand::Join,
            "take" => NimCommand::Take {
                amount: parsed.number(0)?,
                pile: *Pile::ALL.get(parsed.choice(1)?)?,
            },
            "status" => NimCommand::Status,
            "concede" => NimCommand::Concede,
            "stop" => NimCommand::Stop,
            _ => return None,
        })
    }
}
