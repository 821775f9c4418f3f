//! The Thaum command parser: every command and alias, and every error form with the exact
//! help it gives (CONTRACT.md's command forms must keep working as written).

use spellbridge_core::GamePlugin;
use spellbridge_core::PlayerId;
use spellbridge_core::games::thaum::command::{ThaumCommand, Verb, parse, thaum_from_word};
use spellbridge_core::games::thaum::{COMMANDS, Thaum, ThaumPlugin};
use spellbridge_core::grammar::{Problem, ReadError};
use spellbridge_core::words::{Adjustment, AmountError};

/// What was wrong, as the grammar read it.
fn problem(command: &str) -> Problem {
    match parse(command) {
        Err(ReadError::Bad(error)) => error.problem,
        other => panic!("{command}: {other:?}"),
    }
}

fn p(name: &str) -> PlayerId {
    PlayerId::new(name)
}

fn message(command: &str) -> String {
    parse(command).expect_err("should not parse").to_string()
}

#[test]
fn contract_forms_parse() {
    use ThaumCommand as C;
    let cases = [
        ("join", C::Join),
        ("gather 3 fire", C::Gather { mana: 3, thaum: Thaum::Fire }),
        ("blood 2 water", C::Blood { amount: 2, thaum: Thaum::Water }),
        ("alchemy 1 earth air", C::Alchemy { mana: 1, first: Thaum::Earth, second: Thaum::Air }),
        ("bend 1 bob", C::Bend { mana: 1, defender: p("bob") }),
        ("summon 0 bob", C::Summon { mana: 0, partner: p("bob") }),
        ("tornado 4 @bob:example.org", C::Tornado { mana: 4, target: p("@bob:example.org") }),
        ("status", C::Status { player: None }),
        ("status Bob", C::Status { player: Some(p("Bob")) }),
        ("phase next", C::PhaseNext),
        ("instability 5", C::Instability(Adjustment::Set(5))),
        ("instability +2", C::Instability(Adjustment::Add(2))),
        ("instability -3", C::Instability(Adjustment::Take(3))),
        ("coins bob +5", C::Coins { player: p("bob"), change: Adjustment::Add(5) }),
        ("coins bob -5", C::Coins { player: p("bob"), change: Adjustment::Take(5) }),
        ("coins bob 7", C::Coins { player: p("bob"), change: Adjustment::Set(7) }),
        ("add carol", C::Add { player: p("carol") }),
        ("stop", C::Stop),
    ];
    for (typed, expected) in cases {
        assert_eq!(parse(typed), Ok(expected), "{typed}");
    }
}

#[test]
fn aliases_case_and_spacing_are_forgiven() {
    use ThaumCommand as C;
    let gather = C::Gather { mana: 3, thaum: Thaum::Fire };
    for typed in ["gather power 3 fire", "GatherPower 3 Fire", "  gather   3   FIRE  ", "GATHER POWER 3 火"]
    {
        assert_eq!(parse(typed), Ok(gather.clone()), "{typed}");
    }
    let blood = C::Blood { amount: 2, thaum: Thaum::Water };
    for typed in ["blood magic 2 water", "bloodmagic 2 水", "Blood Magic 2 WATER"] {
        assert_eq!(parse(typed), Ok(blood.clone()), "{typed}");
    }
    assert_eq!(parse("bending 1 bob"), Ok(C::Bend { mana: 1, defender: p("bob") }));
    assert_eq!(parse("summoning 1 bob"), Ok(C::Summon { mana: 1, partner: p("bob") }));
    assert_eq!(parse("sheet"), Ok(C::Status { player: None }));
    assert_eq!(parse("register dave"), Ok(C::Add { player: p("dave") }));
    assert_eq!(parse("PHASE NEXT"), Ok(C::PhaseNext));
    assert_eq!(parse("gather +3 air"), Ok(C::Gather { mana: 3, thaum: Thaum::Air }));
}

#[test]
fn thaum_names_in_english_and_chinese() {
    let pairs =
        [("fire", Thaum::Fire), ("WATER", Thaum::Water), ("Earth", Thaum::Earth), ("air", Thaum::Air)];
    for (word, thaum) in pairs {
        assert_eq!(thaum_from_word(word), Some(thaum));
    }
    let chinese = [("火", Thaum::Fire), ("水", Thaum::Water), ("土", Thaum::Earth), ("风", Thaum::Air)];
    for (word, thaum) in chinese {
        assert_eq!(thaum_from_word(word), Some(thaum));
    }
    assert_eq!(thaum_from_word("aether"), None);
}

#[test]
fn unknown_first_words_go_back_to_the_router() {
    assert_eq!(parse("gahter 3 fire"), Err(ReadError::Unknown("gahter".into())));
    assert_eq!(parse("CAST fire"), Err(ReadError::Unknown("cast".into())));
    assert_eq!(parse(""), Err(ReadError::Unknown(String::new())));
    assert_eq!(parse("   "), Err(ReadError::Unknown(String::new())));
}

#[test]
fn missing_arguments_show_the_usage() {
    assert_eq!(
        message("gather"),
        "`!gather` needs a Mana amount and a Thaum: type `!gather <mana> <fire|water|earth|air>`, e.g. `!gather 2 fire`."
    );
    assert_eq!(
        message("gather 2"),
        "`!gather` needs a Mana amount and a Thaum (the Thaum is missing): type \
         `!gather <mana> <fire|water|earth|air>`, e.g. `!gather 2 fire`."
    );
    assert_eq!(
        message("alchemy 1 fire"),
        "`!alchemy` needs a Mana amount and two different Thaums (the second Thaum is missing): type \
         `!alchemy <mana> <thaum> <other thaum>`, e.g. `!alchemy 1 fire air`."
    );
    assert_eq!(
        message("bend 1"),
        "`!bend` needs a Mana amount and a defending player (you may name yourself) (the player is missing): \
         type `!bend <mana> <player>`, e.g. `!bend 1 bob`."
    );
    assert_eq!(message("phase"), "`!phase` needs the word `next`: type just `!phase next`.");
    assert!(message("coins bob").contains("(the number is missing)"));
    assert!(message("alchemy 1").contains("(both Thaums are missing)"));
    assert!(message("add").starts_with("`!add` needs one player"));
    assert!(message("instability").contains("`n` sets it, `+n` adds, `-n` takes away"));
    for verb in ["summon", "tornado", "blood magic"] {
        assert!(message(verb).contains("type `!"), "{verb}");
    }
}

#[test]
fn extra_arguments_are_refused_by_name() {
    assert_eq!(
        message("join me now"),
        "`!join` takes nothing after it, but `me now` is left over: type just `!join`."
    );
    assert!(message("stop please").contains("`please` is left over"));
    assert!(message("gather 1 fire air").contains("`air` is left over"));
    // A player named last takes the rest of the line (Matrix display names have spaces;
    // issue 31): the router says when nobody at the table is called that.
    assert_eq!(parse("status alice bob").ok(), Some(ThaumCommand::Status { player: Some(p("alice bob")) }));
    assert!(message("phase next now").contains("`now` is left over"));
}

#[test]
fn bad_numbers_say_what_was_wrong() {
    assert_eq!(
        problem("gather -3 fire"),
        Problem::BadNumber { what: "Mana amount", error: AmountError::Negative("-3".into()) }
    );
    assert_eq!(
        message("gather -3 fire"),
        "`!gather`: the Mana amount `-3` is negative; amounts are 0 or more: type \
         `!gather <mana> <fire|water|earth|air>`, e.g. `!gather 2 fire`."
    );
    assert!(message("gather 99999999999999999999999 fire").contains("is too large (at most 1000000000)"));
    assert!(message("blood 1.5 fire").contains("the amount `1.5` is not a whole number"));
    assert!(message("blood -1 fire").contains("the amount `-1` is negative"));
    assert!(message("tornado lots bob").contains("`lots` is not a whole number"));
    assert!(message("instability ++2").contains("the number `++2` is not a whole number"));
    assert!(message("instability -+2").contains("the number `-+2` is not a whole number"));
    assert!(message("instability -99999999999").contains("`-99999999999` is too large"));
    assert!(message("coins bob five").contains("`five` is not a whole number"));
    assert!(message("gather fire 3").contains("the Mana amount `fire` is not a whole number"));
}

#[test]
fn unknown_thaums_get_the_nearest_suggested() {
    assert_eq!(
        message("gather 1 fier"),
        "`!gather`: `fier` is not a Thaum (did you mean `fire`?); the Thaums are fire, water, earth and air: \
         type `!gather <mana> <fire|water|earth|air>`, e.g. `!gather 2 fire`."
    );
    assert!(matches!(
        problem("blood 1 watre"),
        Problem::NotOne { noun: "Thaum", word, suggestion: Some("water"), .. } if word == "watre"
    ));
    assert!(message("alchemy 1 fire ari").contains("did you mean `air`?"));
    assert!(message("alchemy 1 erth air").contains("did you mean `earth`?"));
    let far = message("gather 1 plasma");
    assert!(far.contains("`plasma` is not a Thaum;") && !far.contains("did you mean"), "{far}");
}

#[test]
fn phase_takes_only_next() {
    assert_eq!(problem("phase skip"), Problem::Expected("skip".into()));
    assert_eq!(message("phase 2"), "`!phase` takes the word `next`, not `2`: type just `!phase next`.");
}

#[test]
fn gm_adds_removes_or_lists() {
    use ThaumCommand as C;
    let cases = [
        ("gm", C::GmList),
        ("gm list", C::GmList),
        ("GM List", C::GmList),
        ("gamemaster", C::GmList),
        ("gm add bob", C::GmAdd { player: p("bob") }),
        ("gm ADD @bob:example.org", C::GmAdd { player: p("@bob:example.org") }),
        ("gm remove Carol", C::GmRemove { player: p("Carol") }),
    ];
    for (text, expected) in cases {
        let command = parse(text);
        assert_eq!(command.as_ref(), Ok(&expected), "{text}");
        assert_eq!(expected.verb(), Verb::Gm);
        // Listing is a question anyone may ask; adding and removing are game-master actions.
        assert_eq!(expected.is_query(), expected == C::GmList, "{text}");
        assert_eq!(expected.game_master_only(), expected != C::GmList, "{text}");
    }
    assert!(Verb::Gm.game_master_only());
    assert_eq!(
        message("gm add"),
        "`!gm` needs `add <player>`, `remove <player>` or `list` (the player is missing): \
         type `!gm [list | add <player> | remove <player>]`, e.g. `!gm add bob`."
    );
    assert_eq!(problem("gm demote bob"), Problem::Expected("demote".into()));
    assert_eq!(problem("gm list all"), Problem::Extra("all".into()));
    assert_eq!(problem("gm list carol bob"), Problem::Extra("carol bob".into()));
    // The player named last takes the rest of the line (issue 31: names with spaces).
    assert_eq!(parse("gm remove bob carol").ok(), Some(C::GmRemove { player: p("bob carol") }));
}

#[test]
fn the_help_list_covers_every_command_once() {
    let plugin = ThaumPlugin::default();
    assert_eq!(plugin.commands(), COMMANDS);
    let names: Vec<&str> = COMMANDS.iter().map(|c| c.name).collect();
    assert_eq!(
        names,
        [
            "join",
            "gather",
            "blood",
            "alchemy",
            "bend",
            "summon",
            "tornado",
            "status",
            "phase",
            "instability",
            "coins",
            "add",
            "gm",
            "stop"
        ]
    );
    let mut words: Vec<&str> =
        COMMANDS.iter().flat_map(|c| std::iter::once(c.name).chain(c.aliases.iter().copied())).collect();
    let count = words.len();
    words.sort_unstable();
    words.dedup();
    assert_eq!(words.len(), count, "no word names two commands");
    for help in COMMANDS {
        assert!(!help.summary.is_empty() && help.summary.ends_with('.'), "{}", help.name);
    }
    assert!(COMMANDS.iter().any(|c| c.summary.contains("Fire defeats Air")), "RULES: defeats shown in help");
}

#[test]
fn verbs_and_help_entries_line_up() {
    assert_eq!(COMMANDS.len(), Verb::ALL.len());
    for (i, verb) in Verb::ALL.into_iter().enumerate() {
        assert_eq!(verb as usize, i);
        assert_eq!(Verb::from_word(verb.name()), Some(verb));
        for alias in verb.help().aliases {
            assert_eq!(Verb::from_word(alias), Some(verb), "alias {alias}");
        }
        // Every example parses to this verb, whoever it names.
        for example in [verb.example().to_owned(), verb.example_naming("carol")] {
            let example = example.trim_start_matches('!');
            assert_eq!(parse(example).map(|c| c.verb()), Ok(verb), "{example}");
        }
    }
    assert_eq!(Verb::Tornado.example_naming("carol"), "!tornado 2 carol");
    assert_eq!(Verb::Coins.example_naming("carol"), "!coins carol +5");
    assert_eq!(Verb::Gather.example_naming("carol"), "!gather 2 fire");
}
