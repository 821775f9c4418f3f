//! Which services account each user is logged in to, for networks whose messages do not
//! carry an `account` tag: learnt from `extended-join` (a JOIN names the account),
//! `account-notify` (`ACCOUNT name`, `ACCOUNT *` on logout) and WHOX replies to the
//! `WHO #channel %tna,152` the bot sends after joining. Pure: the session shows it every
//! message.
//!
//! Knowledge is kept only while the bot can see the user: a user who quits, or leaves
//! the last channel the bot shares with them, is forgotten, so whoever takes their nick
//! next is not taken for them.

use std::collections::HashMap;

use irc::client::prelude::{Command, Message};

use super::members::{Members, fold};

/// The WHOX query token the bot uses, to recognise its own replies.
pub const WHOX_TOKEN: &str = "152";

/// Nick (case-folded) → account (`None`: known to be logged out).
#[derive(Debug, Default)]
pub struct Accounts {
    by_nick: HashMap<String, Option<String>>,
}

/// `*` and `0` mean "no account" in JOIN, ACCOUNT and WHOX.
fn account(name: &str) -> Option<String> {
    (!name.is_empty() && name != "*" && name != "0").then(|| name.to_owned())
}

impl Accounts {
    /// Updates from one message; `members` is the channel lists after the same message.
    pub(crate) fn observe(&mut self, message: &Message, members: &Members) {
        let source = message.source_nickname().unwrap_or_default();
        match &message.command {
            Command::JOIN(_, Some(name), _) => {
                self.by_nick.insert(fold(source), account(name));
            }
            Command::ACCOUNT(name) => {
                self.by_nick.insert(fold(source), account(name));
            }
            // [our nick, token, nick, account]
            Command::Raw(code, args) if code == "354" => {
                if let [_, token, nick, name] = args.as_slice()
                    && token == WHOX_TOKEN
                {
                    self.by_nick.insert(fold(nick), account(name));
                }
            }
            Command::NICK(new) => {
                if let Some(known) = self.by_nick.remove(&fold(source)) {
                    self.by_nick.insert(fold(new), known);
                }
            }
            Command::QUIT(_) => {
                self.by_nick.remove(&fold(source));
            }
            Command::PART(_, _) if !members.present(source) => {
                self.by_nick.remove(&fold(source));
            }
            Command::KICK(_, nick, _) if !members.present(nick) => {
                self.by_nick.remove(&fold(nick));
            }
            _ => {}
        }
        // A message tagged with an account says so too.
        if let Some(name) = tag(message, "account")
            && !source.is_empty()
        {
            self.by_nick.insert(fold(source), account(&name));
        }
    }

    /// The account `nick` is logged in to, if known.
    pub fn of(&self, nick: &str) -> Option<&str> {
        self.by_nick.get(&fold(nick)).and_then(|a| a.as_deref())
    }

    /// What is known of `nick`'s account: `None` when nothing is, `Some(None)` when they
    /// are known to be logged out.
    pub fn known(&self, nick: &str) -> Option<Option<&str>> {
        self.by_nick.get(&fold(nick)).map(|a| a.as_deref())
    }

    /// Forgets everyone (the bot left every channel, or reconnected).
    pub fn clear(&mut self) {
        self.by_nick.clear();
    }
}

/// A message tag's value, if set and not empty.
pub fn tag(message: &Message, name: &str) -> Option<String> {
    message.tags.iter().flatten().find(|t| t.0 == name).and_then(|t| t.1.clone()).filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(accounts: &mut Accounts, members: &mut Members, line: &str) {
        let message: Message = line.parse().unwrap_or_else(|e| panic!("{line:?}: {e}"));
        members.observe(&message, "spellbot");
        accounts.observe(&message, members);
    }

    #[test]
    fn accounts_come_from_extended_join_account_notify_and_whox() {
        let (mut accounts, mut members) = (Accounts::default(), Members::default());
        feed(&mut accounts, &mut members, ":spellbot!b@h JOIN #magic * :bot");
        feed(&mut accounts, &mut members, ":alice!a@h JOIN #magic alice :Alice");
        feed(&mut accounts, &mut members, ":server 354 spellbot 152 bob bobacct");
        feed(&mut accounts, &mut members, ":server 354 spellbot 152 carol 0");
        assert_eq!(accounts.of("Alice"), Some("alice"));
        assert_eq!(accounts.of("bob"), Some("bobacct"));
        assert_eq!(accounts.of("carol"), None);
        assert_eq!(accounts.known("carol"), Some(None), "known to be logged out");
        assert_eq!(accounts.known("dave"), None, "not known yet");
        feed(&mut accounts, &mut members, ":carol!c@h ACCOUNT carol");
        assert_eq!(accounts.of("carol"), Some("carol"));
        feed(&mut accounts, &mut members, ":carol!c@h ACCOUNT *");
        assert_eq!(accounts.of("carol"), None);
        feed(&mut accounts, &mut members, ":alice!a@h NICK alicia");
        assert_eq!((accounts.of("alice"), accounts.of("alicia")), (None, Some("alice")));
    }

    #[test]
    fn a_nick_taken_after_its_owner_left_is_not_their_account() {
        let (mut accounts, mut members) = (Accounts::default(), Members::default());
        feed(&mut accounts, &mut members, ":spellbot!b@h JOIN #magic * :bot");
        feed(&mut accounts, &mut members, ":alice!a@h JOIN #magic alice :Alice");
        feed(&mut accounts, &mut members, ":alice!a@h QUIT :bye");
        assert_eq!(accounts.of("alice"), None);
        feed(&mut accounts, &mut members, ":alice!a@h JOIN #magic alice :Alice");
        feed(&mut accounts, &mut members, ":alice!a@h PART #magic");
        assert_eq!(accounts.of("alice"), None, "gone from every shared channel");
    }
}
