//! Who a relayed line says spoke: the speaker's name made safe to show on another
//! network, and marked with their id where the name alone could pass for someone else.
//!
//! A display name is whatever its owner typed. Shown as it is, a newline in it would start
//! a bare line on IRC, an IRC formatting code or a bidi override would disguise it, a `>`
//! would end the `<name>` early, and a Matrix display name "alice" would read exactly as the
//! IRC nick alice. So a name is cleaned ([`clean`]) and, when another identity answers to
//! the same name, shown with its id ([`shown`]): `alice (@alice:evil.org)`.
//!
//! Two IRC networks in one bridge each have their own alice, and a nick nobody logged in
//! to is not its account's owner: such speakers are marked ([`Marks`], issue 29 item 3),
//! `alice/libera` for the network, `alice?` for no login where the network has accounts,
//! `alice?/libera` for both ([`spellbridge_core::shown::marked`]); a name that ends as a
//! mark does (a Matrix display name `alice/libera` or `alice?`) is shown with its id
//! ([`forges_mark`]).

use spellbridge_core::NetworkId;

/// What a relayed line adds after its speaker's name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Marks {
    /// Not logged in where the network has accounts (`alice?`).
    pub guest: bool,
    /// The speaker's network is named (`alice/libera`): the bridge joins another network
    /// where the same name is someone else.
    pub network: bool,
}

/// Whether `name` (of a speaker the relay does not mark) ends as a marked name does: with
/// `?`, or with `/` and the name of one of `networks`, ignoring case.
pub fn forges_mark<'n>(name: &str, mut networks: impl Iterator<Item = &'n NetworkId>) -> bool {
    let lower = name.to_lowercase();
    lower.ends_with('?')
        || networks.any(|network| {
            lower
                .strip_suffix(&network.as_str().to_lowercase())
                .is_some_and(|rest| rest.ends_with('/') && rest.len() > 1)
        })
}

/// The longest name shown, in characters; a longer one is cut with `…`.
pub const NAME_CHARS: usize = 48;
/// The longest name shown, in bytes (`…` included), so a line's speaker leaves it room.
pub const NAME_BYTES: usize = 64;

/// Characters that are not text a reader sees but change how the text around them reads:
/// zero-width characters, joiners, bidi marks, embeddings, overrides and isolates, the
/// invisible operators, the byte-order mark and the interlinear annotation marks (the
/// format characters, Unicode category Cf, that matter in chat), and the line and
/// paragraph separators.
fn invisible(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{061C}'
            | '\u{180E}'
            | '\u{200B}'..='\u{200F}'
            | '\u{2028}'..='\u{202E}'
            | '\u{2060}'..='\u{206F}'
            | '\u{FEFF}'
            | '\u{FFF9}'..='\u{FFFB}'
            | '\u{E0000}'..='\u{E007F}'
    )
}

/// A name fit to show at the start of a relayed line: control characters (newlines,
/// carriage returns, IRC formatting codes, and every other C0 and C1 code), invisible and
/// bidi characters, and the angle brackets that frame it (`<name>`) removed; runs of
/// white space made one space; at most [`NAME_CHARS`] characters. `fallback` (the
/// speaker's id) stands in when nothing is left.
pub fn clean(name: &str, fallback: &str) -> String {
    [scrub(name), scrub(fallback)].into_iter().find(|n| !n.is_empty()).unwrap_or_else(|| String::from("?"))
}

/// `name` with what [`clean`] removes removed, and cut to [`NAME_CHARS`]; maybe empty.
fn scrub(name: &str) -> String {
    let kept: String = name
        .chars()
        .map(|c| if c.is_whitespace() { ' ' } else { c })
        .filter(|c| !c.is_control() && !invisible(*c) && !matches!(c, '<' | '>'))
        .collect();
    let joined = kept.split(' ').filter(|w| !w.is_empty()).collect::<Vec<_>>().join(" ");
    if joined.chars().count() <= NAME_CHARS && joined.len() <= NAME_BYTES {
        return joined;
    }
    let mut cut = String::new();
    for c in joined.chars().take(NAME_CHARS - 1) {
        if cut.len() + c.len_utf8() + '…'.len_utf8() > NAME_BYTES {
            break;
        }
        cut.push(c);
    }
    cut.push('…');
    cut
}

/// The name a relayed line shows for a speaker whose (clean) name is `name` and whose id
/// is `id`: the name, or `name (id)` when `taken` (another identity in the bridge answers
/// to the same name, or it is a nick on another network) and the id is not the name
/// itself; the id is cleaned as a name is (so at most [`NAME_BYTES`] long).
pub fn shown(name: &str, id: &str, taken: bool) -> String {
    if taken && !name.eq_ignore_ascii_case(id) {
        format!("{name} ({})", clean(id, "?"))
    } else {
        name.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newlines_formatting_codes_and_bidi_overrides_are_removed_from_names() {
        assert_eq!(clean("Bob\n<alice> I concede", "@bob:hs"), "Bob alice I concede");
        assert_eq!(clean("Bo\r\nb", "@bob:hs"), "Bo b");
        assert_eq!(clean("\x02al\x0304ice\x0f\x1d\x1f\x16\x11", "@x:hs"), "al04ice");
        assert_eq!(clean("\u{202E}ecila\u{202C}", "@x:hs"), "ecila");
        assert_eq!(clean("a\u{200B}l\u{2066}i\u{FEFF}ce\u{2029}x", "@x:hs"), "alice x");
        assert_eq!(clean("  many \t  spaces\u{85} ", "@x:hs"), "many spaces");
        assert_eq!(clean("<3 lover>", "@x:hs"), "3 lover");
    }

    #[test]
    fn an_empty_or_invisible_name_falls_back_to_the_id_and_a_long_one_is_cut() {
        assert_eq!(clean("\u{200B}\n ", "@bob:hs"), "@bob:hs");
        assert_eq!(clean("", ""), "?");
        let long = clean(&"x".repeat(200), "@x:hs");
        assert_eq!(long.chars().count(), NAME_CHARS);
        assert!(long.ends_with('…'));
        let wide = clean(&"名".repeat(40), "@x:hs");
        assert!(wide.len() <= NAME_BYTES && wide.ends_with('…'), "{wide}");
    }

    #[test]
    fn a_name_ending_as_a_mark_does_is_a_forgery_and_others_are_not() {
        let networks = [NetworkId::new("libera"), NetworkId::new("oftc")];
        for forged in ["alice/libera", "alice/OFTC", "alice?", "alice?/libera", "who?"] {
            assert!(forges_mark(forged, networks.iter()), "{forged}");
        }
        for fine in ["alice", "alice/elsewhere", "a/b c", "/libera", "libera", "alice?!"] {
            assert!(!forges_mark(fine, networks.iter()), "{fine}");
        }
    }

    #[test]
    fn a_taken_name_shows_its_id_and_a_name_that_is_its_id_does_not() {
        assert_eq!(shown("alice", "@alice:evil.org", true), "alice (@alice:evil.org)");
        assert_eq!(shown("alice", "@alice:evil.org", false), "alice");
        assert_eq!(shown("alice", "Alice", true), "alice", "an IRC nick is its own id");
    }
}
