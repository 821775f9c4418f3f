//! The message catalogues (issue 19): every player-visible sentence, in each
//! [`Language`], looked up by id.
//!
//! The catalogues are Project Fluent files at the repository's root,
//! `locales/<language>/<area>.ftl` (`duel.ftl`, `thaum.ftl`, `common.ftl`, …), compiled
//! into the binary ([`catalogues`] lists them; adding a file is one line there, or comes
//! with its game), so the core still reads no files. Messages are formatted by Fluent's
//! own rules (numbers, plurals: `[one]`/`*[other]` in English, none in Chinese) with
//! Unicode isolation marks off, so an English sentence is byte for byte what the code
//! wrote before.
//!
//! Two ways to say a message:
//! - [`text`]: plain text, for logs and places that take a `String`;
//! - [`rich`]: a [`RichText`]: `backticked` runs of the catalogue's text become code, and
//!   the arguments given as [`Args::name`], [`Args::mention`], [`Args::rich`] or
//!   [`Args::text`] are put in as they are (a name stays a name segment, a typed word is
//!   never read as markup).
//!
//! A message the catalogue lacks, or one whose variables the code did not pass, is a bug
//! the tests catch ([`check`] and the rendering tests): in a debug build it panics; in a
//! release build the message's id is said instead.

mod args;
mod catalogues;
pub mod check;

use std::borrow::Cow;
use std::sync::LazyLock;

use fluent_bundle::FluentResource;
use fluent_bundle::concurrent::FluentBundle;

pub use args::Args;
pub use catalogues::{AREAS, Area, all as all_areas};

use crate::language::Language;
use crate::text::RichText;

/// One language's messages: every area's file, in one bundle.
struct Catalogue {
    bundle: FluentBundle<FluentResource>,
}

impl Catalogue {
    /// The bundle of `language`'s files. A file that does not parse, or an id given twice,
    /// is kept out as far as it is broken ([`check`] fails on it).
    fn of(language: Language) -> Self {
        let tag: unic_langid::LanguageIdentifier = language.code().parse().unwrap_or_default();
        let mut bundle = FluentBundle::new_concurrent(vec![tag]);
        bundle.set_use_isolating(false);
        for area in all_areas() {
            let resource = match FluentResource::try_new(area.source(language).to_owned()) {
                Ok(resource) | Err((resource, _)) => resource,
            };
            // Duplicate ids keep the first; `check` reports them.
            let _ = bundle.add_resource(resource);
        }
        Catalogue { bundle }
    }
}

static CATALOGUES: LazyLock<[Catalogue; Language::ALL.len()]> =
    LazyLock::new(|| Language::ALL.map(Catalogue::of));

fn catalogue(language: Language) -> &'static Catalogue {
    let index = Language::ALL.iter().position(|l| *l == language).unwrap_or(0);
    &CATALOGUES[index]
}

/// Room for most formatted messages, so that writing one seldom grows its string.
const SAID_CAPACITY: usize = 256;

/// The message `id` in `language` as Fluent formats it with `args` (rich arguments as
/// placeholders), or `None` when the catalogue has no such message. A message of one
/// piece of text is borrowed from the catalogue.
fn format(language: Language, id: &str, args: &Args) -> Option<Cow<'static, str>> {
    let bundle = &catalogue(language).bundle;
    let message = bundle.get_message(id)?;
    let pattern = message.value()?;
    #[cfg(debug_assertions)]
    {
        let wanted = check::variables(id);
        let given: std::collections::BTreeSet<String> = args.names().map(str::to_owned).collect();
        assert!(wanted == given, "message `{id}` reads {wanted:?}; the code passes {given:?}");
    }
    let mut errors = Vec::new();
    let fluent = args.fluent();
    let said = if pattern.elements.len() == 1 {
        bundle.format_pattern(pattern, Some(&fluent), &mut errors)
    } else {
        let mut said = String::with_capacity(SAID_CAPACITY);
        // Writing to a `String` cannot fail.
        let _ = bundle.write_pattern(&mut said, pattern, Some(&fluent), &mut errors);
        Cow::Owned(said)
    };
    debug_assert!(errors.is_empty(), "message `{id}` in {language}: {errors:?}");
    Some(said)
}

fn missing(language: Language, id: &str) -> String {
    if cfg!(debug_assertions) {
        panic!("no message `{id}` in the {language} catalogue");
    }
    id.to_owned()
}

/// The message `id` in `language`, as plain text (rich arguments as [`RichText::plain`],
/// code in backticks).
pub fn text(language: Language, id: &str, args: &Args) -> String {
    match format(language, id, args) {
        Some(said) if args.has_pieces() => args.said_plain(&said),
        Some(said) => said.into_owned(),
        None => missing(language, id),
    }
}

/// The message `id` in `language`, which takes no arguments, as plain text: borrowed
/// from the catalogue when it is one piece of text (a game's small words: `Fire`, `水`).
pub fn word(language: Language, id: &str) -> Cow<'static, str> {
    format(language, id, &Args::new()).unwrap_or_else(|| Cow::Owned(missing(language, id)))
}

/// The message `id` in `language`, as rich text: the catalogue's `backticked` runs as
/// code, arguments in their own segments (see the module doc).
pub fn rich(language: Language, id: &str, args: &Args) -> RichText {
    say(language, id, args.clone())
}

/// [`rich`], taking the arguments: their pieces are moved into the text, not copied.
pub fn say(language: Language, id: &str, args: Args) -> RichText {
    match format(language, id, &args) {
        Some(said) => args.into_rich(&said),
        None => RichText::new().text(missing(language, id)),
    }
}

/// Items as a list in `language`: "a", "a and b", "a, b and c" (`common-and`,
/// `common-comma`).
pub fn list(language: Language, mut items: Vec<RichText>) -> RichText {
    let Some(last) = items.pop() else { return RichText::new() };
    let Some(before) = items.pop() else { return last };
    let mut out = say(language, "common-and", Args::new().rich("first", before).rich("last", last));
    while let Some(item) = items.pop() {
        out = say(language, "common-comma", Args::new().rich("first", item).rich("rest", out));
    }
    out
}

/// True when `language`'s catalogue has a message `id`.
pub fn has(language: Language, id: &str) -> bool {
    catalogue(language).bundle.has_message(id)
}

/// A text said in every language, made once (a refusal is made where the command is
/// read, before anyone knows which language it will be told in).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Localized([RichText; Language::ALL.len()]);

impl Localized {
    /// The text `say` makes in each language.
    pub fn new(mut say: impl FnMut(Language) -> RichText) -> Self {
        Localized(Language::ALL.map(&mut say))
    }

    /// The same text in every language (words no catalogue has, such as a third-party
    /// game's).
    pub fn same(text: RichText) -> Self {
        Localized::new(|_| text.clone())
    }

    /// The text in `language`.
    pub fn get(&self, language: Language) -> &RichText {
        let index = Language::ALL.iter().position(|l| *l == language).unwrap_or(0);
        &self.0[index]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PlayerId;
    use crate::text::{Segment, Style};

    #[test]
    fn english_numbers_and_plurals_follow_fluents_rules() {
        let one = text(Language::En, "common-test-positions", &Args::new().num("count", 1));
        let two = text(Language::En, "common-test-positions", &Args::new().num("count", 2));
        assert_eq!(one, "1 position");
        assert_eq!(two, "2 positions");
        let zh = text(Language::ZhCn, "common-test-positions", &Args::new().num("count", 2));
        assert_eq!(zh, "2 个位置");
    }

    #[test]
    fn rich_arguments_keep_their_segments_and_backticks_become_code() {
        let alice = PlayerId::new("alice");
        let args = Args::new().name("player", &alice).text("word", "a`b");
        let said = rich(Language::En, "common-test-rich", &args);
        assert_eq!(said.plain(), "alice typed `a`b`.");
        assert_eq!(said.segments()[0], Segment::Name(alice));
        assert_eq!(said.segments()[2], Segment::Text { text: "a`b".into(), style: Style::Code });
    }

    #[test]
    fn no_isolation_marks() {
        let said = text(Language::En, "common-test-rich", &Args::new().text("player", "x").text("word", "y"));
        assert!(!said.contains(['\u{2068}', '\u{2069}']), "{said:?}");
    }

    #[test]
    fn a_localized_text_is_told_per_language() {
        let said = Localized::new(|language| RichText::new().text(language.code()));
        assert_eq!(said.get(Language::ZhCn).plain(), "zh-CN");
        assert_eq!(said.get(Language::En).plain(), "en");
    }
}
