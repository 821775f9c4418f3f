//! `!ignore <player>` and `!unignore <player>`: a configured bot admin (`[permissions]
//! admins`) has the bot drop a player's commands and chat. The player is told once (per
//! start of the daemon) and then dropped silently; nothing they say is relayed. The list
//! is journaled, so it survives a restart.
//!
//! An ignored IRC user without an account who changes nick stays ignored under the new
//! nick for [`RENAMED_IGNORE_SECS`](super::guards::RENAMED_IGNORE_SECS) (or until the
//! daemon restarts), told or not as before ([`super::guards`] keeps both).
//! That is kept in memory only, not journaled as a new ignored player: on a network
//! without accounts a nick is anyone's once it is free, so a permanent ignore of
//! `spammer2` would later silence whoever takes that name next. The ignore that matters
//! (the one the admin typed) is journaled; the follower only closes the `/nick` escape.
//! An admin who wants the new nick ignored for good says `!ignore spammer2`. With an
//! account the player's id is the account, so a nick change changes nothing.

use spellbridge_core::locale::Args;

use super::said::said;
use super::*;

impl Router {
    /// True when one of the identities of `player` (or the sender's own) is a configured
    /// bot admin.
    fn is_admin(&self, inbound: &Inbound, player: &PlayerId) -> bool {
        let admins = &self.options.permissions.admins;
        if admins.is_empty() {
            return false;
        }
        let mut identities = self.identities.directory.identities(player);
        identities.push((inbound.network.clone(), inbound.sender.clone()));
        identities.iter().any(|identity| admins.contains(identity))
    }

    /// `Some` when the sender is ignored: what to send instead of handling the message
    /// (the notice the first time, then nothing).
    pub(super) fn ignoring(&mut self, inbound: &Inbound, now: Timestamp) -> Option<Vec<Outbound>> {
        if self.guards.ignores_nobody() {
            return None;
        }
        let player = self.identities.directory.player(&inbound.network, &inbound.sender);
        if self.guards.ignored_told(&player, now)? {
            return Some(Vec::new());
        }
        Some(vec![Outbound {
            network: inbound.network.clone(),
            to: Destination::Private(inbound.sender.clone()),
            message: said(
                self.player_language(&player, &inbound.network),
                "lobby-ignored-notice",
                Args::new(),
            )
            .into(),
        }])
    }

    /// `!ignore [player]`.
    pub(super) fn ignore(
        &mut self,
        speaker: &Speaker<'_>,
        name: Option<&str>,
        reply_to: &ReplyTo,
    ) -> Vec<Outbound> {
        let language = reply_to.language;
        let say = |id: &str, args: Args| vec![reply(reply_to, said(language, id, args))];
        if !self.is_admin(speaker.inbound, &speaker.player) {
            return say("lobby-ignore-not-admin", Args::new());
        }
        let Some(name) = name else {
            let list: Vec<&str> = self.guards.ignored().map(PlayerId::as_str).collect();
            if list.is_empty() {
                return say("lobby-ignore-nobody", Args::new());
            }
            return say("lobby-ignore-list", Args::new().text("players", list.join(", ")));
        };
        let player = match self.resolve_name(name, &speaker.place, &[], language) {
            Ok(player) => player.unwrap_or_else(|| self.named_elsewhere(speaker, name)),
            Err(problem) => return vec![reply(reply_to, problem)],
        };
        if player == speaker.player {
            return say("lobby-ignore-self", Args::new());
        }
        let admin = self
            .identities
            .directory
            .identities(&player)
            .iter()
            .any(|i| self.options.permissions.admins.contains(i));
        if admin {
            let args = Args::new().text("player", player.as_str()).text("setting", "`[permissions] admins`");
            return say("lobby-ignore-admin", args);
        }
        if !self.guards.ignore(&player) {
            return say("lobby-ignore-already", Args::new().text("player", player.as_str()));
        }
        self.log(Entry::Ignored { player: player.clone() });
        let undo = format!("{}unignore {player}", self.options.prefix);
        say("lobby-ignoring", Args::new().text("player", player.as_str()).text("undo", undo))
    }

    /// `!unignore <player>`.
    pub(super) fn unignore(
        &mut self,
        speaker: &Speaker<'_>,
        name: &str,
        reply_to: &ReplyTo,
    ) -> Vec<Outbound> {
        let language = reply_to.language;
        let say = |id: &str, args: Args| vec![reply(reply_to, said(language, id, args))];
        if !self.is_admin(speaker.inbound, &speaker.player) {
            return say("lobby-unignore-not-admin", Args::new());
        }
        let player = match self.resolve_name(name, &speaker.place, &[], language) {
            Ok(player) => player.unwrap_or_else(|| self.named_elsewhere(speaker, name)),
            Err(problem) => return vec![reply(reply_to, problem)],
        };
        // Taking a player back takes back their new nicks too; a new nick alone can be
        // taken back (it was never journaled).
        let (ignored, renamed) = self.guards.unignore(&player);
        if !ignored {
            let id = if renamed { "lobby-unignored" } else { "lobby-unignore-not" };
            return say(id, Args::new().text("player", player.as_str()));
        }
        self.log(Entry::Unignored { player: player.clone() });
        say("lobby-unignored", Args::new().text("player", player.as_str()))
    }
}

impl Router {
    /// The player a name nobody known answers to would be: that nick on the speaker's
    /// network (`libera:eve`), else the name as typed.
    fn named_elsewhere(&self, speaker: &Speaker<'_>, name: &str) -> PlayerId {
        self.identities
            .directory
            .would_be(&speaker.inbound.network, name)
            .unwrap_or_else(|| PlayerId::new(name))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::router::guards::RENAMED_IGNORE_SECS;

    const T: Timestamp = Timestamp::CONSOLE_EPOCH;

    /// The bridged test router, with `irc/root` a bot admin.
    fn router() -> Router {
        super::super::tests::bridged(Permissions {
            admins: vec![(NetworkId::new("irc"), PlayerId::new("root"))],
            game_masters: Vec::new(),
        })
    }

    fn irc(nick: &str, text: &str) -> Inbound {
        Inbound::new(NetworkId::new("irc"), RoomId::new("#magic"), PlayerId::new(nick), text)
    }

    fn texts(out: &[Outbound]) -> Vec<String> {
        out.iter().map(|o| o.message.text.plain()).collect()
    }

    #[test]
    fn an_admin_ignores_a_player_who_is_told_once_then_dropped() {
        let mut router = router();
        router.handle(&irc("spammer", "hello"), T);
        let ignored = router.handle(&irc("root", "!ignore spammer"), T);
        assert!(texts(&ignored)[0].contains("Ignoring `irc:spammer`"), "{:?}", texts(&ignored));
        let first = router.handle(&irc("spammer", "!games"), T);
        assert_eq!(first.len(), 1);
        assert_eq!(first[0].to, Destination::Private(PlayerId::new("spammer")));
        assert!(texts(&first)[0].contains("asked me to ignore you"), "{:?}", texts(&first));
        // Then silence: no command taken, no chat relayed to the bridge.
        assert!(router.handle(&irc("spammer", "!new thaum"), T).is_empty());
        assert!(router.handle(&irc("spammer", "buy cheap mana"), T).is_empty());
        assert_eq!(router.snapshot()["tables"], json!([]));
        // The list (ids name their network) survives a restart (journaled); `!unignore`
        // takes them back.
        let journal = router.take_journal();
        let mut restarted = self::router();
        journal.iter().for_each(|r| restarted.replay(&r.entry).expect("replays"));
        assert_eq!(
            texts(&restarted.handle(&irc("root", "!ignore"), T)),
            ["root: Ignored: irc:spammer. `!unignore <player>` takes one back."]
        );
        restarted.handle(&irc("root", "!unignore spammer"), T);
        assert_eq!(texts(&restarted.handle(&irc("spammer", "hi all"), T)), ["<spammer> hi all"]);
    }

    /// Issue 29, item 8: `/nick spammer2` does not end an ignore, nor does a second rename;
    /// it holds a day, others are unaffected, and `!unignore` takes back the new nicks.
    #[test]
    fn an_ignored_nick_renamed_stays_ignored_for_a_day() {
        let mut router = router();
        router.handle(&irc("root", "!ignore spammer"), T);
        assert_eq!(router.handle(&irc("spammer", "!games"), T).len(), 1, "told once");
        let renamed = |from: &str, to: &str, text: &str| Inbound {
            formerly: Some(PlayerId::new(from)),
            ..irc(to, text)
        };
        assert!(router.handle(&renamed("spammer", "spammer2", "buy cheap mana"), T).is_empty());
        assert!(router.handle(&irc("spammer2", "!games"), T).is_empty());
        assert!(router.handle(&renamed("spammer2", "spammer3", "!new thaum"), T.plus(60)).is_empty());
        assert_eq!(router.snapshot()["tables"], json!([]));
        // Someone else is heard; the list of ignored players names only the journaled one.
        assert_eq!(texts(&router.handle(&irc("bob", "hi all"), T)), ["<bob> hi all"]);
        assert!(
            router
                .take_journal()
                .iter()
                .all(|r| r.entry != Entry::Ignored { player: PlayerId::new("irc:spammer2") })
        );
        // A day after the rename the new nick (anyone's by then) is heard again.
        let day = T.plus(60 + RENAMED_IGNORE_SECS);
        assert_eq!(texts(&router.handle(&irc("spammer3", "hi all"), day)), ["<spammer3> hi all"]);
        // `!unignore` of the ignored player takes back their new nicks at once.
        router.handle(&renamed("spammer", "spam", "hello"), day);
        assert!(router.handle(&irc("spam", "hello"), day).is_empty());
        router.handle(&irc("root", "!unignore spammer"), day);
        assert_eq!(texts(&router.handle(&irc("spam", "hello"), day)), ["<spam> hello"]);
    }

    #[test]
    fn only_admins_ignore_and_admins_cannot_be_ignored() {
        let mut router = router();
        router.handle(&irc("root", "!games"), T);
        let refused = router.handle(&irc("bob", "!ignore alice"), T);
        assert!(texts(&refused)[0].contains("Only the bot's admins"), "{:?}", texts(&refused));
        let game_master = Inbound { operator: true, ..irc("op", "!ignore alice") };
        assert!(texts(&router.handle(&game_master, T))[0].contains("Only the bot's admins"));
        let admin = router.handle(&irc("root", "!ignore root"), T);
        assert!(texts(&admin)[0].contains("cannot ignore yourself"), "{:?}", texts(&admin));
        assert!(router.take_journal().iter().all(|r| !matches!(r.entry, Entry::Ignored { .. })));
        let usage = router.handle(&irc("root", "!unignore"), T);
        assert!(texts(&usage)[0].contains("!unignore <player>"), "{:?}", texts(&usage));
    }
}
