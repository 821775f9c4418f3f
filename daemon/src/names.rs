//! Player names people can read the same way: a new player's name (`!add bob`) may not
//! hide characters (control, zero-width, other invisible ones), turn the text around it
//! (bidi overrides and isolates) or pass for another name (mixed scripts, or letters of
//! another script that look like a Latin name, by Unicode's UTS #39 confusables).
//! A name is at most [`NAME_CHARS`] characters long. Wherever a name typed by someone is
//! echoed back, [`escaped`] writes such characters as `\u{…}` so they are seen, not
//! obeyed.

use std::collections::BTreeMap;

use spellbridge_core::locale::{self, Args};
use spellbridge_core::shown::{self, NAME_CHARS, is_bidi};
use spellbridge_core::{Language, PlayerId};
use unicode_security::MixedScript;
use unicode_security::confusable_detection::skeleton;

/// Why a name was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NameRefusal {
    /// Empty.
    #[error("a player's name cannot be empty")]
    Empty,
    /// Longer than [`NAME_CHARS`] characters.
    #[error("`{}` has {chars} characters, more than the {NAME_CHARS} a player's name may have; type one of at most {NAME_CHARS}", shown::name(.name))]
    TooLong {
        /// The name, as typed.
        name: String,
        /// How many characters it has.
        chars: usize,
    },
    /// A control character (a newline, a formatting code).
    #[error("`{}` has a control character ({})", escaped(.name), code(*.character))]
    Control {
        /// The name, as typed.
        name: String,
        /// The character.
        character: char,
    },
    /// A character that shows nothing (zero-width, a filler, a tag, a variation selector).
    #[error("`{}` has an invisible character ({})", escaped(.name), code(*.character))]
    Invisible {
        /// The name, as typed.
        name: String,
        /// The character.
        character: char,
    },
    /// A character that changes the direction of the text around it.
    #[error("`{}` has a character that reverses the text around it ({})", escaped(.name), code(*.character))]
    Bidi {
        /// The name, as typed.
        name: String,
        /// The character.
        character: char,
    },
    /// Letters of several scripts, or letters that pass for a Latin name.
    #[error("`{}` mixes look-alike letters of different scripts (it reads as `{}`)", escaped(.name), .looks_like)]
    LookAlike {
        /// The name, as typed.
        name: String,
        /// What it passes for.
        looks_like: String,
    },
}

impl NameRefusal {
    /// The refusal in `language` (the English is its `Display`), the name escaped.
    pub fn said(&self, language: Language) -> String {
        let named = |id: &str, name: &str, character: char| {
            locale::text(language, id, &Args::new().text("name", escaped(name)).text("code", code(character)))
        };
        match self {
            NameRefusal::Empty => locale::text(language, "names-empty", &Args::new()),
            NameRefusal::TooLong { name, chars } => locale::text(
                language,
                "names-too-long",
                &Args::new().text("name", shown::name(name)).num("count", *chars).num("max", NAME_CHARS),
            ),
            NameRefusal::Control { name, character } => named("names-control", name, *character),
            NameRefusal::Invisible { name, character } => named("names-invisible", name, *character),
            NameRefusal::Bidi { name, character } => named("names-bidi", name, *character),
            NameRefusal::LookAlike { name, looks_like } => locale::text(
                language,
                "names-look-alike",
                &Args::new().text("name", escaped(name)).text("looks", looks_like.as_str()),
            ),
        }
    }
}

/// Checks that `name` can be a new player's name.
pub fn readable(name: &str) -> Result<(), NameRefusal> {
    if name.is_empty() {
        return Err(NameRefusal::Empty);
    }
    let chars = name.chars().count();
    if chars > NAME_CHARS {
        return Err(NameRefusal::TooLong { name: name.to_owned(), chars });
    }
    for character in name.chars() {
        let owned = || name.to_owned();
        if character.is_control() {
            return Err(NameRefusal::Control { name: owned(), character });
        }
        if is_bidi(character) {
            return Err(NameRefusal::Bidi { name: owned(), character });
        }
        if is_invisible(character) || (character.is_whitespace() && character != ' ') {
            return Err(NameRefusal::Invisible { name: owned(), character });
        }
    }
    let looks_like: String = skeleton(name).collect();
    let passes_for_latin = !name.is_ascii() && looks_like.is_ascii();
    if !name.is_single_script() || passes_for_latin {
        return Err(NameRefusal::LookAlike { name: name.to_owned(), looks_like });
    }
    Ok(())
}

/// `text` with every control, invisible and direction-changing character written as
/// `\u{…}`, so echoing a name never hides or reorders anything: the one escaping every
/// network and picture shows names with ([`spellbridge_core::shown`]).
pub fn escaped(text: &str) -> String {
    spellbridge_core::shown::escaped(text)
}

/// How a player is shown wherever a name is read rather than pinged (chat on a network
/// where they have no identity, `!stats`, `!top`, board pictures, the site): `name` (their
/// display name, nick or linked player's name), with where they play only when `shared`
/// (someone else answers to it too): `carol (irc)`, `carol (@carol:example.org)`. Escaped
/// and cut as every shown name is ([`shown::name`]).
pub fn shown(player: &PlayerId, name: &str, shared: bool) -> String {
    if !shared {
        return shown::name(name);
    }
    let id = player.as_str();
    let place = if crate::identity::is_global_id(id) {
        id
    } else {
        id.split_once(':').map_or(id, |(network, _)| network)
    };
    if place == name {
        return shown::name(name);
    }
    format!("{} ({})", shown::name(name), shown::name(place))
}

/// [`shown`] for `player` among the names kept for the site (`names`: player → name):
/// their kept name, else the one their id gives, with where they play when another
/// player's kept name is the same (ignoring case).
pub fn shown_among(player: &PlayerId, names: &BTreeMap<PlayerId, String>) -> String {
    let name = names.get(player).map_or_else(|| crate::identity::local_part(player).to_owned(), Clone::clone);
    let folded = name.to_lowercase();
    let shared = names.iter().any(|(other, n)| other != player && n.to_lowercase() == folded);
    shown(player, &name, shared)
}

fn code(c: char) -> String {
    format!("U+{:04X}", u32::from(c))
}

/// Characters that show nothing: format characters, zero-width ones, fillers, tags and
/// variation selectors.
fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{034F}'
            | '\u{115F}'
            | '\u{1160}'
            | '\u{17B4}'
            | '\u{17B5}'
            | '\u{180B}'..='\u{180F}'
            | '\u{200B}'..='\u{200D}'
            | '\u{2028}'..='\u{2029}'
            | '\u{2060}'..='\u{2064}'
            | '\u{206A}'..='\u{206F}'
            | '\u{3164}'
            | '\u{FE00}'..='\u{FE0F}'
            | '\u{FEFF}'
            | '\u{FFA0}'
            | '\u{FFF9}'..='\u{FFFB}'
            | '\u{1D173}'..='\u{1D17A}'
            | '\u{E0000}'..='\u{E007F}'
            | '\u{E0100}'..='\u{E01EF}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_nicks_and_names_in_one_script_are_readable() {
        for name in ["bob", "Bob_2", "[away]bob", "a-b|c^d{e}", "@bob:example.org", "алиса", "小明"] {
            assert_eq!(readable(name), Ok(()), "{name}");
        }
    }

    #[test]
    fn hidden_reversing_and_look_alike_names_are_refused() {
        let zero_width = readable("bo\u{200B}b");
        assert!(
            matches!(zero_width, Err(NameRefusal::Invisible { character: '\u{200B}', .. })),
            "{zero_width:?}"
        );
        let bidi = readable("bob\u{202E}evil");
        assert!(matches!(bidi, Err(NameRefusal::Bidi { character: '\u{202E}', .. })), "{bidi:?}");
        assert!(matches!(readable("bo\nb"), Err(NameRefusal::Control { .. })));
        // Cyrillic а in a Latin name; a wholly Cyrillic name that reads as `alice`.
        assert!(matches!(readable("\u{0430}lice"), Err(NameRefusal::LookAlike { .. })));
        let cyrillic = readable("\u{0430}\u{04CF}\u{0456}\u{0441}\u{0435}");
        assert!(matches!(cyrillic, Err(NameRefusal::LookAlike { .. })), "{cyrillic:?}");
    }

    #[test]
    fn a_name_longer_than_the_cap_is_refused_with_its_length_and_the_cap() {
        assert_eq!(readable(&"名".repeat(NAME_CHARS)), Ok(()));
        let refused = readable(&"名".repeat(NAME_CHARS + 1));
        assert!(matches!(refused, Err(NameRefusal::TooLong { chars: 65, .. })), "{refused:?}");
        let said = refused.expect_err("too long").said(Language::En);
        assert!(
            said.contains("has 65 characters") && said.contains("at most 64") && said.contains('…'),
            "{said}"
        );
        let zh = readable(&"x".repeat(300)).expect_err("too long").said(Language::ZhCn);
        assert!(zh.contains("300") && zh.contains("64"), "{zh}");
    }

    #[test]
    fn a_player_is_shown_by_name_and_by_where_they_play_only_when_another_is_shown_alike() {
        let names: BTreeMap<PlayerId, String> = [
            (PlayerId::new("irc:carol"), "carol".to_owned()),
            (PlayerId::new("@carol:example.org"), "Carol".to_owned()),
            (PlayerId::new("@bob:localhost"), "bob".to_owned()),
        ]
        .into_iter()
        .collect();
        let shown = |id: &str| shown_among(&PlayerId::new(id), &names);
        assert_eq!(shown("@bob:localhost"), "bob");
        assert_eq!(shown("irc:carol"), "carol (irc)");
        assert_eq!(shown("@carol:example.org"), "Carol (@carol:example.org)");
        assert_eq!(shown("irc:dave"), "dave", "no name kept: the one their id gives");
        assert_eq!(shown("alice"), "alice", "a console name is itself");
        let sneaky =
            shown_among(&PlayerId::new("@x:hs"), &[(PlayerId::new("@x:hs"), "x\u{200b}".into())].into());
        assert_eq!(sneaky, "x\\u{200b}", "escaped");
    }

    #[test]
    fn escaping_shows_what_would_be_hidden() {
        assert_eq!(escaped("bob"), "bob");
        assert_eq!(escaped("bo\u{200B}b\u{202E}"), "bo\\u{200b}b\\u{202e}");
        let refusal = readable("bo\u{200B}b").expect_err("refused").to_string();
        assert!(refusal.contains("bo\\u{200b}b") && refusal.contains("U+200B"), "{refusal}");
    }
}
