//! One name for each player everywhere a name is read rather than pinged (issue 31,
//! item 4): chat on a network where they have no identity, `!stats`, `!top`, board
//! pictures and the spectator site all show what [`crate::names::shown`] makes of the
//! name the directory knows them by, with where they play only when someone else
//! answers to that name too. The names are kept in the store (`meta` key [`META_KEY`],
//! committed with the entries that made them known) so the site, and `!top` after a
//! restart, show them too; ratings stay keyed by player id.

use spellbridge_core::PlayerId;

use super::Router;

/// The `meta` key the names are kept under (a JSON object, player id → name).
pub const META_KEY: &str = "names";

impl Router {
    /// How `player` is shown where their network's own form is not used (see the module
    /// doc): the name the directory knows them by (else the kept one, else their id's),
    /// escaped and cut.
    pub fn shown_name(&self, player: &PlayerId) -> String {
        self.identities.shown_name(player)
    }

    /// The names to keep (as JSON text) when a name or link changed since the last call.
    pub fn take_names(&mut self) -> Option<String> {
        self.identities.take_names()
    }

    /// Takes back the names the store kept (`text` as [`Router::take_names`] wrote it);
    /// text that does not read is left out (logged).
    pub fn load_names(&mut self, text: &str) {
        self.identities.load_names(text);
    }
}

#[cfg(test)]
mod tests {
    use spellbridge_core::{Inbound, NetworkId, Registry, RoomId, Timestamp};

    use super::*;
    use crate::engine::Engine;
    use crate::router::{Permissions, RouterConfig};
    use crate::store::{Durability, OpenMode, Store};

    const T: Timestamp = Timestamp::CONSOLE_EPOCH;

    /// IRC `#magic` bridged with Matrix `!m`.
    fn options() -> RouterConfig {
        let rooms =
            [(NetworkId::new("irc"), RoomId::new("#magic")), (NetworkId::new("matrix"), RoomId::new("!m"))];
        let bridges = vec![crate::relay::bridge("magic", &rooms, true)];
        RouterConfig { bridges, permissions: Permissions::default(), ..RouterConfig::default() }
    }

    fn engine_on(db: &std::path::Path) -> Engine {
        let store = Store::open(db, OpenMode::CreateIfMissing, Durability::Full).expect("store opens");
        let router = store.load(Registry::standard(), options()).expect("loads");
        Engine::new(router, Some(store), Box::new(Registry::standard), options())
    }

    fn said(network: &str, who: &str, name: &str, text: &str, id: &str) -> Inbound {
        let room = if network == "irc" { "#magic" } else { "!m" };
        Inbound {
            display_name: name.to_owned(),
            message_id: Some(id.to_owned()),
            ..Inbound::new(NetworkId::new(network), RoomId::new(room), PlayerId::new(who), text)
        }
    }

    fn answers(engine: &mut Engine, inbound: Inbound, now: Timestamp) -> String {
        let batch = engine.handle_batch(&[inbound], now, Vec::new()).expect("handled");
        batch.queued.iter().map(|q| q.outbound.message.text.plain()).collect::<Vec<_>>().join("\n")
    }

    /// A Matrix player's display name is kept with the game that made it known, so after
    /// a restart (nobody has spoken since) `!stats` on IRC and the picture say `Bob B`, not
    /// `@bob:hs`; the store keeps names for the site by player id.
    #[test]
    fn display_names_are_kept_with_the_game_and_shown_after_a_restart() {
        let dir = tempfile::tempdir().expect("temp dir");
        let db = dir.path().join("games.db");
        let mut engine = engine_on(&db);
        answers(&mut engine, said("matrix", "@bob:hs", "Bob B", "hello", "1"), T);
        answers(&mut engine, said("irc", "alice", "alice", "!duel Bob B", "2"), T);
        let started = answers(&mut engine, said("matrix", "@bob:hs", "Bob B", "!accept", "3"), T);
        assert!(started.contains("Round 1 begins"), "{started}");
        answers(&mut engine, said("matrix", "@bob:hs", "Bob B", "!concede", "4"), T.plus(120));
        let kept = engine.store().and_then(|s| s.meta(META_KEY).expect("meta reads")).expect("names kept");
        let kept: std::collections::BTreeMap<PlayerId, String> = serde_json::from_str(&kept).expect("JSON");
        assert_eq!(kept.get(&PlayerId::new("@bob:hs")).map(String::as_str), Some("Bob B"), "{kept:?}");
        drop(engine);

        let mut engine = engine_on(&db);
        let stats = answers(&mut engine, said("irc", "alice", "alice", "!stats @bob:hs", "5"), T.plus(200));
        assert!(stats.starts_with("alice: Bob B has played 1 game"), "{stats}");
        assert!(!stats.contains("@bob:hs"), "{stats}");
        let names = engine.router().picture_names(0);
        assert!(names.contains(&(PlayerId::new("@bob:hs"), "Bob B".to_owned())), "{names:?}");
    }

    /// Two players shown alike are told apart by where they play, in chat and pictures.
    #[test]
    fn two_players_shown_alike_are_shown_with_where_they_play() {
        let mut router = crate::router::Router::new(Registry::standard(), options());
        router.handle(&said("irc", "carol", "carol", "hi", "1"), T);
        router.handle(&said("matrix", "@carol:example.org", "carol", "hi", "2"), T);
        router.handle(&said("matrix", "@bob:hs", "bob", "hi", "3"), T);
        assert_eq!(router.shown_name(&PlayerId::new("irc:carol")), "carol (irc)");
        assert_eq!(router.shown_name(&PlayerId::new("@carol:example.org")), "carol (@carol:example.org)");
        assert_eq!(router.shown_name(&PlayerId::new("@bob:hs")), "bob");
        let asked = router.handle(&said("matrix", "@bob:hs", "bob", "!stats irc:carol", "4"), T);
        let text = asked.iter().map(|o| o.message.text.plain()).collect::<String>();
        assert!(text.contains("carol (irc) has not finished a game yet"), "{text}");
    }
}
