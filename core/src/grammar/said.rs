//! The grammar's words in each language: the sentences of a refusal
//! (`locales/*/grammar.ftl`) and, for Chinese, the declarations' own phrases — what a
//! command needs, the clause said when an argument is missing, the usage line's
//! arguments, the examples — each looked up by its English text in [`PHRASES`].
//!
//! English is the declarations' text as it is (so an English refusal is byte for byte
//! what the declaration says); another language takes the catalogue's phrase (a shipped
//! game may bring its own, [`crate::games::Shipped::PHRASES`]), or the
//! English one where a game kept outside the core declared words no catalogue has.

use super::{Command, EXAMPLE_PLAYER, Kind};
use crate::language::Language;
use crate::locale::{self, Args};

/// Each declared phrase of the standard games' and the lobby's commands, with the
/// catalogue message that says it (`grammar.ftl`; the English message is the phrase
/// itself, which `every_phrase_is_the_declarations_in_english` checks).
pub const PHRASES: &[(&str, &str)] = &[
    // What a command needs (`Command::args`).
    ("nothing after it", "grammar-needs-nothing"),
    ("at least one token", "grammar-needs-tokens"),
    ("a Mana amount and a Thaum", "grammar-needs-mana-thaum"),
    ("an amount and a Thaum", "grammar-needs-amount-thaum"),
    ("a Mana amount and two different Thaums", "grammar-needs-mana-two-thaums"),
    ("a Mana amount and a defending player (you may name yourself)", "grammar-needs-mana-defender"),
    ("a Mana amount and another player", "grammar-needs-mana-player"),
    ("at most one player", "grammar-needs-at-most-one-player"),
    ("the word `next`", "grammar-needs-next"),
    ("a number: `n` sets it, `+n` adds, `-n` takes away", "grammar-needs-adjustment"),
    ("a player and a number: `n` sets, `+n` grants, `-n` revokes", "grammar-needs-player-adjustment"),
    ("one player", "grammar-needs-one-player"),
    ("`add <player>`, `remove <player>` or `list`", "grammar-needs-gm"),
    ("at most a command", "grammar-needs-at-most-command"),
    ("a game", "grammar-needs-game"),
    ("the player you challenge", "grammar-needs-challenged"),
    ("at most a wizard", "grammar-needs-at-most-wizard"),
    ("at most a code", "grammar-needs-at-most-code"),
    ("at most a player", "grammar-needs-at-most-player"),
    ("the player", "grammar-needs-player"),
    ("at most a game", "grammar-needs-at-most-game"),
    ("at most a language", "grammar-needs-at-most-language"),
    ("at most a rule id", "grammar-needs-at-most-rule"),
    // The clause said when one argument is missing after others (`Arg::missing`).
    ("the Mana amount is missing", "grammar-missing-mana"),
    ("the player is missing", "grammar-missing-player"),
    ("the number is missing", "grammar-missing-number"),
    ("the Thaum is missing", "grammar-missing-thaum"),
    ("the amount is missing", "grammar-missing-amount"),
    ("both Thaums are missing", "grammar-missing-both-thaums"),
    ("the second Thaum is missing", "grammar-missing-second-thaum"),
    // What a bad number is called (`Arg::what`).
    ("Mana amount", "grammar-what-mana"),
    ("amount", "grammar-what-amount"),
    ("number", "grammar-what-number"),
    // A choice's noun and list (`Choice`).
    ("Thaum", "grammar-noun-thaum"),
    ("the Thaums are fire, water, earth and air", "grammar-list-thaums"),
    // The usage line's arguments (`Arg::new`'s `shown`).
    ("<token> [<token> …]", "grammar-shown-tokens"),
    ("<mana>", "grammar-shown-mana"),
    ("<player>", "grammar-shown-player"),
    ("<n|+n|-n>", "grammar-shown-adjustment"),
    ("<fire|water|earth|air>", "grammar-shown-thaums"),
    ("<amount>", "grammar-shown-amount"),
    ("<thaum>", "grammar-shown-thaum"),
    ("<other thaum>", "grammar-shown-other-thaum"),
    ("[player|table]", "grammar-shown-player-or-table"),
    ("next", "grammar-shown-next"),
    ("[list | add <player> | remove <player>]", "grammar-shown-gm"),
    ("[command]", "grammar-shown-command"),
    ("<game>", "grammar-shown-game"),
    ("[wizard]", "grammar-shown-wizard"),
    ("[code]", "grammar-shown-code"),
    ("[player]", "grammar-shown-optional-player"),
    ("[game]", "grammar-shown-at-most-game"),
    ("[en|zh]", "grammar-shown-language"),
    ("[id]", "grammar-shown-rule"),
    // Examples, without the prefix (`Command::example`).
    ("cast surge fire wind end", "grammar-example-cast"),
    ("status", "grammar-example-status"),
    ("concede", "grammar-example-concede"),
    ("stop", "grammar-example-stop"),
    ("join", "grammar-example-join"),
    ("gather 2 fire", "grammar-example-gather"),
    ("blood 3 water", "grammar-example-blood"),
    ("alchemy 1 fire air", "grammar-example-alchemy"),
    ("bend 1 bob", "grammar-example-bend"),
    ("summon 0 bob", "grammar-example-summon"),
    ("tornado 2 bob", "grammar-example-tornado"),
    ("status bob", "grammar-example-status-player"),
    ("phase next", "grammar-example-phase"),
    ("instability +1", "grammar-example-instability"),
    ("coins bob +5", "grammar-example-coins"),
    ("add bob", "grammar-example-add"),
    ("gm add bob", "grammar-example-gm"),
];

/// `english`, a phrase of a declaration, in `language`.
pub fn phrase(language: Language, english: &'static str) -> String {
    if language == Language::En || english.is_empty() {
        return english.to_owned();
    }
    match phrase_id(english) {
        Some(id) => locale::text(language, id, &Args::new()),
        None => english.to_owned(),
    }
}

/// The catalogue message that says `english`: one of [`PHRASES`], or a shipped game's own
/// ([`crate::games::PHRASES`]).
fn phrase_id(english: &str) -> Option<&'static str> {
    PHRASES
        .iter()
        .chain(crate::games::PHRASES.iter().copied().flatten())
        .find(|(phrase, _)| *phrase == english)
        .map(|(_, id)| *id)
}

/// The message `id` of `grammar.ftl` in `language`, as plain text (code in backticks).
pub(super) fn said(language: Language, id: &str, args: Args) -> String {
    locale::text(language, id, &args)
}

/// Every phrase of `commands`' declarations that [`PHRASES`] lacks (a game of the
/// core or the lobby must have none: its refusals would be half English in Chinese).
pub fn untranslated(commands: &'static [Command]) -> Vec<&'static str> {
    let mut phrases: Vec<&'static str> = Vec::new();
    for command in commands {
        phrases.extend([command.needs, command.example]);
        args_phrases(command.args, &mut phrases);
    }
    phrases.retain(|p| !p.is_empty() && phrase_id(p).is_none());
    phrases.sort_unstable();
    phrases.dedup();
    phrases
}

fn args_phrases(args: &'static [super::Arg], out: &mut Vec<&'static str>) {
    for arg in args {
        out.extend([arg.shown, arg.what, arg.missing]);
        match arg.kind {
            Kind::Choice(choice) => {
                out.extend(choice.noun);
                out.push(choice.list);
            }
            Kind::Branch(branches) => {
                for branch in branches {
                    args_phrases(branch.args, out);
                }
            }
            _ => {}
        }
    }
}

impl Command {
    /// The usage line in `language`, with `prefix`: the command's name in that language
    /// and its arguments as that language shows them (`!聚能 <法力> <火|水|土|风>`).
    pub fn usage_line_in(&self, prefix: &str, language: Language) -> String {
        if language == Language::En {
            return self.usage_line(prefix);
        }
        let usage = self.usage_in(language);
        let name = self.name_in(language);
        if usage.is_empty() { format!("{prefix}{name}") } else { format!("{prefix}{name} {usage}") }
    }

    /// The arguments as the usage line shows them in `language` (`<法力> <火|水|土|风>`).
    pub fn usage_in(&self, language: Language) -> String {
        let usage: Vec<String> =
            self.args.iter().filter(|a| !a.shown.is_empty()).map(|a| phrase(language, a.shown)).collect();
        usage.join(" ")
    }

    /// The example in `language`, with `prefix`, naming `player` instead of
    /// [`EXAMPLE_PLAYER`].
    pub fn example_line_in(&self, prefix: &str, player: &str, language: Language) -> Option<String> {
        if self.example.is_empty() {
            return None;
        }
        let example = phrase(language, self.example);
        let words: Vec<&str> =
            example.split(' ').map(|w| if w == EXAMPLE_PLAYER { player } else { w }).collect();
        Some(format!("{prefix}{}", words.join(" ")))
    }

    /// What to type, in `language`: "type `!gather <mana> <thaum>`, e.g. `!gather 2
    /// fire`." (or "type just `!join`.").
    pub fn usage_hint_in(&self, prefix: &str, player: &str, language: Language) -> String {
        let typed = self.usage_line_in(prefix, language);
        let args = Args::new().text("usage", typed.clone());
        match self.example_line_in(prefix, player, language) {
            Some(example) if example == typed => said(language, "grammar-type-just", args),
            Some(example) => said(language, "grammar-type-example", args.text("example", example)),
            None => said(language, "grammar-type", args),
        }
    }
}
