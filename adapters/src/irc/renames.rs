//! Nick changes not yet reported: who each nick was when it last spoke, so the daemon can
//! carry a sender's command count over a NICK (a new nick must not be a fresh allowance).
//! Pure: the session feeds it NICK lines and asks at each message.

use std::collections::HashMap;

/// The most renames remembered; past it the oldest knowledge is dropped whole (a user
/// who renames that often between two messages gains one fresh count, no more).
const MOST: usize = 4096;

/// Current nick → the nick it had at its last message (or when first seen renaming).
#[derive(Clone, Debug, Default)]
pub struct Renames {
    earlier: HashMap<String, String>,
}

impl Renames {
    /// `old` is now called `new`.
    pub fn renamed(&mut self, old: &str, new: &str) {
        let first = self.earlier.remove(&fold(old)).unwrap_or_else(|| old.to_owned());
        if fold(&first) == fold(new) {
            return; // back to the name it last spoke under
        }
        if self.earlier.len() >= MOST {
            self.earlier.clear();
        }
        self.earlier.insert(fold(new), first);
    }

    /// `nick` speaks: the name it had when it last spoke, if it changed since.
    pub fn speaks(&mut self, nick: &str) -> Option<String> {
        self.earlier.remove(&fold(nick))
    }

    /// `nick` left the network.
    pub fn quit(&mut self, nick: &str) {
        self.earlier.remove(&fold(nick));
    }
}

/// Nicks compare without case (ASCII, as most networks' casemapping does for letters).
fn fold(nick: &str) -> String {
    nick.to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chain_of_renames_reports_the_name_last_heard() {
        let mut renames = Renames::default();
        renames.renamed("alice", "alice2");
        renames.renamed("alice2", "Alice3");
        assert_eq!(renames.speaks("alice3"), Some("alice".to_owned()));
        assert_eq!(renames.speaks("alice3"), None, "reported once");
        renames.renamed("bob", "bob_");
        renames.renamed("bob_", "bob");
        assert_eq!(renames.speaks("bob"), None, "back where it was");
        renames.renamed("carol", "c");
        renames.quit("c");
        assert_eq!(renames.speaks("c"), None);
    }
}
