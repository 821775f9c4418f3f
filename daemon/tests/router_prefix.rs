//! A bot configured with another prefix than `!` says that prefix in every command it
//! suggests (issue 15): unknown-command hints, help, a new table's opening, refusals.

use spellbridge::router::{Outbound, Router, RouterConfig};
use spellbridge_core::{Registry, Timestamp};

use crate::common::on;

const T: Timestamp = Timestamp::CONSOLE_EPOCH;

fn said(out: &[Outbound]) -> String {
    out.iter().map(|o| o.message.text.plain()).collect::<Vec<_>>().join("\n")
}

/// The words written right after a `!`, as the games write a command (an exclamation
/// mark that ends a sentence has a space or nothing after it).
fn bang_words(text: &str) -> Vec<&str> {
    text.split('!')
        .skip(1)
        .filter(|rest| rest.starts_with(|c: char| c.is_ascii_alphabetic()))
        .filter_map(|rest| rest.split_whitespace().next())
        .collect()
}

#[test]
fn every_suggested_command_uses_the_configured_prefix() {
    let options = RouterConfig { prefix: "?".to_owned(), ..RouterConfig::default() };
    let mut router = Router::new(Registry::standard(), options);
    let mut ask = |nick: &str, text: &str| said(&router.handle(&on("libera", nick, text), T));

    let unknown = ask("alice", "?bogus");
    assert!(unknown.contains("?help"), "{unknown}");
    let help = ask("alice", "?help");
    assert!(help.contains("?new") && help.contains("?duel"), "{help}");
    let help_new = ask("alice", "?help new");
    assert!(help_new.contains("?new thaum"), "{help_new}");
    let no_table = ask("alice", "?join");
    assert!(no_table.contains("?new thaum"), "{no_table}");
    let which = ask("alice", "?new");
    assert!(which.contains("`?new` needs a game") && which.contains("`?duel <player>`"), "{which}");
    let opened = ask("alice", "?new thaum");
    let refused = ask("alice", "?new thaum");
    // A table command that does not read: the usage line from the grammar, with `?`.
    let unread = ask("alice", "?gather 1");
    assert!(
        unread.contains("type `?gather <mana> <fire|water|earth|air>`, e.g. `?gather 2 fire`"),
        "{unread}"
    );
    let lobby_unread = ask("alice", "?duel");
    assert!(lobby_unread.contains("type `?duel <player> [wizard]`"), "{lobby_unread}");
    let help_gather = ask("alice", "?help gather");
    assert!(help_gather.contains("`?gather <mana>"), "{help_gather}");
    for text in [
        &unknown,
        &help,
        &help_new,
        &no_table,
        &which,
        &opened,
        &refused,
        &unread,
        &lobby_unread,
        &help_gather,
    ] {
        assert_eq!(bang_words(text), Vec::<&str>::new(), "a `!` command in: {text}");
    }
    // Chat is relayed as said, `!` and all (nothing to relay to here: it is unanswered).
    assert_eq!(ask("bob", "try `!new thaum` elsewhere"), "");
}
