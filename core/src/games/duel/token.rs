//! The tokens of a spell as players type them after `!cast`: the four pre-conditionings,
//! the six elements and the harmonize marker (`end`), with their aliases in English and
//! Chinese. Reading never panics; an unknown word is refused with the nearest token.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::element::Element;
use super::error::DuelError;
use crate::language::Language;
use crate::words;

/// The pre-conditioning that opens every spell (exactly one per spell).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Preconditioning {
    /// Power Surge (魔力迸发): base power + ⌊base power / 2⌋.
    Surge,
    /// Focused Casting (专注施法): concentration checks use the focused sequence (D-5).
    Focus,
    /// Overspeed (超速魔法): the marker is placed together with the first element.
    Overspeed,
    /// Full Counter (完全反制): cancels the opponent's spell when it is the exact opposite (D-6, D-7).
    Counter,
}

impl Preconditioning {
    /// The word players type and the snapshot uses.
    pub fn word(self) -> &'static str {
        match self {
            Preconditioning::Surge => "surge",
            Preconditioning::Focus => "focus",
            Preconditioning::Overspeed => "overspeed",
            Preconditioning::Counter => "counter",
        }
    }

    /// The word a player types in `language`: [`Preconditioning::word`], or the short
    /// Chinese one (`迸发`, `专注`, `超速`, `反制`).
    pub fn typed_in(self, language: Language) -> &'static str {
        match (language, self) {
            (Language::En, _) => self.word(),
            (Language::ZhCn, Preconditioning::Surge) => "迸发",
            (Language::ZhCn, Preconditioning::Focus) => "专注",
            (Language::ZhCn, Preconditioning::Overspeed) => "超速",
            (Language::ZhCn, Preconditioning::Counter) => "反制",
        }
    }

    /// The name shown in announcements.
    pub fn name(self) -> &'static str {
        match self {
            Preconditioning::Surge => "Power Surge",
            Preconditioning::Focus => "Focused Casting",
            Preconditioning::Overspeed => "Overspeed",
            Preconditioning::Counter => "Full Counter",
        }
    }
}

/// One token of a spell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Token {
    /// The pre-conditioning marker (step 0).
    Preconditioning(Preconditioning),
    /// An evoked element.
    Element(Element),
    /// The harmonize marker that ends the spell.
    End,
}

impl Token {
    /// The word players type and the snapshot uses (`surge`, `fire`, `end`).
    pub fn word(self) -> &'static str {
        match self {
            Token::Preconditioning(p) => p.word(),
            Token::Element(e) => e.word(),
            Token::End => "end",
        }
    }

    /// The word a player types in `language` (`surge`, `火`, `协调`): each reads back as
    /// this token.
    pub fn typed_in(self, language: Language) -> &'static str {
        match (language, self) {
            (Language::En, _) => self.word(),
            (_, Token::Preconditioning(p)) => p.typed_in(language),
            (_, Token::Element(e)) => e.chinese(),
            (Language::ZhCn, Token::End) => "协调",
        }
    }

    /// Reads one canonical word (as [`Token::word`] writes it).
    pub fn from_word(word: &str) -> Option<Token> {
        CANONICAL.iter().copied().find(|t| t.word() == word)
    }

    /// The element, if this token is one.
    pub fn element(self) -> Option<Element> {
        match self {
            Token::Element(e) => Some(e),
            _ => None,
        }
    }

    /// The pre-conditioning, if this token is one.
    pub fn preconditioning(self) -> Option<Preconditioning> {
        match self {
            Token::Preconditioning(p) => Some(p),
            _ => None,
        }
    }
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.word())
    }
}

impl Serialize for Token {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.word())
    }
}

impl<'de> Deserialize<'de> for Token {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let word = String::deserialize(deserializer)?;
        Token::from_word(&word)
            .ok_or_else(|| serde::de::Error::custom(format!("`{word}` is not a Duel token")))
    }
}

/// Every token once, in the order help lists them.
pub const CANONICAL: [Token; 11] = [
    Token::Preconditioning(Preconditioning::Surge),
    Token::Preconditioning(Preconditioning::Focus),
    Token::Preconditioning(Preconditioning::Overspeed),
    Token::Preconditioning(Preconditioning::Counter),
    Token::Element(Element::Water),
    Token::Element(Element::Fire),
    Token::Element(Element::Thunder),
    Token::Element(Element::Wind),
    Token::Element(Element::Earth),
    Token::Element(Element::Void),
    Token::End,
];

/// The valid tokens as one line for error messages and help.
pub const TOKEN_LIST: &str = "`surge` `focus` `overspeed` `counter` (pre-conditioning), \
    `water` `fire` `thunder` `wind` `earth` `void` (also 水 火 雷 风 土 虚无), `end` (harmonize)";

/// Every spelling a player may use, lower-case. Two-word forms are matched across a space.
const ALIASES: &[(&str, Token)] = &[
    ("surge", Token::Preconditioning(Preconditioning::Surge)),
    ("power surge", Token::Preconditioning(Preconditioning::Surge)),
    ("powersurge", Token::Preconditioning(Preconditioning::Surge)),
    ("power-surge", Token::Preconditioning(Preconditioning::Surge)),
    ("魔力迸发", Token::Preconditioning(Preconditioning::Surge)),
    ("迸发", Token::Preconditioning(Preconditioning::Surge)),
    ("focus", Token::Preconditioning(Preconditioning::Focus)),
    ("focused", Token::Preconditioning(Preconditioning::Focus)),
    ("focused casting", Token::Preconditioning(Preconditioning::Focus)),
    ("专注施法", Token::Preconditioning(Preconditioning::Focus)),
    ("专注", Token::Preconditioning(Preconditioning::Focus)),
    ("overspeed", Token::Preconditioning(Preconditioning::Overspeed)),
    ("超速魔法", Token::Preconditioning(Preconditioning::Overspeed)),
    ("超速", Token::Preconditioning(Preconditioning::Overspeed)),
    ("counter", Token::Preconditioning(Preconditioning::Counter)),
    ("full counter", Token::Preconditioning(Preconditioning::Counter)),
    ("fullcounter", Token::Preconditioning(Preconditioning::Counter)),
    ("full-counter", Token::Preconditioning(Preconditioning::Counter)),
    ("完全反制", Token::Preconditioning(Preconditioning::Counter)),
    ("反制", Token::Preconditioning(Preconditioning::Counter)),
    ("water", Token::Element(Element::Water)),
    ("水", Token::Element(Element::Water)),
    ("fire", Token::Element(Element::Fire)),
    ("火", Token::Element(Element::Fire)),
    ("thunder", Token::Element(Element::Thunder)),
    ("雷", Token::Element(Element::Thunder)),
    ("wind", Token::Element(Element::Wind)),
    ("风", Token::Element(Element::Wind)),
    ("風", Token::Element(Element::Wind)),
    ("earth", Token::Element(Element::Earth)),
    ("土", Token::Element(Element::Earth)),
    ("void", Token::Element(Element::Void)),
    ("虚无", Token::Element(Element::Void)),
    ("虛無", Token::Element(Element::Void)),
    ("end", Token::End),
    ("harmonize", Token::End),
    ("harmonise", Token::End),
    ("协调", Token::End),
    ("協調", Token::End),
];

fn alias(word: &str) -> Option<Token> {
    ALIASES.iter().find(|(w, _)| *w == word).map(|(_, t)| *t)
}

/// Splits a word written without spaces (`魔力迸发火风协调`) into tokens, longest alias
/// first; None unless the whole word splits.
fn split_run(word: &str) -> Option<Vec<Token>> {
    let mut rest = word;
    let mut tokens = Vec::new();
    while !rest.is_empty() {
        let (spelling, token) = ALIASES
            .iter()
            .filter(|(w, _)| !w.contains(' ') && rest.starts_with(w))
            .max_by_key(|(w, _)| w.len())?;
        tokens.push(*token);
        rest = &rest[spelling.len()..];
    }
    Some(tokens)
}

/// What separates tokens inside one typed word besides spaces (`fire,wind`, `火、风`).
fn separates(c: char) -> bool {
    matches!(c, ',' | '，' | '、' | ';' | '；')
}

/// Reads the tokens after `!cast` from a line of text (tests and tools; the daemon hands
/// over the words the grammar already split: [`read_tokens`]).
pub fn parse_tokens(text: &str) -> Result<Vec<Token>, DuelError> {
    read_tokens(&text.split_whitespace().collect::<Vec<_>>())
}

/// Reads the tokens of a cast from its words as the grammar split them (its `Rest`
/// value): each word may hold several tokens separated by commas or semicolons, or run
/// together (`魔力迸发火风协调`); case does not matter; a two-word name (`power surge`)
/// may span two words. An unknown word is refused naming it (lower-cased) and the
/// nearest token. No word is joined or copied unless it has capitals to lower.
pub fn read_tokens<S: AsRef<str>>(words: &[S]) -> Result<Vec<Token>, DuelError> {
    let mut pieces = words
        .iter()
        .flat_map(|word| word.as_ref().split(|c: char| c.is_whitespace() || separates(c)))
        .filter(|piece| !piece.is_empty())
        .map(lowered)
        .peekable();
    let mut tokens = Vec::with_capacity(words.len());
    while let Some(word) = pieces.next() {
        if let Some(next) = pieces.peek()
            && let Some(token) = two_word_alias(&word, next)
        {
            tokens.push(token);
            pieces.next();
            continue;
        }
        if let Some(token) = alias(&word) {
            tokens.push(token);
        } else if let Some(run) = split_run(&word) {
            tokens.extend(run);
        } else {
            let suggestion = words::nearest(&word, ALIASES.iter().map(|(w, _)| *w).filter(|w| w.is_ascii()));
            return Err(DuelError::UnknownToken {
                word: word.into_owned(),
                suggestion: suggestion.map(str::to_owned),
            });
        }
    }
    Ok(tokens)
}

/// `piece` in lower case, copied only when lowering changes it.
fn lowered(piece: &str) -> std::borrow::Cow<'_, str> {
    if piece.chars().any(|c| c.to_lowercase().ne(std::iter::once(c))) {
        piece.to_lowercase().into()
    } else {
        piece.into()
    }
}

/// The token two words name together (`power surge`, `full counter`).
fn two_word_alias(first: &str, second: &str) -> Option<Token> {
    ALIASES.iter().find(|(w, _)| w.split_once(' ') == Some((first, second))).map(|(_, t)| *t)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SURGE: Token = Token::Preconditioning(Preconditioning::Surge);
    const COUNTER: Token = Token::Preconditioning(Preconditioning::Counter);

    #[test]
    fn tokens_read_case_insensitively_with_aliases() {
        assert_eq!(
            parse_tokens("Surge FIRE wind End"),
            Ok(vec![SURGE, Token::Element(Element::Fire), Token::Element(Element::Wind), Token::End])
        );
        assert_eq!(parse_tokens("power surge"), Ok(vec![SURGE]));
        assert_eq!(parse_tokens("Full Counter, water"), Ok(vec![COUNTER, Token::Element(Element::Water)]));
        assert_eq!(parse_tokens("fullcounter harmonise"), Ok(vec![COUNTER, Token::End]));
        assert_eq!(parse_tokens("focused"), Ok(vec![Token::Preconditioning(Preconditioning::Focus)]));
    }

    #[test]
    fn chinese_tokens_read_with_or_without_spaces() {
        let expected = vec![SURGE, Token::Element(Element::Fire), Token::Element(Element::Void), Token::End];
        assert_eq!(parse_tokens("魔力迸发 火 虚无 协调"), Ok(expected.clone()));
        assert_eq!(parse_tokens("魔力迸发火虚无协调"), Ok(expected));
    }

    /// Issue 19: the specials' short names, alone, run together and after a full-width
    /// comma or semicolon.
    #[test]
    fn the_specials_short_chinese_names_read() {
        let focus = Token::Preconditioning(Preconditioning::Focus);
        let overspeed = Token::Preconditioning(Preconditioning::Overspeed);
        assert_eq!(parse_tokens("迸发 火 协调"), Ok(vec![SURGE, Token::Element(Element::Fire), Token::End]));
        assert_eq!(parse_tokens("专注水协调"), Ok(vec![focus, Token::Element(Element::Water), Token::End]));
        assert_eq!(
            parse_tokens("超速，雷；协调"),
            Ok(vec![overspeed, Token::Element(Element::Thunder), Token::End])
        );
        assert_eq!(parse_tokens("反制 土"), Ok(vec![COUNTER, Token::Element(Element::Earth)]));
        // The long names still win over their starts.
        assert_eq!(parse_tokens("专注施法火"), Ok(vec![focus, Token::Element(Element::Fire)]));
    }

    #[test]
    fn an_unknown_token_is_named_with_the_nearest_one() {
        assert_eq!(
            parse_tokens("surge fier"),
            Err(DuelError::UnknownToken { word: "fier".into(), suggestion: Some("fire".into()) })
        );
        assert!(matches!(parse_tokens("xyzzy"), Err(DuelError::UnknownToken { suggestion: None, .. })));
    }

    /// The daemon hands over the words the grammar split (issue 32): read as they are,
    /// two-word names across them, commas inside them, a run of Chinese tokens in one.
    #[test]
    fn the_grammars_words_read_without_joining() {
        let fire = Token::Element(Element::Fire);
        let words = |w: &[&str]| w.iter().map(|w| (*w).to_owned()).collect::<Vec<String>>();
        assert_eq!(read_tokens(&words(&["Power", "SURGE", "fire,wind", "end"])), parse_tokens("power surge fire wind end"));
        assert_eq!(read_tokens(&words(&["full", "counter"])), Ok(vec![COUNTER]));
        assert_eq!(read_tokens(&words(&["迸发火协调"])), Ok(vec![SURGE, fire, Token::End]));
        assert_eq!(read_tokens::<String>(&[]), Ok(vec![]));
        assert_eq!(
            read_tokens(&words(&["surge", "FIER"])),
            Err(DuelError::UnknownToken { word: "fier".into(), suggestion: Some("fire".into()) })
        );
    }

    #[test]
    fn canonical_words_round_trip() {
        for token in CANONICAL {
            assert_eq!(Token::from_word(token.word()), Some(token));
            assert_eq!(parse_tokens(token.word()), Ok(vec![token]));
        }
    }
}
