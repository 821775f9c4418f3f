//! The roll call (issue 17, item 3, across a restart): ghosts that outlived their IRC
//! users. While the daemon is down nobody sees who leaves an IRC channel, and a netsplit's
//! leaves held when it stopped ([`split`](super::split)) are never fired; so when the
//! first complete member list of a bridged channel arrives after the bot joins it
//! ([`Presence::Listed`](spellbridge_core::Presence::Listed): at every start, and after a
//! reconnect or a kick), it is called against the ghosts the homeserver says are joined to
//! the bridged Matrix room. A ghost of the channel's network in the room whose nick is
//! not on the list leaves; a nick on the list whose ghost is not in the room joins.
//!
//! Only that network's ghosts answer the call: the bot, real Matrix users and other
//! networks' ghosts are never touched. Which ghost a nick is comes from the [`Book`]
//! (with IRC's case rules, as everywhere); a ghost the book has under no network (its
//! file lost, or let go by a rename) is this network's when its id is the template's
//! with this network's name and with no other known network's
//! ([`Ghosts::is_ghost_of`]). Pure: the ghosts' runtime asks the homeserver, and makes
//! the ghosts leave and join as [`call`] says.

use std::collections::HashSet;

use super::book::Book;
use super::ghost::Ghosts;

/// What a roll call found: the ghosts to leave the room (user ids) and the nicks whose
/// ghosts are to join it.
#[derive(Debug, Default, PartialEq, Eq)]
pub(in crate::matrix) struct Called {
    pub(in crate::matrix) leave: Vec<String>,
    pub(in crate::matrix) join: Vec<String>,
}

/// The roll call of a room bridged with a channel on IRC network `network` whose complete
/// member list is `listed`, the homeserver saying `joined` (user ids) are in the room;
/// `bot` is the bot's user id.
pub(in crate::matrix) fn call(
    book: &Book,
    ghosts: &Ghosts,
    network: &str,
    bot: &str,
    listed: &[String],
    joined: &[String],
) -> Called {
    let answering: HashSet<String> = listed.iter().filter_map(|nick| book.known(network, nick)).collect();
    let others: Vec<String> = book.networks().into_iter().filter(|n| n != network).collect();
    let owners = book.owners();
    let ours = |user: &str| {
        if user == bot {
            return false;
        }
        match owners.get(user) {
            Some(owners) => owners.len() == 1 && owners[0] == network,
            None => {
                ghosts.is_ghost_of(network, user)
                    && !others.iter().any(|other| ghosts.is_ghost_of(other, user))
            }
        }
    };
    let leave = joined.iter().filter(|user| ours(user) && !answering.contains(*user)).cloned().collect();
    let present: HashSet<&str> = joined.iter().map(String::as_str).collect();
    let join = listed
        .iter()
        .filter(|nick| book.known(network, nick).is_none_or(|ghost| !present.contains(ghost.as_str())))
        .cloned()
        .collect();
    Called { leave, join }
}

#[cfg(test)]
mod tests {
    use super::super::ghost::{DEFAULT_NAME, DEFAULT_USER};
    use super::*;

    const BOT: &str = "@spellbridge:hs";

    fn ghosts() -> Ghosts {
        Ghosts::new(DEFAULT_USER, DEFAULT_NAME, "hs").expect("the defaults")
    }

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn ghosts_off_the_list_leave_and_listed_nicks_not_in_the_room_join() {
        let (book, ghosts) = (Book::new(None), ghosts());
        for nick in ["stayer", "quitter", "drifter", "newcomer"] {
            book.ghost(&ghosts, "irc", nick);
        }
        let joined = strings(&[
            "@irc_irc_stayer:hs",
            "@irc_irc_quitter:hs",
            "@irc_irc_drifter:hs",
            "@watcher:hs",
            BOT,
        ]);
        let called = call(&book, &ghosts, "irc", BOT, &strings(&["stayer", "newcomer", "unmade"]), &joined);
        assert_eq!(
            called,
            Called {
                leave: strings(&["@irc_irc_quitter:hs", "@irc_irc_drifter:hs"]),
                join: strings(&["newcomer", "unmade"]),
            }
        );
        let everyone = call(&book, &ghosts, "irc", BOT, &strings(&["stayer", "quitter", "drifter"]), &joined);
        assert_eq!(everyone, Called::default(), "nobody gone, nobody missing");
    }

    #[test]
    fn nicks_fold_by_irc_case_rules_and_a_renamed_nick_answers_for_its_first_ghost() {
        let (book, ghosts) = (Book::new(None), ghosts());
        book.ghost(&ghosts, "irc", "Bo[b]");
        book.ghost(&ghosts, "irc", "alice");
        book.renamed("irc", "alice", "Alicia");
        let joined = strings(&["@irc_irc_bo=5bb=5d:hs", "@irc_irc_alice:hs"]);
        // The server may write the same nicks another way: `[]` are `{}` in upper case.
        let called = call(&book, &ghosts, "irc", BOT, &strings(&["BO{B}", "ALICIA"]), &joined);
        assert_eq!(called, Called::default());
        let called = call(&book, &ghosts, "irc", BOT, &strings(&["bo{b}"]), &joined);
        assert_eq!(called.leave, strings(&["@irc_irc_alice:hs"]), "alicia is gone");
    }

    #[test]
    fn real_users_the_bot_and_other_networks_ghosts_are_never_called() {
        let (book, ghosts) = (Book::new(None), ghosts());
        book.ghost(&ghosts, "irc", "stayer");
        book.ghost(&ghosts, "oftc", "zed");
        book.ghost(&ghosts, "irc_b", "carol");
        let joined = strings(&[
            "@irc_irc_stayer:hs",
            "@irc_oftc_zed:hs",
            "@irc_oftc_unknown:hs",
            "@irc_irc_b_carol:hs",
            "@irc_irc_b_dave:hs",
            "@irc_irc_phantom:hs",
            "@irc_irc_phantom:elsewhere",
            "@irc_irc:hs",
            "@alice:hs",
            BOT,
        ]);
        let called = call(&book, &ghosts, "irc", BOT, &strings(&["stayer"]), &joined);
        // Only the phantom: a ghost of this network by its id that the book lost. Dave's
        // id would be this network's nick `b_dave` too, but network `irc_b` claims it.
        assert_eq!(called.leave, strings(&["@irc_irc_phantom:hs"]));
        let bot_in_namespace = "@irc_irc_bot:hs";
        let called = call(&book, &ghosts, "irc", bot_in_namespace, &[], &strings(&[bot_in_namespace]));
        assert!(called.leave.is_empty(), "the bot, even with a ghost's id");
        // A ghost id the book has under two networks (a template without `{network}`)
        // answers neither's call.
        let plain = Ghosts::new("@irc_{nick}:{server}", DEFAULT_NAME, "hs").expect("valid");
        let shared = Book::new(None);
        shared.ghost(&plain, "irc", "eve");
        shared.ghost(&plain, "oftc", "eve");
        let called = call(&shared, &plain, "irc", BOT, &[], &strings(&["@irc_eve:hs", "@irc_mallory:hs"]));
        assert!(called.leave.is_empty(), "{called:?}");
    }
}
