//! Who is in each of the bot's channels, by the names they go by (their case kept), and
//! the changes of membership the daemon is told of (issue 17: a Matrix appservice shows
//! each channel member as a ghost): someone found in a NAMES reply or joining is
//! `Joined`, one parting or kicked `Left`, one quitting `Quit` in every channel they
//! were in (with the reason as the server relayed it: a netsplit's names two servers),
//! and a nick change `Renamed` in every channel they are in. The bot itself is never
//! reported. After a reconnect ([`Roster::resuming`] the last connection's), the end
//! of a channel's first NAMES reply reports as `Left` those the last connection saw
//! there who are gone now. The end of the first NAMES reply after the bot joins a
//! channel (at a daemon's start too, when there is no last connection to compare with)
//! reports the whole member list, `Listed`, so the mirroring side can let go of members
//! who left while nobody was watching. Pure: the session shows it every message from
//! the server.

use std::collections::HashMap;

use irc::client::prelude::{Command, Message, Response};
use spellbridge_core::Presence;

use super::members::fold;

/// One channel: its name as the server gave it when the bot joined, its members by
/// folded nick, and whether its member list has been reported whole since the bot joined.
#[derive(Debug, Default)]
struct Channel {
    name: String,
    nicks: HashMap<String, String>,
    listed: bool,
}

/// The members of the bot's channels, as they write their nicks.
#[derive(Debug, Default)]
pub(crate) struct Roster {
    channels: HashMap<String, Channel>,
    /// The last connection's channels, until each one's NAMES reply has ended.
    before: HashMap<String, Channel>,
}

/// A change: the channel (as the server names it), the nick (before a rename), what.
pub(crate) type Change = (String, String, Presence);

impl Roster {
    /// A new connection's roster, after `last` connection's.
    pub(crate) fn resuming(last: Roster) -> Roster {
        let mut before = last.before;
        before.extend(last.channels);
        Roster { channels: HashMap::new(), before }
    }

    /// Reads one message from the server; `own_nick` is the bot's. Returns the changes
    /// of membership it makes, in order.
    pub(crate) fn observe(&mut self, message: &Message, own_nick: &str) -> Vec<Change> {
        let source = message.source_nickname().unwrap_or_default();
        let own = |nick: &str| fold(nick) == fold(own_nick);
        let mut changes = Vec::new();
        match &message.command {
            // [our nick, symbol, channel, names]
            Command::Response(Response::RPL_NAMREPLY, args) => {
                if let [_, _, channel, names] = args.as_slice()
                    && let Some(known) = self.channels.get_mut(&fold(channel))
                {
                    for name in names.split(' ').filter(|n| !n.is_empty()) {
                        let nick = name.trim_start_matches(['~', '&', '@', '%', '+']);
                        let nick = nick.split('!').next().unwrap_or(nick);
                        if !own(nick) && known.nicks.insert(fold(nick), nick.to_owned()).is_none() {
                            changes.push((known.name.clone(), nick.to_owned(), Presence::Joined));
                        }
                    }
                }
            }
            // [our nick, channel, text]
            Command::Response(Response::RPL_ENDOFNAMES, args) => {
                if let Some(channel) = args.get(1)
                    && let Some(known) = self.channels.get_mut(&fold(channel))
                {
                    if let Some(last) = self.before.remove(&fold(channel)) {
                        for (folded, nick) in last.nicks {
                            if !known.nicks.contains_key(&folded) {
                                changes.push((known.name.clone(), nick, Presence::Left));
                            }
                        }
                    }
                    if !known.listed {
                        known.listed = true;
                        let mut nicks: Vec<String> = known.nicks.values().cloned().collect();
                        nicks.sort();
                        changes.push((known.name.clone(), String::new(), Presence::Listed { nicks }));
                    }
                }
            }
            Command::JOIN(channel, _, _) if own(source) => {
                let channel = Channel { name: channel.clone(), ..Channel::default() };
                self.channels.insert(fold(&channel.name), channel);
            }
            Command::JOIN(channel, _, _) => {
                if let Some(known) = self.channels.get_mut(&fold(channel)) {
                    known.nicks.insert(fold(source), source.to_owned());
                    changes.push((known.name.clone(), source.to_owned(), Presence::Joined));
                }
            }
            Command::PART(channel, _) => self.left(channel, source, own(source), &mut changes),
            Command::KICK(channel, nick, _) => self.left(channel, nick, own(nick), &mut changes),
            Command::QUIT(reason) => {
                let reason = reason.clone().unwrap_or_default();
                for known in self.channels.values_mut() {
                    if let Some(nick) = known.nicks.remove(&fold(source)) {
                        changes.push((known.name.clone(), nick, Presence::Quit { reason: reason.clone() }));
                    }
                }
            }
            Command::NICK(new) if !own(source) => {
                for known in self.channels.values_mut() {
                    if let Some(nick) = known.nicks.remove(&fold(source)) {
                        known.nicks.insert(fold(new), new.clone());
                        changes.push((known.name.clone(), nick, Presence::Renamed { to: new.clone() }));
                    }
                }
            }
            _ => {}
        }
        changes.sort_by(|a, b| a.0.cmp(&b.0));
        changes
    }

    /// Someone left a channel; when it is the bot, the channel is forgotten (its members
    /// are not reported gone: the bot no longer sees them).
    fn left(&mut self, channel: &str, nick: &str, own: bool, changes: &mut Vec<Change>) {
        if own {
            self.channels.remove(&fold(channel));
        } else if let Some(known) = self.channels.get_mut(&fold(channel))
            && let Some(nick) = known.nicks.remove(&fold(nick))
        {
            changes.push((known.name.clone(), nick, Presence::Left));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(roster: &mut Roster, lines: &[&str]) -> Vec<(String, String, Presence)> {
        let mut all = Vec::new();
        for line in lines {
            let message: Message = line.parse().unwrap_or_else(|e| panic!("{line:?}: {e}"));
            all.extend(roster.observe(&message, "spellbot"));
        }
        all
    }

    fn change(channel: &str, nick: &str, presence: Presence) -> Change {
        (channel.to_owned(), nick.to_owned(), presence)
    }

    #[test]
    fn names_and_joins_are_joined_parts_and_kicks_left_and_the_bot_is_never_reported() {
        let mut roster = Roster::default();
        let changes = read(
            &mut roster,
            &[
                ":spellbot!b@h JOIN #Magic",
                ":irc.test 353 spellbot = #magic :@Op!o@h +Voice spellbot",
                ":irc.test 353 spellbot = #magic :op",
                ":Carol!c@h JOIN #magic",
                ":Voice!v@h PART #magic :bye",
                ":op!o@h KICK #magic Carol :out",
                ":nobody!n@h JOIN #elsewhere",
            ],
        );
        assert_eq!(
            changes,
            [
                change("#Magic", "Op", Presence::Joined),
                change("#Magic", "Voice", Presence::Joined),
                change("#Magic", "Carol", Presence::Joined),
                change("#Magic", "Voice", Presence::Left),
                change("#Magic", "Carol", Presence::Left),
            ]
        );
        assert!(read(&mut roster, &[":op!o@h KICK #magic spellbot :out"]).is_empty());
        assert!(read(&mut roster, &[":op!o@h PART #magic"]).is_empty(), "the channel is forgotten");
    }

    #[test]
    fn after_a_reconnect_those_gone_meanwhile_are_reported_left_once() {
        let mut last = Roster::default();
        read(&mut last, &[":spellbot!b@h JOIN #magic", ":irc.test 353 spellbot = #magic :alice Bob carol"]);
        let mut roster = Roster::resuming(last);
        let changes = read(
            &mut roster,
            &[
                ":spellbot!b@h JOIN #magic",
                ":irc.test 353 spellbot = #magic :alice carol dave",
                ":irc.test 366 spellbot #magic :End of /NAMES list.",
                ":irc.test 366 spellbot #magic :End of /NAMES list.",
            ],
        );
        assert_eq!(
            changes,
            [
                change("#magic", "alice", Presence::Joined),
                change("#magic", "carol", Presence::Joined),
                change("#magic", "dave", Presence::Joined),
                change("#magic", "Bob", Presence::Left),
                change("#magic", "", listed(&["alice", "carol", "dave"])),
            ]
        );
    }

    fn listed(nicks: &[&str]) -> Presence {
        Presence::Listed { nicks: nicks.iter().map(|n| (*n).to_owned()).collect() }
    }

    #[test]
    fn the_first_complete_member_list_after_the_bot_joins_is_reported_whole_once() {
        // A daemon's start: no last connection to compare with.
        let mut roster = Roster::default();
        let changes = read(
            &mut roster,
            &[
                ":SpellBot!b@h JOIN #Magic",
                ":irc.test 353 spellbot = #MAGIC :@Op!o@h +Bo[b] ~w\\eird^Nick spellbot",
                ":irc.test 353 spellbot = #magic :%ALICE &x|y",
                ":irc.test 366 spellbot #magic :End of /NAMES list.",
                ":irc.test 366 spellbot #magic :End of /NAMES list.",
                ":irc.test 366 spellbot #nowhere :End of /NAMES list.",
            ],
        );
        let listed_whole = listed(&["ALICE", "Bo[b]", "Op", "w\\eird^Nick", "x|y"]);
        assert_eq!(changes.last(), Some(&change("#Magic", "", listed_whole)), "{changes:#?}");
        assert_eq!(changes.iter().filter(|c| matches!(c.2, Presence::Listed { .. })).count(), 1, "once");
        // The same nick in another case and with RFC 1459's folded brackets is one member.
        assert!(read(&mut roster, &[":irc.test 353 spellbot = #magic :bo{B} alice"]).is_empty());
        // Kicked out and back: the list is reported whole again, with those now there.
        read(&mut roster, &[":Op!o@h KICK #magic spellbot :out", ":spellbot!b@h JOIN #magic"]);
        let again = read(
            &mut roster,
            &[
                ":irc.test 353 spellbot = #magic :@Op spellbot",
                ":irc.test 366 spellbot #magic :End of /NAMES list.",
            ],
        );
        assert_eq!(again, [change("#magic", "Op", Presence::Joined), change("#magic", "", listed(&["Op"]))]);
    }

    #[test]
    fn quits_and_renames_are_reported_in_every_channel_the_member_was_in() {
        let mut roster = Roster::default();
        read(
            &mut roster,
            &[
                ":spellbot!b@h JOIN #a",
                ":spellbot!b@h JOIN #b",
                ":irc.test 353 spellbot = #a :alice bob",
                ":irc.test 353 spellbot = #b :alice",
            ],
        );
        let renamed = read(&mut roster, &[":alice!a@h NICK :Alicia", ":spellbot!b@h NICK :spellbot2"]);
        let to = || Presence::Renamed { to: "Alicia".into() };
        assert_eq!(renamed, [change("#a", "alice", to()), change("#b", "alice", to())]);
        let quit = read(&mut roster, &[":ALICIA!a@h QUIT :hub.net leaf.split"]);
        let reason = || Presence::Quit { reason: "hub.net leaf.split".into() };
        assert_eq!(quit, [change("#a", "Alicia", reason()), change("#b", "Alicia", reason())]);
        assert!(read(&mut roster, &[":alice!a@h QUIT :gone"]).is_empty(), "gone already");
    }
}
