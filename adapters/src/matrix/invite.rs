//! The invite allow-list: whose room invites the bot accepts.
//!
//! Entries are exact user ids (`@alice:example.org`), `*:server` (anyone whose id ends in
//! that server name, port included when it has one), or `*` (anyone). User ids always
//! have a server part, unlike room ids of room version 12, so splitting one is safe.

use std::collections::BTreeSet;

/// A parsed allow-list. Entries that are none of the three forms are ignored (and
/// reported by [`InviteAllow::rejected`], so the daemon's config check can name them).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InviteAllow {
    users: BTreeSet<String>,
    servers: BTreeSet<String>,
    anyone: bool,
    rejected: Vec<String>,
}

impl InviteAllow {
    /// Parses the entries.
    pub fn new(entries: &[String]) -> Self {
        let mut allow = InviteAllow::default();
        for entry in entries {
            let entry = entry.trim();
            if entry == "*" {
                allow.anyone = true;
            } else if let Some(server) = entry.strip_prefix("*:").filter(|s| !s.is_empty()) {
                allow.servers.insert(server.to_ascii_lowercase());
            } else if entry.starts_with('@') && entry.contains(':') {
                allow.users.insert(entry.to_owned());
            } else {
                allow.rejected.push(entry.to_owned());
            }
        }
        allow
    }

    /// Whether an invite from this user is accepted.
    pub fn allows(&self, user_id: &str) -> bool {
        if self.anyone || self.users.contains(user_id) {
            return true;
        }
        match user_id.strip_prefix('@').and_then(|rest| rest.split_once(':')) {
            Some((_, server)) => self.servers.contains(&server.to_ascii_lowercase()),
            None => false,
        }
    }

    /// Entries that were not a user id, `*:server` or `*`.
    pub fn rejected(&self) -> &[String] {
        &self.rejected
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allow(entries: &[&str]) -> InviteAllow {
        InviteAllow::new(&entries.iter().map(|e| (*e).to_owned()).collect::<Vec<_>>())
    }

    #[test]
    fn exact_user_ids_match_only_themselves() {
        let list = allow(&["@alice:example.org"]);
        assert!(list.allows("@alice:example.org"));
        assert!(!list.allows("@alice2:example.org"));
        assert!(!list.allows("@bob:example.org"));
    }

    #[test]
    fn server_patterns_match_the_whole_server_part_with_its_port() {
        let list = allow(&["*:example.org", "*:localhost:8448"]);
        assert!(list.allows("@bob:example.org"));
        assert!(list.allows("@bob:EXAMPLE.org"));
        assert!(list.allows("@carol:localhost:8448"));
        assert!(!list.allows("@carol:localhost"));
        assert!(!list.allows("@eve:evil-example.org"));
        assert!(!list.allows("@eve:example.org.evil"));
        assert!(!list.allows("not-a-user-id"));
    }

    #[test]
    fn a_star_allows_everyone_and_an_empty_list_nobody() {
        assert!(allow(&["*"]).allows("@anyone:anywhere"));
        assert!(!allow(&[]).allows("@anyone:anywhere"));
    }

    #[test]
    fn odd_entries_are_reported_not_matched() {
        let list = allow(&["alice", "*:", "#room:server"]);
        assert_eq!(list.rejected(), ["alice", "*:", "#room:server"]);
        assert!(!list.allows("@alice:server"));
    }
}
