//! The grammar on its own: each kind of argument, aliases, missing / extra / bad
//! arguments (with the usage line and the configured prefix), and hostile input.

use super::*;

const ELEMENTS: Choice = Choice {
    noun: Some("element"),
    list: "the elements are fire and ice",
    words: &[&["fire", "火"], &["ice", "冰"]],
};

const BRANCHES: &[Branch] = &[
    Branch { word: "list", aliases: &[], args: &[] },
    Branch {
        word: "add",
        aliases: &[],
        args: &[Arg::new(Kind::Player(PlayerArgument::Known), "<player>").missing("the player is missing")],
    },
];

/// A small game's commands, one per kind of argument.
const COMMANDS: &[Command] = &[
    Command::new("hit", "Hits with a number of an element.")
        .aliases(&["strike", "打"])
        .second_word("hard")
        .args(
            &[
                Arg::new(Kind::Number, "<n>").what("count").missing("the count is missing"),
                Arg::new(Kind::Choice(&ELEMENTS), "<fire|ice>").missing("the element is missing"),
            ],
            "a count and an element",
        )
        .example("hit 2 fire"),
    Command::new("tune", "Sets, raises or lowers the tune.")
        .args(&[Arg::new(Kind::Signed, "<n|+n|-n>").what("number")], "a number")
        .who(Who::GameMaster)
        .example("tune +1"),
    Command::new("give", "Gives a word to a player.")
        .args(
            &[
                Arg::new(Kind::Player(PlayerArgument::New), "<player>").missing("the player is missing"),
                Arg::new(Kind::Word, "[word]").optional(),
            ],
            "a player and maybe a word",
        )
        .example("give bob hello"),
    Command::new("say", "Says the rest.").args(&[Arg::new(Kind::Rest, "<words…>")], "some words"),
    Command::new("crew", "Lists or adds crew.")
        .args(
            &[Arg::new(Kind::Branch(BRANCHES), "[list | add <player>]").optional()],
            "`add <player>` or `list`",
        )
        .query(Query::Unless(&["list"]))
        .example("crew add bob"),
    Command::new("look", "Looks.").query(Query::Yes).example("look"),
    Command::new("open", "Opens a thing.").args(&[Arg::new(Kind::Word, "<thing>")], "a thing").lobby(),
];

fn read_ok(line: &str) -> Parsed {
    read(COMMANDS, line).unwrap_or_else(|e| panic!("{line}: {e}"))
}

fn refused(line: &str) -> ParseError {
    match read(COMMANDS, line) {
        Err(ReadError::Bad(error)) => error,
        other => panic!("{line}: {other:?}"),
    }
}

#[test]
fn each_kind_of_argument_is_read_typed() {
    let hit = read_ok("hit 3 ice");
    assert_eq!((hit.name(), hit.number(0), hit.choice(1)), ("hit", Some(3), Some(1)));
    assert_eq!(read_ok("tune -2").signed(0), Some(Adjustment::Take(2)));
    assert_eq!(read_ok("tune +2").signed(0), Some(Adjustment::Add(2)));
    assert_eq!(read_ok("tune 7").signed(0), Some(Adjustment::Set(7)));
    let give = read_ok("give Carol hi");
    assert_eq!(give.player(0), Some(&PlayerId::new("Carol")));
    assert_eq!(give.word(1), Some("hi"));
    assert_eq!(read_ok("give carol").value(1), Some(&Value::Absent));
    assert_eq!(read_ok("say it  to   all").rest(0), ["it", "to", "all"]);
    let crew = read_ok("crew add dave");
    assert_eq!((crew.choice(0), crew.player(1)), (Some(1), Some(&PlayerId::new("dave"))));
}

#[test]
fn names_aliases_second_words_and_case_are_forgiven() {
    for line in ["hit 2 fire", "HIT 2 FIRE", "strike 2 fire", "打 2 火", "hit hard 2 fire", "Hit HARD 2 Fire"]
    {
        let parsed = read_ok(line);
        assert_eq!((parsed.name(), parsed.number(0), parsed.choice(1)), ("hit", Some(2), Some(0)), "{line}");
    }
    assert_eq!(read(COMMANDS, "hti 2 fire"), Err(ReadError::Unknown("hti".into())));
    assert_eq!(read(COMMANDS, ""), Err(ReadError::Unknown(String::new())));
}

#[test]
fn queries_are_declared() {
    assert!(read_ok("look").is_query());
    assert!(!read_ok("hit 1 fire").is_query());
    assert!(read_ok("crew").is_query() && read_ok("crew LIST").is_query());
    assert!(!read_ok("crew add bob").is_query());
}

#[test]
fn missing_arguments_give_the_usage_line_with_the_prefix() {
    assert_eq!(
        refused("hit").message("?", EXAMPLE_PLAYER),
        "`?hit` needs a count and an element: type `?hit <n> <fire|ice>`, e.g. `?hit 2 fire`."
    );
    assert_eq!(
        refused("hit 2").message("sb:", EXAMPLE_PLAYER),
        "`sb:hit` needs a count and an element (the element is missing): type `sb:hit <n> <fire|ice>`, e.g. `sb:hit 2 fire`."
    );
    assert_eq!(
        refused("crew add").to_string(),
        "`!crew` needs `add <player>` or `list` (the player is missing): type `!crew [list | add <player>]`, e.g. `!crew add bob`."
    );
    // Lobby wording, and a command without an example.
    assert_eq!(refused("open").message("?", EXAMPLE_PLAYER), "`?open` needs a thing: type `?open <thing>`.");
}

#[test]
fn extra_words_are_refused_by_name() {
    assert_eq!(
        refused("look at me").to_string(),
        "`!look` takes nothing after it, but `at me` is left over: type just `!look`."
    );
    assert_eq!(
        refused("open door now").message("?", "x"),
        "`?open` does not take `now`: type `?open <thing>`."
    );
    assert_eq!(refused("crew list bob").problem, Problem::Extra("bob".into()));
}

#[test]
fn bad_arguments_say_what_was_wrong() {
    assert_eq!(
        refused("hit -1 fire").to_string(),
        "`!hit`: the count `-1` is negative; amounts are 0 or more: type `!hit <n> <fire|ice>`, e.g. `!hit 2 fire`."
    );
    assert!(refused("hit 99999999999 fire").to_string().contains("too large (at most 1000000000)"));
    assert!(refused("tune ++2").to_string().contains("the number `++2` is not a whole number"));
    assert!(refused("tune -99999999999").to_string().contains("`-99999999999` is too large"));
    assert_eq!(
        refused("hit 1 fier").to_string(),
        "`!hit`: `fier` is not a element (did you mean `fire`?); the elements are fire and ice: type `!hit <n> <fire|ice>`, e.g. `!hit 2 fire`."
    );
    assert_eq!(refused("crew demote bob").problem, Problem::Expected("demote".into()));
}

#[test]
fn the_example_names_someone_else_when_asked() {
    assert_eq!(
        refused("give").message("!", "carol"),
        "`!give` needs a player and maybe a word: type `!give <player> [word]`, e.g. `!give carol hello`."
    );
    let rendered = refused("give").render("?", Some("carol"));
    assert!(rendered.segments().iter().any(|s| matches!(s, crate::text::Segment::Text { text, style: crate::text::Style::Code } if text == "?give carol hello")));
}

#[test]
fn hostile_input_is_read_or_refused_without_panicking() {
    // A very long line: read in one pass, the extra words named once.
    let long = format!("look {}", "x ".repeat(100_000));
    assert!(matches!(refused(&long).problem, Problem::Extra(extra) if extra.len() == 199_999));
    let huge_number = format!("hit {} fire", "9".repeat(10_000));
    assert!(matches!(
        refused(&huge_number).problem,
        Problem::BadNumber { error: AmountError::TooLarge { .. }, .. }
    ));
    // Control characters stay inside the word they were typed in.
    assert_eq!(read_ok("give bo\u{7}b").player(0), Some(&PlayerId::new("bo\u{7}b")));
    assert!(matches!(refused("hit 1\u{0} fire").problem, Problem::BadNumber { .. }));
    // Full-width digits are digits and full-width letters the command (issue 19: see
    // `full_width_input_reads_as_ascii`); an ideographic space separates words; other
    // digits (Arabic-Indic, superscript) are not digits.
    assert_eq!(read_ok("hit ３ fire").number(0), Some(3));
    assert_eq!(read_ok("hit\u{3000}3\u{3000}ice").number(0), Some(3));
    assert!(matches!(refused("hit \u{663} fire").problem, Problem::BadNumber { .. }));
    assert!(matches!(refused("hit \u{b3} fire").problem, Problem::BadNumber { .. }));
    // Odd Unicode in a command word is just an unknown command.
    assert_eq!(read(COMMANDS, "ｈｉｔ 1 fire").map(|p| p.name()), Ok("hit"));
    assert!(matches!(read(COMMANDS, "\u{202e}hit 1 fire"), Err(ReadError::Unknown(_))));
    assert_eq!(
        read(COMMANDS, "ｈｉｔ\u{200b} 1 fire").map(|p| p.name()),
        Err(ReadError::Unknown("hit\u{200b}".into()))
    );
    // A backtick typed in a word is echoed as typed, inside the refusal.
    assert!(refused("hit `x fire").to_string().starts_with("`!hit`: the count ``x` is not a whole number"));
}

#[test]
fn a_player_argument_that_is_a_game_word_is_still_a_player_and_game_words_stay_words() {
    // `fire` named as a player stays a player argument; `fire` as an element stays an element.
    let give = read_ok("give fire ice");
    assert_eq!((give.player(0), give.word(1)), (Some(&PlayerId::new("fire")), Some("ice")));
    let mut hit = read_ok("hit 1 fire");
    assert_eq!(hit.players_mut().count(), 0, "no word of `hit` is a player's");
    assert_eq!(hit.text(), "hit 1 fire");
    // Resolving a player rewrites only that argument in the journal text.
    let mut give = read_ok("Give fire fire");
    for (kind, id) in give.players_mut() {
        assert_eq!(kind, PlayerArgument::New);
        *id = PlayerId::new("libera:fire");
    }
    assert_eq!(give.text(), "Give libera:fire fire");
    assert_eq!(
        read(COMMANDS, &give.text()).map(|p| p.player(0).cloned()),
        Ok(Some(PlayerId::new("libera:fire")))
    );
}

#[test]
fn one_lookup_holds_several_lists() {
    let mut grammar = Grammar::new();
    grammar.add("lobby", &COMMANDS[6..]);
    grammar.add("game", &COMMANDS[..6]);
    grammar.add("other", &COMMANDS[5..6]);
    assert_eq!(grammar.find("OPEN").len(), 1);
    assert_eq!(grammar.find("look").iter().map(|(o, _)| *o).collect::<Vec<_>>(), ["game", "other"]);
    assert_eq!(grammar.find_in("game", "strike").map(|c| c.name), Some("hit"));
    assert!(grammar.find_in("lobby", "hit").is_none());
    assert_eq!(grammar.commands("other").count(), 1);
    // An owner's lists, added apart, are its commands in the order added.
    grammar.add("other", &COMMANDS[..1]);
    let other: Vec<&str> = grammar.commands("other").map(|c| c.name).collect();
    assert_eq!(other, [COMMANDS[5].name, COMMANDS[0].name]);
    assert!(grammar.words(|o| o == "game").any(|w| w == "打"));
}

/// Issue 19: full-width forms read where their ASCII forms do — the command word, numbers
/// with signs, fixed words, branches, plain words — and any Unicode space separates.
#[test]
fn full_width_input_reads_as_ascii() {
    let hit = read_ok("ＨＩＴ　２\u{3000}ｆｉｒｅ");
    assert_eq!((hit.name(), hit.number(0), hit.choice(1)), ("hit", Some(2), Some(0)));
    let chinese = read_ok("打 １２ 火");
    assert_eq!((chinese.name(), chinese.number(0)), ("hit", Some(12)));
    assert_eq!(read_ok("tune ＋３").signed(0), read_ok("tune +3").signed(0));
    assert_eq!(read_ok("tune －３").signed(0), read_ok("tune -3").signed(0));
    assert_eq!(read_ok("crew ａｄｄ bob").choice(0), Some(1));
    assert_eq!(read_ok("open\u{2003}ｔｈａｕｍ").word(0), Some("thaum"));
    // Each of hit's arguments counted: no stray words from the wide space.
    assert_eq!(read_ok("hit\u{3000}\u{3000}1\u{00A0}ice").values().count(), 2);
}

/// A player's name is never narrowed: `ａｌｉｃｅ` reaches the daemon as typed, so it cannot
/// be taken for the ASCII `alice` (the daemon's resolution and `readable` judge it).
#[test]
fn a_player_is_named_exactly_as_typed() {
    let give = read_ok("ｇｉｖｅ ａｌｉｃｅ ｈｉ");
    assert_eq!(give.player(0).map(PlayerId::as_str), Some("ａｌｉｃｅ"));
    assert_eq!(give.word(1), Some("hi"));
    assert_eq!(read_ok("crew add ｂｏｂ").player(1).map(PlayerId::as_str), Some("ｂｏｂ"));
}

/// Every command is called by its Chinese name where it has one.
#[test]
fn a_command_has_a_name_in_each_language() {
    let hit = &COMMANDS[0];
    assert_eq!(hit.name_in(Language::En), "hit");
    assert_eq!(hit.name_in(Language::ZhCn), "打");
    assert_eq!(COMMANDS[1].name_in(Language::ZhCn), "tune", "no Chinese name: its own");
    assert!(hit.is_called("打") && hit.is_called("ＳＴＲＩＫＥ"));
}
