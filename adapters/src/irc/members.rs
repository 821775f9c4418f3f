//! Who is in each channel the bot is in, and which channel prefixes (`~ & @ % +`) they
//! hold, kept from the server's NAMES replies, JOIN, PART, KICK, QUIT, NICK and MODE.
//! It does no I/O: the connection task shows it every message and asks it whether a
//! sender operates a channel ([`Members::is_operator`]).
//!
//! The `irc` crate's `channel-lists` feature keeps such a list too, but a nick change
//! replaces the user with a rankless one (an op who changes nick is no longer one) and
//! the list of a channel the bot was kicked from is kept and then appended to by the
//! next NAMES reply (a user deopped meanwhile is still found as an op first); so the
//! transport keeps its own, and the `namesx` (multi-prefix) capability gives every
//! prefix a member holds.

use std::collections::HashMap;

use irc::client::prelude::{Command, Message, Response};
use irc::proto::{ChannelMode, Mode};

/// A channel prefix a member may hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rank {
    /// `~`, mode `q`.
    Owner,
    /// `&`, mode `a`.
    Admin,
    /// `@`, mode `o`.
    Op,
    /// `%`, mode `h`.
    HalfOp,
    /// `+`, mode `v`.
    Voice,
}

impl Rank {
    fn from_prefix(c: char) -> Option<Rank> {
        match c {
            '~' => Some(Rank::Owner),
            '&' => Some(Rank::Admin),
            '@' => Some(Rank::Op),
            '%' => Some(Rank::HalfOp),
            '+' => Some(Rank::Voice),
            _ => None,
        }
    }

    fn from_mode(mode: &ChannelMode) -> Option<Rank> {
        match mode {
            ChannelMode::Founder => Some(Rank::Owner),
            ChannelMode::Admin => Some(Rank::Admin),
            ChannelMode::Oper => Some(Rank::Op),
            ChannelMode::Halfop => Some(Rank::HalfOp),
            ChannelMode::Voice => Some(Rank::Voice),
            _ => None,
        }
    }

    fn bit(self) -> u8 {
        1 << self as u8
    }
}

/// The prefixes one member holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Ranks(u8);

impl Ranks {
    fn set(&mut self, rank: Rank, on: bool) {
        if on {
            self.0 |= rank.bit();
        } else {
            self.0 &= !rank.bit();
        }
    }

    /// Half-op or higher: the channel's moderators. Voice alone is not.
    fn operates(self) -> bool {
        [Rank::Owner, Rank::Admin, Rank::Op, Rank::HalfOp].into_iter().any(|r| self.0 & r.bit() != 0)
    }
}

/// One member of a channel: their nick as they write it, and their prefixes.
#[derive(Clone, Debug, Default)]
struct Member {
    nick: String,
    ranks: Ranks,
}

/// The members of the bot's channels, by case-folded channel name and nick.
#[derive(Debug, Default)]
pub(crate) struct Members {
    channels: HashMap<String, HashMap<String, Member>>,
}

impl Members {
    /// Updates the lists from one message from the server; `own_nick` is the bot's.
    pub(crate) fn observe(&mut self, message: &Message, own_nick: &str) {
        let source = message.source_nickname().unwrap_or_default();
        let own = fold(source) == fold(own_nick);
        match &message.command {
            // [our nick, symbol, channel, names]
            Command::Response(Response::RPL_NAMREPLY, args) => {
                if let [_, _, channel, names] = args.as_slice() {
                    let members = self.channels.entry(fold(channel)).or_default();
                    for name in names.split(' ').filter(|n| !n.is_empty()) {
                        let (nick, ranks) = parse_name(name);
                        members.insert(fold(nick), Member { nick: nick.to_owned(), ranks });
                    }
                }
            }
            Command::JOIN(channel, _, _) if own => {
                // A fresh list; the NAMES reply that follows fills it.
                self.channels.insert(fold(channel), HashMap::new());
            }
            Command::JOIN(channel, _, _) => self.add(channel, source),
            Command::PART(channel, _) => self.remove(channel, source, own),
            Command::KICK(channel, nick, _) => self.remove(channel, nick, fold(nick) == fold(own_nick)),
            Command::QUIT(_) => {
                for members in self.channels.values_mut() {
                    members.remove(&fold(source));
                }
            }
            Command::NICK(new) => {
                for members in self.channels.values_mut() {
                    if let Some(member) = members.remove(&fold(source)) {
                        members.insert(fold(new), Member { nick: new.clone(), ..member });
                    }
                }
            }
            Command::ChannelMODE(channel, modes) => {
                let Some(members) = self.channels.get_mut(&fold(channel)) else { return };
                for mode in modes {
                    let (mode, nick, on) = match mode {
                        Mode::Plus(mode, Some(nick)) => (mode, nick, true),
                        Mode::Minus(mode, Some(nick)) => (mode, nick, false),
                        _ => continue,
                    };
                    if let (Some(rank), Some(member)) = (Rank::from_mode(mode), members.get_mut(&fold(nick)))
                    {
                        member.ranks.set(rank, on);
                    }
                }
            }
            _ => {}
        }
    }

    /// True when `nick` is in `channel` now (IRC case rules).
    pub(crate) fn contains(&self, channel: &str, nick: &str) -> bool {
        self.channels.get(&fold(channel)).is_some_and(|members| members.contains_key(&fold(nick)))
    }

    /// True when `nick` is half-op or higher in `channel` now.
    pub(crate) fn is_operator(&self, channel: &str, nick: &str) -> bool {
        self.channels
            .get(&fold(channel))
            .and_then(|members| members.get(&fold(nick)))
            .is_some_and(|member| member.ranks.operates())
    }

    /// `nick` as the member of `channel` called so writes it, when there is one (IRC
    /// case rules).
    pub(crate) fn nick_in(&self, channel: &str, nick: &str) -> Option<&str> {
        self.channels.get(&fold(channel))?.get(&fold(nick)).map(|member| member.nick.as_str())
    }

    /// True when `nick` is in any of the bot's channels (so the bot sees them leave).
    pub(crate) fn present(&self, nick: &str) -> bool {
        let nick = fold(nick);
        self.channels.values().any(|members| members.contains_key(&nick))
    }

    fn add(&mut self, channel: &str, nick: &str) {
        if let Some(members) = self.channels.get_mut(&fold(channel)) {
            members.insert(fold(nick), Member { nick: nick.to_owned(), ranks: Ranks::default() });
        }
    }

    /// Someone left a channel; when it is the bot, the channel's list goes.
    fn remove(&mut self, channel: &str, nick: &str, own: bool) {
        if own {
            self.channels.remove(&fold(channel));
        } else if let Some(members) = self.channels.get_mut(&fold(channel)) {
            members.remove(&fold(nick));
        }
    }
}

/// A NAMES entry: prefixes, the nick, and with `userhost-in-names` `!user@host`.
fn parse_name(name: &str) -> (&str, Ranks) {
    let mut ranks = Ranks::default();
    let nick = name.trim_start_matches(|c| match Rank::from_prefix(c) {
        Some(rank) => {
            ranks.set(rank, true);
            true
        }
        None => false,
    });
    (nick.split('!').next().unwrap_or(nick), ranks)
}

/// A nick or channel name case-folded as RFC 1459 does (`[]\~` are the upper case of
/// `{}|^`), the casemapping InspIRCd and most networks use.
pub(crate) fn fold(name: &str) -> String {
    name.chars()
        .map(|c| match c {
            '[' => '{',
            ']' => '}',
            '\\' => '|',
            '~' => '^',
            c => c.to_ascii_lowercase(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn members(lines: &[&str]) -> Members {
        let mut members = Members::default();
        for line in lines {
            let message: Message = line.parse().unwrap_or_else(|e| panic!("{line:?}: {e}"));
            members.observe(&message, "spellbot");
        }
        members
    }

    const JOINED: [&str; 2] = [
        ":spellbot!b@h JOIN #magic",
        ":irc.test 353 spellbot = #magic :~&owner @+op %half +voice plain @spellbot",
    ];

    #[test]
    fn names_give_each_member_their_prefixes() {
        let m = members(&JOINED);
        for nick in ["owner", "op", "half", "OP", "Half"] {
            assert!(m.is_operator("#magic", nick), "{nick}");
            assert!(m.is_operator("#MAGIC", nick), "{nick}");
        }
        for nick in ["voice", "plain", "stranger"] {
            assert!(!m.is_operator("#magic", nick), "{nick}");
        }
        assert!(!m.is_operator("#other", "op"));
    }

    #[test]
    fn a_member_is_found_by_nick_under_irc_case_rules_as_they_write_it() {
        let mut lines = JOINED.to_vec();
        lines.extend([":x!x@h JOIN #magic", ":x!x@h NICK :Dave[m]"]);
        let m = members(&lines);
        assert_eq!(m.nick_in("#MAGIC", "dave{M}"), Some("Dave[m]"));
        assert_eq!(m.nick_in("#magic", "PLAIN"), Some("plain"));
        assert_eq!(m.nick_in("#magic", "x"), None, "renamed");
        assert_eq!(m.nick_in("#other", "plain"), None);
    }

    #[test]
    fn userhost_in_names_is_cut_off() {
        let m = members(&[":irc.test 353 spellbot = #m :@op!o@host plain!p@host"]);
        assert!(m.is_operator("#m", "op"));
        assert!(!m.is_operator("#m", "plain"));
    }

    #[test]
    fn modes_grant_and_take_ranks() {
        let mut lines = JOINED.to_vec();
        lines.extend([
            ":op!o@h MODE #magic +o-o+b plain op *!*@bad",
            ":op!o@h MODE #magic +v half",
            ":op!o@h MODE #magic -h half",
            ":op!o@h MODE #magic -q owner",
        ]);
        let m = members(&lines);
        assert!(m.is_operator("#magic", "plain"));
        assert!(!m.is_operator("#magic", "op"));
        assert!(!m.is_operator("#magic", "half"), "voice alone is not a moderator");
        assert!(m.is_operator("#magic", "owner"), "still an admin");
    }

    #[test]
    fn a_nick_change_keeps_the_ranks_and_leaving_drops_them() {
        let mut lines = JOINED.to_vec();
        lines.extend([
            ":op!o@h NICK :Op[away]",
            ":half!h@h PART #magic :bye",
            ":half!h@h JOIN #magic",
            ":owner!o@h QUIT :gone",
        ]);
        let m = members(&lines);
        assert!(m.is_operator("#magic", "op{AWAY}"));
        assert!(!m.is_operator("#magic", "op"));
        assert!(!m.is_operator("#magic", "half"), "rejoined without a prefix");
        assert!(!m.is_operator("#magic", "owner"));
    }

    #[test]
    fn the_bots_own_part_or_kick_forgets_the_channel_and_a_rejoin_starts_afresh() {
        let mut lines = JOINED.to_vec();
        lines.extend([":op!o@h KICK #magic spellbot :out", ":spellbot!b@h JOIN #magic"]);
        let m = members(&lines);
        assert!(!m.is_operator("#magic", "op"), "the old list is gone");
        lines.push(":irc.test 353 spellbot = #magic :@op half");
        let m = members(&lines);
        assert!(m.is_operator("#magic", "op"));
        assert!(!m.is_operator("#magic", "half"));
        let m = members(&[JOINED[0], JOINED[1], ":spellbot!b@h PART #magic"]);
        assert!(!m.is_operator("#magic", "op"));
    }
}
