//! Full-width input (issue 19): a Chinese keyboard types `！` for `!`, `　` (U+3000) for a
//! space, `１２` for digits, `＋`/`－` for signs and `，`/`：` for punctuation. The
//! grammar reads them where it reads their ASCII forms: the prefix, the command word,
//! numbers, fixed words (a Thaum, `next`), plain words and a spell's tokens.
//!
//! Never in a player's name: a `Player` argument is kept exactly as typed (only a
//! trailing `：` or `，`, like `:` and `,` after a nick, is dropped by the daemon), so
//! `ａｌｉｃｅ` never names the player `alice` and a name in look-alike characters never
//! names someone else's identity. Words are split at every Unicode space
//! (`char::is_whitespace`: U+3000, no-break spaces, the U+2000 block).

use std::borrow::Cow;

/// The full-width forms U+FF01..=U+FF5E are the ASCII characters U+0021..=U+007E moved by
/// this much.
const FULL_WIDTH_OFFSET: u32 = 0xFF01 - 0x21;

/// The ASCII character `c` is a full-width form of, if any (`－` and the minus sign
/// U+2212 are `-`; U+3000 is a space).
fn narrow_char(c: char) -> Option<char> {
    match c {
        '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - FULL_WIDTH_OFFSET),
        '\u{3000}' => Some(' '),
        '\u{2212}' => Some('-'),
        _ => None,
    }
}

/// `word` with its full-width forms as ASCII (`１２` → `12`, `ｆｉｒｅ` → `fire`);
/// borrowed when it has none.
pub fn narrow(word: &str) -> Cow<'_, str> {
    if !word.chars().any(|c| narrow_char(c).is_some()) {
        return Cow::Borrowed(word);
    }
    Cow::Owned(word.chars().map(|c| narrow_char(c).unwrap_or(c)).collect())
}

/// A command word as the grammar looks it up: narrowed and lower case (`ＣＡＳＴ` → `cast`;
/// `施法` stays).
pub fn command_word(word: &str) -> String {
    narrow(word).to_lowercase()
}

/// `text` (leading spaces ignored) after the command prefix, written in ASCII
/// (`!`) or in its full-width form (`！`); `None` when it does not start with either.
pub fn strip_prefix<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let text = text.trim_start();
    if prefix.is_empty() {
        return None;
    }
    if let Some(rest) = text.strip_prefix(prefix) {
        return Some(rest);
    }
    // Compare character by character: each of the prefix's may be typed full width.
    let mut rest = text;
    for wanted in prefix.chars() {
        let typed = rest.chars().next()?;
        if typed != wanted && narrow_char(typed) != Some(wanted) {
            return None;
        }
        rest = &rest[typed.len_utf8()..];
    }
    Some(rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_width_forms_read_as_ascii() {
        assert_eq!(narrow("１２"), "12");
        assert_eq!(narrow("＋３"), "+3");
        assert_eq!(narrow("－３"), "-3");
        assert_eq!(narrow("\u{2212}3"), "-3");
        assert_eq!(narrow("ｆｉｒｅ"), "fire");
        assert_eq!(narrow("火"), "火");
        assert!(matches!(narrow("fire"), Cow::Borrowed(_)));
        assert_eq!(command_word("ＣＡＳＴ"), "cast");
        assert_eq!(command_word("施法"), "施法");
    }

    #[test]
    fn the_prefix_may_be_typed_full_width() {
        assert_eq!(strip_prefix("！施法 火", "!"), Some("施法 火"));
        assert_eq!(strip_prefix("  !cast", "!"), Some("cast"));
        assert_eq!(strip_prefix("？help", "?"), Some("help"));
        assert_eq!(strip_prefix("！！help", "!!"), Some("help"));
        assert_eq!(strip_prefix("!！help", "!!"), Some("help"));
        assert_eq!(strip_prefix("hello", "!"), None);
        // A look-alike that is not the prefix's full-width form is not the prefix.
        assert_eq!(strip_prefix("ǃcast", "!"), None);
        assert_eq!(strip_prefix("！", "!!"), None);
    }
}
