//! A table whose game has another build now (a component reloaded: `GamePlugin::build_of`)
//! is worded and helped by the build it opened with, also once rebuilt from its journal
//! (`verify`, a start with a damaged snapshot, a standby): issue 33, item 3. The two
//! builds are made up here: the built-in Nim, its news and help marked with the build,
//! the older build's `take` also called `grab` (a word the newer build does not have): a
//! table reads its players' commands by its own build's grammar, and guesses a mistyped
//! one among them.

use std::sync::{Arc, LazyLock};

use serde_json::Value;
use spellbridge_core::games::nim::NimPlugin;
use spellbridge_core::plugin::Announcement;
use spellbridge_core::{
    Command, Event, GamePlugin, Inbound, Language, NetworkId, PlayerId, Presentation, Refusal, Registry,
    RichText, RoomId, Table, TableKind, TableSetup, Timestamp,
};

use super::{Router, RouterConfig};
use crate::secrets::Secrets;

/// Nim as one build, its news and help begun with `mark`. Nim's snapshots name no build,
/// so the `newer` build takes every table for one opened with the older.
struct Build {
    mark: &'static str,
    newer: bool,
}

const OLD: Build = Build { mark: "[old build]", newer: false };
const NEW: Build = Build { mark: "[new build]", newer: true };

impl GamePlugin for Build {
    fn name(&self) -> &'static str {
        "nim"
    }

    fn summary(&self) -> &'static str {
        NimPlugin.summary()
    }

    fn commands(&self) -> &'static [Command] {
        if self.newer { NimPlugin.commands() } else { OLD_COMMANDS.as_slice() }
    }

    fn help_in(&self, command: &str, language: Language) -> Option<String> {
        let also = if self.newer { "" } else { " Also `!grab`." };
        NimPlugin.help_in(command, language).map(|help| format!("{} {help}{also}", self.mark))
    }

    fn open(&self, setup: &TableSetup) -> Result<Box<dyn Table>, Refusal> {
        NimPlugin.open(setup)
    }

    fn restore(&self, snapshot: &Value) -> Result<Box<dyn Table>, String> {
        NimPlugin.restore(snapshot)
    }

    fn build_of(&self, _snapshot: &Value) -> Option<Arc<dyn GamePlugin>> {
        self.newer.then(|| Arc::new(OLD) as Arc<dyn GamePlugin>)
    }

    fn render(&self, events: &[Event], presentation: &Presentation) -> Vec<Announcement> {
        let marked = |said: Announcement| Announcement {
            to: said.to,
            text: RichText::from(format!("{} ", self.mark)).append(said.text),
        };
        NimPlugin.render(events, presentation).into_iter().map(marked).collect()
    }

    fn kind(&self) -> TableKind {
        NimPlugin.kind()
    }
}

/// The older build's commands: Nim's, its `take` also called `grab`.
static OLD_COMMANDS: LazyLock<Vec<Command>> = LazyLock::new(|| {
    let aliases = |c: &Command| if c.name == "take" { &["取", "拿", "grab"][..] } else { c.aliases };
    NimPlugin.commands().iter().map(|c| Command { aliases: aliases(c), ..*c }).collect()
});

const T: Timestamp = Timestamp::CONSOLE_EPOCH;

fn router(build: Build) -> Router {
    let config = RouterConfig { secrets: Secrets::Seeded(3), ..RouterConfig::default() };
    Router::new(Registry::new(Vec::new()).register(build), config)
}

/// What the bot answers `nick`'s `text` in `room`, as plain text.
fn said(router: &mut Router, room: &str, nick: &str, text: &str) -> String {
    let inbound = Inbound::new(NetworkId::new("console"), RoomId::new(room), PlayerId::new(nick), text);
    router.handle(&inbound, T).iter().map(|o| o.message.text.plain()).collect::<Vec<_>>().join("\n")
}

#[test]
fn a_table_rebuilt_from_its_journal_is_worded_and_helped_by_its_own_build() {
    let mut played = router(OLD);
    said(&mut played, "#nim", "alice", "!new nim");
    said(&mut played, "#nim", "bob", "!join");
    said(&mut played, "#nim", "alice", "!take 1 a");
    let journal = played.take_journal();

    // The newer build loaded, the table rebuilt from its journal.
    let mut rebuilt = router(NEW);
    for record in &journal {
        rebuilt.replay(&record.entry).expect("replays");
    }
    assert_eq!(rebuilt.snapshot()["tables"], played.snapshot()["tables"]);
    // `grab` is the old build's word: its table takes it.
    let took = said(&mut rebuilt, "#nim", "bob", "!grab 1 b");
    assert!(took.contains("[old build] bob takes 1 stone") && !took.contains("[new build]"), "{took}");
    let status = said(&mut rebuilt, "#nim", "alice", "!status");
    assert!(status.contains("[old build]") && !status.contains("[new build]"), "{status}");
    let help = said(&mut rebuilt, "#nim", "alice", "!help take");
    assert!(help.contains("[old build] On your turn") && !help.contains("[new build]"), "{help}");
    // Where no table of it plays, the registry's build answers.
    let help = said(&mut rebuilt, "#lobby", "alice", "!help take");
    assert!(help.contains("[new build] On your turn"), "{help}");
}

#[test]
fn a_command_only_the_old_build_has_plays_at_its_table_and_is_unknown_at_a_new_one() {
    let mut router = router(OLD);
    said(&mut router, "#nim", "alice", "!new nim");
    said(&mut router, "#nim", "bob", "!join");
    // SIGHUP: the newer build loaded, which has no `grab`.
    router.set_games(Registry::new(Vec::new()).register(NEW));
    let took = said(&mut router, "#nim", "alice", "!GRAB 1 a");
    assert!(took.contains("[old build] alice takes 1 stone"), "{took}");
    let private = Inbound {
        private: true,
        ..Inbound::new(NetworkId::new("console"), RoomId::new("bob"), PlayerId::new("bob"), "!grab 2 c")
    };
    let took =
        router.handle(&private, T).iter().map(|o| o.message.text.plain()).collect::<Vec<_>>().join("\n");
    assert!(took.contains("[old build] bob takes 2 stones"), "{took}");
    // Badly typed, it is refused with the old build's usage (by the command's name), not
    // called unknown.
    let refused = said(&mut router, "#nim", "alice", "!grab x a");
    assert!(refused.contains("the amount `x` is not a whole number: type `!take <amount>"), "{refused}");

    // A table of the newer build does not know the word; neither does a room with no table.
    said(&mut router, "#new", "carol", "!new nim");
    said(&mut router, "#new", "dave", "!join");
    let unknown = said(&mut router, "#new", "carol", "!grab 1 a");
    assert!(unknown.contains("Unknown command `!grab`"), "{unknown}");
    let took = said(&mut router, "#new", "carol", "!take 1 a");
    assert!(took.contains("[new build] carol takes 1 stone"), "{took}");
    let unknown = said(&mut router, "#lobby", "carol", "!grab 1 a");
    assert!(unknown.contains("Unknown command `!grab`"), "{unknown}");
    // Asked about, the word is the old build's command at its table only.
    let help = said(&mut router, "#nim", "alice", "!help grab");
    assert!(help.contains("[old build] On your turn"), "{help}");
    let unknown = said(&mut router, "#new", "carol", "!help grab");
    assert!(unknown.contains("Unknown command `!grab`"), "{unknown}");
    // Mistyped, the word is guessed among the old build's at its table only.
    let guess = said(&mut router, "#nim", "alice", "!grabb 1 a");
    assert!(guess.contains("Unknown command `!grabb`. Did you mean `!grab`?"), "{guess}");
    let guess = said(&mut router, "#new", "carol", "!grabb 1 a");
    assert!(guess.contains("Unknown command `!grabb`") && !guess.contains("`!grab`"), "{guess}");
}

#[test]
fn the_old_builds_words_take_the_configured_prefix_in_what_its_table_says() {
    let config =
        RouterConfig { secrets: Secrets::Seeded(3), prefix: "?".to_owned(), ..RouterConfig::default() };
    let mut router = Router::new(Registry::new(Vec::new()).register(OLD), config);
    said(&mut router, "#nim", "alice", "?new nim");
    router.set_games(Registry::new(Vec::new()).register(NEW));
    let help = said(&mut router, "#nim", "alice", "?help take");
    assert!(
        help.contains("[old build]") && help.contains("Also `?grab`.") && !help.contains("!grab"),
        "{help}"
    );
}
