//! A third game, rock-paper-scissors ([`crate::rps`]), added in one line with
//! `Registry::register` and played through the console's own code: opened, joined,
//! thrown privately (a throw in the room refused without echoing it), revealed
//! together, and its options read from `[games.rps]` by the daemon's config, with no
//! change in the daemon.

use std::path::Path;

use spellbridge::config::{Catalogue, Settings};
use spellbridge_core::Registry;

use crate::rps::Rps;

/// The standard games and rock-paper-scissors: the one line that adds a game.
fn games() -> Registry {
    Registry::standard().register(Rps::default())
}

#[test]
fn rock_paper_scissors_is_played_through_the_console() {
    let script = "\
alice: !games
alice: !new rps
bob: !join
alice: !throw rock
bob (dm): !throw scissors
bob: !status
alice (dm): !throw rock
";
    let (transcript, state) =
        spellbridge::console::run_script_with_games(script, 1, games()).expect("the script plays");
    let lines: Vec<&str> = transcript.lines().collect();
    assert!(
        lines[0].contains("rps — rock-paper-scissors with hidden throws") && lines[0].contains("`!new rps`"),
        "the registry's games are listed, with how to start each: {transcript}"
    );
    assert!(transcript.contains("alice opens rock-paper-scissors"), "{transcript}");
    assert!(transcript.contains("bob joins."), "{transcript}");
    let refused =
        lines.iter().find(|l| l.contains("Throw privately")).expect("a throw in the room is refused");
    assert!(!refused.contains("rock"), "the refusal does not echo the throw: {refused}");
    assert!(transcript.contains("[dm:bob] You throw scissors; waiting for your opponent."), "{transcript}");
    let status = lines.iter().position(|l| l.contains("Score:")).expect("status");
    assert!(
        !lines[..=status].iter().any(|l| l.starts_with("[console]") && l.contains("throws scissors")),
        "bob's throw stays hidden until both are in: {transcript}"
    );
    assert!(
        transcript.contains("[console] alice throws rock, bob throws scissors: alice wins the match!"),
        "both throws are revealed together: {transcript}"
    );
    let table = &state["tables"][0];
    assert_eq!(table["game"], "rps", "{state}");
    assert_eq!(table["state"]["winner"], "alice", "{state}");
}

#[test]
fn a_third_games_options_come_from_its_own_section() {
    let catalogue = Catalogue { games: games(), ..Catalogue::standard() };
    let path = Path::new("/etc/spellbridge/spellbridge.toml");
    let settings = Settings::parse_with("[games.rps]\nbest_of = 3\n", path, &catalogue).expect("valid");
    let (transcript, _) = spellbridge::console::run_script_with_games("alice: !new rps\n", 1, settings.games)
        .expect("the script plays");
    assert!(transcript.contains("(best of 3)"), "{transcript}");
    let even = Settings::parse_with("[games.rps]\nbest_of = 2\n", path, &catalogue).expect_err("even");
    assert!(even.to_string().contains("[games.rps] best_of = 2: write an odd number"), "{even}");
    let unknown = Settings::parse_with("[games.rps]\nrounds = 3\n", path, &catalogue).expect_err("unknown");
    assert!(unknown.to_string().contains("unknown field `rounds`"), "{unknown}");
}
