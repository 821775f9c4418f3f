//! A component's words: the Fluent source its `texts` export returns for each language,
//! checked once at load, and how its news and refusals are worded from them (with every
//! character that hides or reorders text written out, as names are shown everywhere). A message
//! the component names but does not have is shown as its id, never as nothing.

use fluent_bundle::concurrent::FluentBundle;
use fluent_bundle::{FluentArgs, FluentResource, FluentValue};
use spellbridge_core::Language;

/// The most bytes of Fluent source per language, and of one worded message.
const MOST_SOURCE: usize = 256 << 10;
const LONGEST_TEXT: usize = 4000;

/// One game's catalogue in each language.
pub struct Texts {
    bundles: Vec<(Language, FluentBundle<FluentResource>)>,
}

impl std::fmt::Debug for Texts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.bundles.iter().map(|(l, _)| l.code())).finish()
    }
}

impl Texts {
    /// Reads each language's source; refuses one that is too long or is not Fluent.
    pub fn new(sources: Vec<(Language, String)>) -> Result<Texts, String> {
        let mut bundles = Vec::with_capacity(sources.len());
        for (language, source) in sources {
            if source.len() > MOST_SOURCE {
                return Err(format!(
                    "its {} texts are {} bytes; at most {MOST_SOURCE}",
                    language.code(),
                    source.len()
                ));
            }
            let resource = FluentResource::try_new(source).map_err(|(_, errors)| {
                format!("its {} texts are not Fluent: {:?}", language.code(), errors.first())
            })?;
            let tag = language.code().parse().map_err(|e| format!("{e}"))?;
            let mut bundle = FluentBundle::new_concurrent(vec![tag]);
            bundle.set_use_isolating(false);
            bundle
                .add_resource(resource)
                .map_err(|e| format!("its {} texts: {:?}", language.code(), e.first()))?;
            bundles.push((language, bundle));
        }
        Ok(Texts { bundles })
    }

    /// True when every language has message `id`.
    pub fn has(&self, id: &str) -> bool {
        self.bundles.iter().all(|(_, b)| b.has_message(id))
    }

    /// Message `id` with `args`, in `language` (English when that language lacks it; the
    /// id itself when both do).
    pub fn say(&self, language: Language, id: &str, args: &[(String, String)]) -> String {
        let mut fluent = FluentArgs::new();
        for (name, value) in args {
            let value = match value.parse::<i64>() {
                Ok(n) => FluentValue::from(n),
                Err(_) => FluentValue::from(value.clone()),
            };
            fluent.set(name.clone(), value);
        }
        let said = [language, Language::En].into_iter().find_map(|language| {
            let (_, bundle) = self.bundles.iter().find(|(l, _)| *l == language)?;
            let pattern = bundle.get_message(id)?.value()?;
            let mut errors = Vec::new();
            Some(bundle.format_pattern(pattern, Some(&fluent), &mut errors).into_owned())
        });
        // Names and words from the component are shown as every name is (core's `shown`):
        // a character that hides or reorders text is written out, never sent.
        let mut text = spellbridge_core::shown::escaped(&said.unwrap_or_else(|| id.to_owned()));
        if text.len() > LONGEST_TEXT {
            let mut end = LONGEST_TEXT;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.truncate(end);
            text.push('…');
        }
        text
    }
}
