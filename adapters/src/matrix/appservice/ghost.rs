//! Ghost users' names (issue 17, item 1): each IRC nick in a bridged channel is a Matrix
//! user of the appservice, named by a template (default [`DEFAULT_USER`],
//! `@irc_{network}_{nick}:{server}`, shown as [`DEFAULT_NAME`], `{nick} (IRC)`, the
//! nick marked as relayed lines mark it: [`Ghosts::marked_name`]). What
//! goes into a user id is lowercased and escaped to the user-id grammar (`a-z`, `0-9`,
//! `.`, `_`, `=`, `-`, `/`, `+`), so every homeserver accepts it: any other character
//! becomes `=` and its UTF-8 bytes in hex (`[m]` → `=5bm=5d`), `=` itself `=3d`. Nothing
//! here does I/O.

/// The default ghost user id template.
pub const DEFAULT_USER: &str = "@irc_{network}_{nick}:{server}";
/// The default ghost display name template.
pub const DEFAULT_NAME: &str = "{nick} (IRC)";

/// The ghost templates, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ghosts {
    /// `@…{nick}…:{server}`.
    user: String,
    /// The display name, with `{nick}` (and maybe `{network}`).
    name: String,
    /// The homeserver's name (the bot's server).
    server: String,
}

impl Ghosts {
    /// Checks the templates: the user template must be `@localpart:{server}` with
    /// `{nick}` in the localpart, the name template must name `{nick}`. The error says
    /// what to write.
    pub fn new(user: &str, name: &str, server: &str) -> Result<Ghosts, String> {
        let Some(localpart) = user.strip_prefix('@').and_then(|rest| rest.strip_suffix(":{server}")) else {
            return Err(format!(
                "ghost_user `{user}` must be a user id template ending in `:{{server}}`, e.g. ghost_user = \"{DEFAULT_USER}\""
            ));
        };
        if !localpart.contains("{nick}") {
            return Err(format!(
                "ghost_user `{user}` must contain `{{nick}}`, e.g. ghost_user = \"{DEFAULT_USER}\""
            ));
        }
        let fixed = localpart.replace("{nick}", "").replace("{network}", "");
        if fixed.is_empty() || fixed.contains(['{', '}']) || escape(&fixed) != fixed {
            return Err(format!(
                "ghost_user `{user}` needs a fixed part of lowercase letters, digits or `._=-/+` besides \
                 `{{network}}` and `{{nick}}` (so that no real user's id is taken), e.g. ghost_user = \"{DEFAULT_USER}\""
            ));
        }
        if !name.contains("{nick}") {
            return Err(format!(
                "ghost_name `{name}` must contain `{{nick}}`, e.g. ghost_name = \"{DEFAULT_NAME}\""
            ));
        }
        Ok(Ghosts { user: user.to_owned(), name: name.to_owned(), server: server.to_owned() })
    }

    /// The user id template, as configured.
    pub fn template(&self) -> &str {
        &self.user
    }

    /// The ghost of `nick` on IRC network `network`: its full user id.
    pub fn user_id(&self, network: &str, nick: &str) -> String {
        self.user
            .replace("{network}", &escape(network))
            .replace("{nick}", &escape(nick))
            .replace("{server}", &self.server)
    }

    /// The `n`th ghost made for `nick` (from 2: when the first's id is held by someone
    /// who was `nick` and changed names): its user id with `.n` after the nick, which no
    /// nick's own id has (IRC nicks have no `.`).
    pub fn numbered_user_id(&self, network: &str, nick: &str, n: u32) -> String {
        if n < 2 {
            return self.user_id(network, nick);
        }
        self.user
            .replace("{network}", &escape(network))
            .replace("{nick}", &format!("{}.{n}", escape(nick)))
            .replace("{server}", &self.server)
    }

    /// The display name of `nick`'s ghost.
    pub fn display_name(&self, network: &str, nick: &str) -> String {
        self.marked_name(network, nick, false, false)
    }

    /// The display name of `nick`'s ghost with the marks its relayed lines carry (issue
    /// 29, item 3; [`spellbridge_core::shown::marked`]): `alice? (IRC)` when not logged in
    /// where the network has accounts, `alice/libera (IRC)` when `network_named` (the
    /// bridge joins another network with its own alice) and the template does not name
    /// the network already.
    pub fn marked_name(&self, network: &str, nick: &str, guest: bool, network_named: bool) -> String {
        let named_network = network_named && !self.name.contains("{network}");
        let marked = spellbridge_core::shown::marked(nick, guest, named_network.then_some(network));
        self.name.replace("{network}", network).replace("{nick}", &marked)
    }

    /// The registration's exclusive user namespace: a regex that matches every ghost's
    /// user id (any network, any nick) and nothing that lacks the template's fixed parts.
    pub fn namespace(&self) -> String {
        let mut regex = String::from("^");
        let mut rest = self.user.as_str();
        while let Some(start) = rest.find('{') {
            regex.push_str(&regex_escape(&rest[..start]));
            let end = rest[start..].find('}').map_or(rest.len(), |e| start + e + 1);
            match &rest[start..end] {
                "{server}" => regex.push_str(&regex_escape(&self.server)),
                _ => regex.push_str("[a-z0-9._=/+-]+"),
            }
            rest = &rest[end..];
        }
        regex.push_str(&regex_escape(rest));
        regex.push('$');
        regex
    }

    /// Whether `user` is one of the ghosts (a message from one is the bridge's own).
    pub fn is_ghost(&self, user: &str) -> bool {
        let Some(localpart) = self.user.strip_prefix('@').and_then(|l| l.strip_suffix(":{server}")) else {
            return false;
        };
        let Some(theirs) = user.strip_prefix('@').and_then(|u| u.strip_suffix(&format!(":{}", self.server)))
        else {
            return false;
        };
        matches_template(localpart, theirs)
    }

    /// Whether `user` is, by its id, a ghost of IRC network `network`: the template with
    /// that network's name matches it. False when the template does not name the network
    /// (its ghosts' ids do not say which network they are of).
    pub fn is_ghost_of(&self, network: &str, user: &str) -> bool {
        let Some(localpart) = self.user.strip_prefix('@').and_then(|l| l.strip_suffix(":{server}")) else {
            return false;
        };
        let Some(theirs) = user.strip_prefix('@').and_then(|u| u.strip_suffix(&format!(":{}", self.server)))
        else {
            return false;
        };
        localpart.contains("{network}")
            && matches_template(&localpart.replace("{network}", &escape(network)), theirs)
    }
}

/// Whether `text` is `template` with each `{…}` standing for one or more characters.
fn matches_template(template: &str, text: &str) -> bool {
    match template.find('{') {
        None => template == text,
        Some(start) => {
            let Some(prefix_rest) = text.strip_prefix(&template[..start]) else { return false };
            let after = template[start..].find('}').map_or(template.len(), |e| start + e + 1);
            let template_rest = &template[after..];
            (1..=prefix_rest.len())
                .filter(|cut| prefix_rest.is_char_boundary(*cut))
                .any(|cut| matches_template(template_rest, &prefix_rest[cut..]))
        }
    }
}

/// `text` lowercased and escaped to the user-id grammar: `a-z0-9._-/+` kept, ASCII
/// capitals lowercased, `=` and everything else as `=` and two hex digits per UTF-8 byte.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let c = c.to_ascii_lowercase();
        if matches!(c, 'a'..='z' | '0'..='9' | '.' | '_' | '-' | '/' | '+') {
            out.push(c);
        } else {
            let mut bytes = [0u8; 4];
            for byte in c.encode_utf8(&mut bytes).bytes() {
                out.push_str(&format!("={byte:02x}"));
            }
        }
    }
    out
}

/// `text` with the regex metacharacters escaped.
pub(super) fn regex_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if "\\.+*?()|[]{}^$#&-~".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ghosts() -> Ghosts {
        Ghosts::new(DEFAULT_USER, DEFAULT_NAME, "example.org").expect("the defaults")
    }

    #[test]
    fn nicks_are_lowercased_and_escaped_to_the_user_id_grammar() {
        let ghosts = ghosts();
        assert_eq!(ghosts.user_id("libera", "Alice"), "@irc_libera_alice:example.org");
        assert_eq!(
            ghosts.user_id("Libera Chat", "[m]ax|away"),
            "@irc_libera=20chat_=5bm=5dax=7caway:example.org"
        );
        assert_eq!(ghosts.user_id("l", "a=b_c-d"), "@irc_l_a=3db_c-d:example.org");
        assert_eq!(ghosts.user_id("l", "é"), "@irc_l_=c3=a9:example.org");
        assert_eq!(ghosts.display_name("libera", "Alice"), "Alice (IRC)");
        assert_eq!(ghosts.marked_name("libera", "Alice", true, false), "Alice? (IRC)");
        assert_eq!(ghosts.marked_name("libera", "Alice", false, true), "Alice/libera (IRC)");
        assert_eq!(ghosts.marked_name("libera", "Alice", true, true), "Alice?/libera (IRC)");
        let named = Ghosts::new(DEFAULT_USER, "{nick} ({network})", "example.org").expect("valid");
        assert_eq!(named.marked_name("libera", "Alice", true, true), "Alice? (libera)", "named once");
        assert_eq!(ghosts.numbered_user_id("libera", "Alice", 1), "@irc_libera_alice:example.org");
        assert_eq!(ghosts.numbered_user_id("libera", "Alice", 2), "@irc_libera_alice.2:example.org");
        assert!(ghosts.is_ghost(&ghosts.numbered_user_id("libera", "Alice", 2)));
        for nick in ["Alice", "[m]ax|away", "é", "a=b", "^_^", "x`y\\z{}"] {
            let id = ghosts.user_id("libera", nick);
            let localpart = id.trim_start_matches('@').split(':').next().unwrap_or_default();
            assert!(
                localpart
                    .chars()
                    .all(|c| matches!(c, 'a'..='z' | '0'..='9' | '.' | '_' | '=' | '-' | '/' | '+')),
                "{id}"
            );
            assert!(ghosts.is_ghost(&id), "{id}");
        }
    }

    #[test]
    fn the_namespace_matches_ghosts_and_not_other_users() {
        let ghosts = ghosts();
        assert_eq!(ghosts.namespace(), "^@irc_[a-z0-9._=/+-]+_[a-z0-9._=/+-]+:example\\.org$");
        assert!(!ghosts.is_ghost("@alice:example.org"));
        assert!(!ghosts.is_ghost("@irc_libera_alice:elsewhere.org"));
        assert!(!ghosts.is_ghost("@irc_libera:example.org"), "the nick part is missing");
        assert!(ghosts.is_ghost("@irc_libera_alice:example.org"));
    }

    #[test]
    fn a_ghost_is_of_the_network_its_id_names_and_a_template_without_one_names_none() {
        let ghosts = ghosts();
        let alice = ghosts.user_id("Libera Chat", "[m]ax");
        assert!(ghosts.is_ghost_of("Libera Chat", &alice));
        assert!(!ghosts.is_ghost_of("oftc", &alice));
        assert!(!ghosts.is_ghost_of("libera", "@alice:example.org"), "a real user");
        assert!(!ghosts.is_ghost_of("libera", "@irc_libera_alice:elsewhere.org"), "another server");
        assert!(ghosts.is_ghost_of("libera", &ghosts.numbered_user_id("libera", "bob", 2)));
        let plain = Ghosts::new("@irc_{nick}:{server}", DEFAULT_NAME, "example.org").expect("valid");
        assert!(!plain.is_ghost_of("libera", &plain.user_id("libera", "alice")), "cannot tell");
    }

    #[test]
    fn templates_without_a_nick_or_a_fixed_part_are_refused_with_what_to_write() {
        for (user, wanted) in [
            ("@{nick}:{server}", "fixed part"),
            ("@irc_{network}:{server}", "must contain `{nick}`"),
            ("@irc_{nick}:example.org", "ending in `:{server}`"),
            ("@IRC_{nick}:{server}", "fixed part"),
        ] {
            let error = Ghosts::new(user, DEFAULT_NAME, "hs").expect_err(user);
            assert!(error.contains(wanted) && error.contains(DEFAULT_USER), "{user}: {error}");
        }
        let error = Ghosts::new(DEFAULT_USER, "IRC person", "hs").expect_err("no nick in the name");
        assert!(error.contains("ghost_name"), "{error}");
        assert!(Ghosts::new("@irc_{nick}:{server}", DEFAULT_NAME, "hs").is_ok());
    }
}
