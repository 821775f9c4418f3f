//! Names as every network shows them (issue 29, item 4): a name someone chose (a Matrix
//! display name, a nick, a name typed in `!add`) may hold characters that show nothing
//! or turn the text around them, so that `carol\u{200b}` passes for `carol` or a
//! `U+202E` makes "bob wins" read backwards. [`name`] writes every such character as
//! `\u{…}` (the same form the refusals have always echoed names in) and cuts a name
//! longer than [`NAME_CHARS`] with `…`; [`escaped`] does the first for any text.
//!
//! Escaped: the C0 and C1 controls (Unicode Cc), every format character (Cf: bidi marks,
//! embeddings, overrides and isolates, zero-width spaces and joiners, the invisible
//! operators, the soft hyphen, the byte-order mark, tags, …), the line and paragraph
//! separators, fillers that draw nothing (Hangul fillers, the combining grapheme joiner,
//! Khmer's invisible vowels), and variation selectors that follow no character they can
//! vary. A variation selector after a letter or symbol and a zero-width joiner between
//! two emoji stay as they are, so `❤️` and `👩‍💻` show as emoji. Pure: no I/O.

/// The most characters a name is shown with; a longer one is cut to this many, the last
/// being `…`.
pub const NAME_CHARS: usize = 64;

/// `name` with the marks that keep two speakers from looking alike on a bridge (issue
/// 29, item 3): `?` when the speaker is not logged in on a network with accounts, then
/// `/network` when the bridge joins another network where the same name is someone
/// else: `alice?/libera`. No IRC nick can hold `?` or `/`, so a mark is never a nick.
pub fn marked(name: &str, guest: bool, network: Option<&str>) -> String {
    let mut out = name.to_owned();
    if guest {
        out.push('?');
    }
    if let Some(network) = network {
        out.push('/');
        out.push_str(network);
    }
    out
}

/// `name` as it is shown anywhere: [`escaped`], then cut to [`NAME_CHARS`] characters
/// (ending in `…`) when longer. An escape is never cut in half.
pub fn name(name: &str) -> String {
    let pieces = pieces(name);
    let total: usize = pieces.iter().map(|p| p.chars().count()).sum();
    if total <= NAME_CHARS {
        return pieces.concat();
    }
    let mut out = String::new();
    let mut used = 0;
    for piece in pieces {
        let count = piece.chars().count();
        if used + count > NAME_CHARS - 1 {
            break;
        }
        used += count;
        out.push_str(&piece);
    }
    out.push('…');
    out
}

/// `text` with every character that hides or reorders text written as `\u{…}` (see the
/// module doc); text without one comes back as it is.
pub fn escaped(text: &str) -> String {
    pieces(text).concat()
}

/// Whether `text` holds a character [`escaped`] writes out.
pub fn needs_escape(text: &str) -> bool {
    let chars: Vec<char> = text.chars().collect();
    (0..chars.len()).any(|i| hides(&chars, i))
}

/// Each character of `text` as it is shown: itself, or its escape.
fn pieces(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    (0..chars.len())
        .map(|i| {
            if hides(&chars, i) { format!("\\u{{{:x}}}", u32::from(chars[i])) } else { chars[i].to_string() }
        })
        .collect()
}

/// Whether the `i`th of `chars` hides or reorders text where it stands.
fn hides(chars: &[char], i: usize) -> bool {
    let c = chars[i];
    let before = i.checked_sub(1).map(|b| chars[b]);
    let after = chars.get(i + 1).copied();
    if is_variation_selector(c) {
        // It varies the character before it, unless there is none to vary.
        return !before.is_some_and(|b| !b.is_whitespace() && !is_hidden(b) && !is_variation_selector(b));
    }
    if c == '\u{200D}' {
        // A joiner inside an emoji sequence (`👩‍💻`): after an emoji, maybe varied.
        let emoji_before = chars[..i]
            .iter()
            .rev()
            .find(|b| !is_variation_selector(**b) && !is_skin_tone(**b))
            .is_some_and(|b| is_emoji(*b));
        return !(emoji_before && after.is_some_and(is_emoji));
    }
    is_hidden(c)
}

/// A character that shows nothing or reorders text, wherever it stands: Unicode's
/// controls (Cc), format characters (Cf), separators of lines and paragraphs, and the
/// fillers and invisible letters that draw nothing.
pub fn is_hidden(c: char) -> bool {
    c.is_control() || is_format(c) || is_filler(c) || matches!(c, '\u{2028}' | '\u{2029}')
}

/// The bidi controls: marks, embeddings, overrides and isolates.
pub fn is_bidi(c: char) -> bool {
    matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Unicode's format characters, general category Cf (Unicode 15.1).
fn is_format(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{0600}'..='\u{0605}'
            | '\u{061C}'
            | '\u{06DD}'
            | '\u{070F}'
            | '\u{0890}'..='\u{0891}'
            | '\u{08E2}'
            | '\u{180E}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{206F}'
            | '\u{FEFF}'
            | '\u{FFF9}'..='\u{FFFB}'
            | '\u{110BD}'
            | '\u{110CD}'
            | '\u{13430}'..='\u{1343F}'
            | '\u{1BCA0}'..='\u{1BCA3}'
            | '\u{1D173}'..='\u{1D17A}'
            | '\u{E0001}'
            | '\u{E0020}'..='\u{E007F}'
    )
}

/// Letters and marks that draw nothing: the combining grapheme joiner, the Hangul
/// fillers, Khmer's inherent vowels, the Mongolian free variation selectors.
fn is_filler(c: char) -> bool {
    matches!(
        c,
        '\u{034F}' | '\u{115F}' | '\u{1160}' | '\u{17B4}' | '\u{17B5}' | '\u{180B}'
            ..='\u{180D}' | '\u{180F}' | '\u{3164}' | '\u{FFA0}'
    )
}

/// The variation selectors (`U+FE00`–`U+FE0F`, `U+E0100`–`U+E01EF`).
pub fn is_variation_selector(c: char) -> bool {
    matches!(c, '\u{FE00}'..='\u{FE0F}' | '\u{E0100}'..='\u{E01EF}')
}

/// The emoji skin-tone modifiers.
fn is_skin_tone(c: char) -> bool {
    matches!(c, '\u{1F3FB}'..='\u{1F3FF}')
}

/// Pictographs that emoji sequences join (the blocks most emoji are in).
fn is_emoji(c: char) -> bool {
    matches!(
        c,
        '\u{00A9}'
            | '\u{00AE}'
            | '\u{203C}'
            | '\u{2049}'
            | '\u{2122}'
            | '\u{2139}'
            | '\u{2194}'..='\u{21AA}'
            | '\u{2300}'..='\u{23FF}'
            | '\u{24C2}'
            | '\u{25A0}'..='\u{27BF}'
            | '\u{2934}'..='\u{2935}'
            | '\u{2B00}'..='\u{2BFF}'
            | '\u{3030}'
            | '\u{303D}'
            | '\u{3297}'
            | '\u{3299}'
            | '\u{1F000}'..='\u{1FAFF}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bidi_controls_are_escaped_wherever_they_stand() {
        for c in [
            '\u{202A}', '\u{202B}', '\u{202C}', '\u{202D}', '\u{202E}', '\u{2066}', '\u{2067}', '\u{2068}',
            '\u{2069}', '\u{200E}', '\u{200F}', '\u{061C}',
        ] {
            let shown = name(&format!("bob{c}niw"));
            assert_eq!(shown, format!("bob\\u{{{:x}}}niw", u32::from(c)), "U+{:04X}", u32::from(c));
            assert!(is_bidi(c));
        }
        assert_eq!(name("\u{202E}niw bob \u{2066}x"), "\\u{202e}niw bob \\u{2066}x");
    }

    #[test]
    fn zero_width_invisible_and_control_characters_are_escaped() {
        assert_eq!(name("carol\u{200B}"), "carol\\u{200b}");
        for c in [
            '\u{200B}',
            '\u{200C}',
            '\u{2060}',
            '\u{2061}',
            '\u{2062}',
            '\u{2063}',
            '\u{2064}',
            '\u{FEFF}',
            '\u{00AD}',
            '\u{0000}',
            '\u{0007}',
            '\n',
            '\r',
            '\u{1B}',
            '\u{7F}',
            '\u{85}',
            '\u{9F}',
            '\u{180E}',
            '\u{206A}',
            '\u{FFF9}',
            '\u{E0041}',
            '\u{E0001}',
            '\u{1D173}',
            '\u{0600}',
            '\u{034F}',
            '\u{3164}',
            '\u{115F}',
            '\u{FFA0}',
            '\u{2028}',
            '\u{2029}',
            '\u{13430}',
        ] {
            let shown = name(&format!("a{c}b"));
            assert_eq!(shown, format!("a\\u{{{:x}}}b", u32::from(c)), "U+{:04X}", u32::from(c));
            assert!(needs_escape(&format!("a{c}b")));
        }
        // A joiner between letters hides nothing it joins, but still shows nothing.
        assert_eq!(name("bo\u{200D}b"), "bo\\u{200d}b");
    }

    #[test]
    fn a_variation_selector_alone_is_escaped_and_one_after_a_character_is_kept() {
        assert_eq!(name("\u{FE0F}bob"), "\\u{fe0f}bob");
        assert_eq!(name("bob \u{FE0F}"), "bob \\u{fe0f}");
        assert_eq!(name("a\u{FE0F}\u{FE0F}"), "a\u{FE0F}\\u{fe0f}", "the second varies nothing");
        assert_eq!(name("\u{200B}\u{E0100}"), "\\u{200b}\\u{e0100}");
        assert_eq!(name("❤\u{FE0F} alice"), "❤\u{FE0F} alice");
        assert_eq!(name("葛\u{E0100}"), "葛\u{E0100}", "an ideographic variant");
    }

    #[test]
    fn cjk_emoji_and_accented_names_stay_as_they_are() {
        for ordinary in [
            "小明",
            "王小红🐉",
            "alice",
            "Zoë ❤\u{FE0F}",
            "👩\u{200D}💻 dev",
            "👨\u{200D}👩\u{200D}👧",
            "👋🏽 hi",
            "👍🏽\u{200D}🔥",
            "محمد",
            "Ålesund [m]",
            "@bob:example.org",
        ] {
            assert_eq!(name(ordinary), ordinary);
            assert!(!needs_escape(ordinary), "{ordinary}");
        }
        // Hostile characters among them are still seen.
        assert_eq!(name("小明\u{202E}🐉\u{200B}"), "小明\\u{202e}🐉\\u{200b}");
        assert_eq!(name("👩\u{200D}"), "👩\\u{200d}", "a joiner joining nothing");
        assert_eq!(name("\u{200D}💻"), "\\u{200d}💻");
    }

    #[test]
    fn marks_follow_the_name_guest_first() {
        assert_eq!(marked("alice", false, None), "alice");
        assert_eq!(marked("alice", true, None), "alice?");
        assert_eq!(marked("alice", false, Some("libera")), "alice/libera");
        assert_eq!(marked("alice", true, Some("libera")), "alice?/libera");
    }

    #[test]
    fn a_long_name_is_cut_to_the_cap_with_an_ellipsis_and_no_escape_is_cut() {
        let exact = "x".repeat(NAME_CHARS);
        assert_eq!(name(&exact), exact);
        let long = name(&"名".repeat(200));
        assert_eq!(long.chars().count(), NAME_CHARS);
        assert!(long.ends_with('…') && long.starts_with("名名"), "{long}");
        let hidden = name(&"\u{200B}".repeat(NAME_CHARS));
        assert!(hidden.chars().count() <= NAME_CHARS && hidden.ends_with('…'), "{hidden}");
        assert!(hidden.trim_end_matches('…').split("\\u{200b}").all(str::is_empty), "{hidden}");
        // `escaped` is not cut: it is for any text.
        assert_eq!(escaped(&"y".repeat(100)).len(), 100);
    }
}
