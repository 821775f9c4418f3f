//! Which ghost each IRC nick is (issue 17, item 3), kept in the store directory
//! (`ghosts.json`, written atomically like the rest of the store) so that it outlives a
//! restart. A nick's ghost is made from the template the first time it is needed; a
//! nick change moves the ghost to the new nick (its user id keeps the nick it was made
//! with, its display name follows). A nick keeps its ghost after a quit (the next user of
//! the nick is that ghost again, as IRC knows people by nick). When a nick's own id is
//! held by someone who renamed away from it, the nick gets the next free numbered one
//! (`@irc_net_bob.2:server`).
//! Nicks are compared with IRC's case rules.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::ghost::Ghosts;
use crate::irc::members::fold;
use crate::matrix::store::{read_optional, write_atomically};
use crate::matrix::transport::lock;

/// Network → folded nick → the ghost's user id.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Kept {
    ghosts: BTreeMap<String, BTreeMap<String, String>>,
}

/// The nick → ghost map, read from its file when first needed.
pub(in crate::matrix) struct Book {
    path: Option<PathBuf>,
    kept: Mutex<Option<Kept>>,
}

/// A nick's ghost, and whether it was just made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::matrix) struct Found {
    pub(in crate::matrix) user_id: String,
    pub(in crate::matrix) new: bool,
}

impl Book {
    /// The map kept in `path` (`None`: in memory only, for tests).
    pub(in crate::matrix) fn new(path: Option<PathBuf>) -> Self {
        Book { path, kept: Mutex::new(None) }
    }

    /// The ghost of `nick` on `network`, made (and kept) if it has none.
    pub(in crate::matrix) fn ghost(&self, ghosts: &Ghosts, network: &str, nick: &str) -> Found {
        self.with(|kept| {
            let nicks = kept.ghosts.entry(network.to_owned()).or_default();
            if let Some(user_id) = nicks.get(&fold(nick)) {
                return (Found { user_id: user_id.clone(), new: false }, false);
            }
            let user_id = (1..)
                .map(|n| ghosts.numbered_user_id(network, nick, n))
                .find(|id| !nicks.values().any(|held| held == id))
                .unwrap_or_else(|| ghosts.user_id(network, nick));
            nicks.insert(fold(nick), user_id.clone());
            (Found { user_id, new: true }, true)
        })
    }

    /// The ghost `nick` on `network` has, if any.
    pub(in crate::matrix) fn known(&self, network: &str, nick: &str) -> Option<String> {
        self.with(|kept| (kept.ghosts.get(network).and_then(|n| n.get(&fold(nick))).cloned(), false))
    }

    /// Each ghost's user id, with the networks whose nicks have it.
    pub(in crate::matrix) fn owners(&self) -> std::collections::HashMap<String, Vec<String>> {
        self.with(|kept| {
            let mut owners = std::collections::HashMap::<String, Vec<String>>::new();
            for (network, nicks) in &kept.ghosts {
                for user_id in nicks.values() {
                    owners.entry(user_id.clone()).or_default().push(network.clone());
                }
            }
            (owners, false)
        })
    }

    /// The networks the map has ghosts of.
    pub(in crate::matrix) fn networks(&self) -> Vec<String> {
        self.with(|kept| (kept.ghosts.keys().cloned().collect(), false))
    }

    /// `from` is now called `to`: its ghost goes with it (a ghost `to` had is let go).
    /// Returns the ghost, if `from` had one.
    pub(in crate::matrix) fn renamed(&self, network: &str, from: &str, to: &str) -> Option<String> {
        self.with(|kept| {
            let nicks = kept.ghosts.entry(network.to_owned()).or_default();
            match nicks.remove(&fold(from)) {
                Some(user_id) => {
                    nicks.insert(fold(to), user_id.clone());
                    (Some(user_id), true)
                }
                None => (None, false),
            }
        })
    }

    /// Reads or changes the map; `write` (the second value) keeps it in the file.
    fn with<T>(&self, change: impl FnOnce(&mut Kept) -> (T, bool)) -> T {
        let mut kept = lock(&self.kept);
        let kept = kept.get_or_insert_with(|| {
            let text = self.path.as_deref().and_then(|p| read_optional(p).ok().flatten()).unwrap_or_default();
            serde_json::from_str(&text).unwrap_or_default()
        });
        let (value, write) = change(kept);
        if write && let Some(path) = &self.path {
            let text = serde_json::to_string(&*kept).unwrap_or_default();
            if let Err(error) = write_atomically(path, text.as_bytes()) {
                tracing::warn!(%error, "could not keep which ghost each IRC nick is; after a restart a renamed nick gets a new ghost");
            }
        }
        value
    }
}

#[cfg(test)]
mod tests {
    use super::super::ghost::{DEFAULT_NAME, DEFAULT_USER};
    use super::*;

    fn ghosts() -> Ghosts {
        Ghosts::new(DEFAULT_USER, DEFAULT_NAME, "hs").expect("the defaults")
    }

    #[test]
    fn a_renamed_nick_keeps_its_ghost_across_a_restart_and_the_old_nick_gets_a_numbered_one() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let path = dir.path().join("ghosts.json");
        let ghosts = ghosts();
        let book = Book::new(Some(path.clone()));
        let bob = book.ghost(&ghosts, "irc", "Bob");
        assert_eq!(bob, Found { user_id: "@irc_irc_bob:hs".into(), new: true });
        assert!(!book.ghost(&ghosts, "irc", "BOB").new, "IRC case rules");
        assert_eq!(book.renamed("irc", "bob", "Robert").as_deref(), Some("@irc_irc_bob:hs"));
        let book = Book::new(Some(path));
        assert_eq!(book.known("irc", "robert").as_deref(), Some("@irc_irc_bob:hs"), "kept in the file");
        assert_eq!(book.known("irc", "bob"), None);
        let newcomer = book.ghost(&ghosts, "irc", "bob");
        assert_eq!(newcomer.user_id, "@irc_irc_bob.2:hs", "the plain id is Robert's");
        assert_eq!(book.renamed("irc", "Robert", "bob").as_deref(), Some("@irc_irc_bob:hs"), "back to bob");
        assert_eq!(book.ghost(&ghosts, "irc", "bob").user_id, "@irc_irc_bob:hs");
        assert_eq!(book.renamed("irc", "nobody", "x"), None);
        assert_eq!(book.ghost(&ghosts, "other", "bob").user_id, "@irc_other_bob:hs");
    }
}
