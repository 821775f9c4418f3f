//! Wizards are data, not code (RULES D-13): a name, an element pool and favoured
//! attributes that add power, read from TOML and validated once. The default list is
//! `config/wizards.toml`, compiled in.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::element::Element;
use crate::words;

/// A wizard's name as a reader of `language` sees it (issue 31): the catalogue's name for
/// the compiled-in wizards (`duel-wizard-name`: `Pyromancer` is 火法师 in Chinese), any
/// other wizard's name as the config writes it.
pub fn name_in(name: &str, language: crate::language::Language) -> String {
    crate::locale::text(language, "duel-wizard-name", &crate::locale::Args::new().word("name", name))
}

/// The most of one element a pool may hold (keeps every sum far from overflow).
pub const MAX_POOL_COUNT: u32 = 1_000;

/// The largest favour bonus a wizard may have.
pub const MAX_FAVOUR_BONUS: u32 = 1_000;

/// How many of each element a wizard holds. Elements are taken from it as they are
/// evoked (RULES D-4) and never come back.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Pool {
    /// Water (水).
    pub water: u32,
    /// Fire (火).
    pub fire: u32,
    /// Thunder (雷).
    pub thunder: u32,
    /// Wind (风).
    pub wind: u32,
    /// Earth (土).
    pub earth: u32,
    /// Void (虚无).
    pub void: u32,
}

impl Pool {
    /// A pool with the same count of each base element and `void` Voids.
    pub fn even(base: u32, void: u32) -> Pool {
        Pool { water: base, fire: base, thunder: base, wind: base, earth: base, void }
    }

    /// How many of `element` the pool holds.
    pub fn get(&self, element: Element) -> u32 {
        match element {
            Element::Water => self.water,
            Element::Fire => self.fire,
            Element::Thunder => self.thunder,
            Element::Wind => self.wind,
            Element::Earth => self.earth,
            Element::Void => self.void,
        }
    }

    fn slot(&mut self, element: Element) -> &mut u32 {
        match element {
            Element::Water => &mut self.water,
            Element::Fire => &mut self.fire,
            Element::Thunder => &mut self.thunder,
            Element::Wind => &mut self.wind,
            Element::Earth => &mut self.earth,
            Element::Void => &mut self.void,
        }
    }

    /// Takes one `element`; false (and nothing taken) when the pool has none.
    pub fn take(&mut self, element: Element) -> bool {
        let slot = self.slot(element);
        match slot.checked_sub(1) {
            Some(left) => {
                *slot = left;
                true
            }
            None => false,
        }
    }

    /// True when all six counts are 0 (RULES D-2).
    pub fn is_empty(&self) -> bool {
        Element::ALL.iter().all(|e| self.get(*e) == 0)
    }

    /// How many elements in all.
    pub fn total(&self) -> u64 {
        Element::ALL.iter().map(|e| u64::from(self.get(*e))).sum()
    }
}

/// A favoured attribute: spells with it gain `bonus` power.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Favour {
    /// The base element the spell's attribute must include.
    pub attribute: Element,
    /// Power added.
    pub bonus: u32,
}

/// A wizard a player may choose.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Wizard {
    /// The name players type (one word).
    pub name: String,
    /// True for wizards that are this project's own invention, not the original game's.
    #[serde(default)]
    pub house: bool,
    /// One line about the wizard.
    #[serde(default)]
    pub description: String,
    /// The element pool the wizard starts a duel with.
    pub pool: Pool,
    /// Favoured attributes.
    #[serde(default)]
    pub favours: Vec<Favour>,
}

impl Wizard {
    /// The default wizard of RULES D-13: 8 of each base element, 4 Void, no favours.
    pub fn apprentice() -> Wizard {
        Wizard {
            name: APPRENTICE.to_owned(),
            house: false,
            description: "The wizard every duel starts with: a little of everything.".to_owned(),
            pool: Pool::even(8, 4),
            favours: Vec::new(),
        }
    }

    /// The power a spell with these attribute elements gains from this wizard's favours.
    pub fn favour_bonus(&self, attribute: &[Element]) -> u64 {
        self.favours.iter().filter(|f| attribute.contains(&f.attribute)).map(|f| u64::from(f.bonus)).sum()
    }
}

/// The name of the default wizard.
pub const APPRENTICE: &str = "Apprentice";

/// Why a wizard list was refused.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum WizardError {
    /// The TOML could not be read.
    #[error("the wizard list is not valid TOML: {0}")]
    Toml(String),
    /// The list has no wizard at all.
    #[error("the wizard list is empty: add at least the `{APPRENTICE}` as a `[[wizard]]`")]
    Empty,
    /// A name is empty or has spaces (players type it as one word).
    #[error("wizard name `{0}` must be one word with no spaces (players type it after `!duel <player>`)")]
    BadName(String),
    /// Two wizards share a name (case-insensitive).
    #[error("two wizards are called `{0}` (names are compared ignoring case)")]
    DuplicateName(String),
    /// The Apprentice is missing (RULES D-13).
    #[error("the wizard list has no `{APPRENTICE}` (RULES D-13: it is the default wizard)")]
    MissingApprentice,
    /// A pool holds no base element, so no spell could have a level.
    #[error("wizard `{0}` has no base element in its pool (RULES D-13)")]
    EmptyPool(String),
    /// A pool count is too large.
    #[error("wizard `{name}` holds {count} {element}; at most {MAX_POOL_COUNT} of an element")]
    PoolTooLarge {
        /// The wizard.
        name: String,
        /// The element.
        element: Element,
        /// The count given.
        count: u32,
    },
    /// A favour names Void, which is never an attribute, or repeats an attribute.
    #[error("wizard `{name}` favours `{element}`: a favour must be a base element, once each")]
    BadFavour {
        /// The wizard.
        name: String,
        /// The attribute given.
        element: Element,
    },
    /// A favour bonus is too large.
    #[error("wizard `{name}` has a favour bonus of {bonus}; at most {MAX_FAVOUR_BONUS}")]
    BonusTooLarge {
        /// The wizard.
        name: String,
        /// The bonus given.
        bonus: u32,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WizardFile {
    #[serde(default)]
    wizard: Vec<WizardEntry>,
}

/// A `[[wizard]]` table: a [`Wizard`] and its description in other languages.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WizardEntry {
    name: String,
    #[serde(default)]
    house: bool,
    #[serde(default)]
    description: String,
    /// The description in other languages, by tag: `descriptions = { "zh-CN" = "…" }`.
    #[serde(default)]
    descriptions: BTreeMap<String, String>,
    pool: Pool,
    #[serde(default)]
    favours: Vec<Favour>,
}

/// The wizards players may choose from, validated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Wizards {
    list: Vec<Wizard>,
    /// Each wizard's description in other languages (by its name, then the language's
    /// tag), from the config only: a table names its wizards, the config describes them.
    descriptions: BTreeMap<String, BTreeMap<String, String>>,
}

/// The shipped wizard list (`config/wizards.toml`).
pub const DEFAULT_WIZARDS_TOML: &str = include_str!("../../../../config/wizards.toml");

impl Wizards {
    /// Reads and validates a wizard list written as `[[wizard]]` tables.
    pub fn from_toml(text: &str) -> Result<Wizards, WizardError> {
        let file: WizardFile = toml::from_str(text).map_err(|e| WizardError::Toml(e.to_string()))?;
        let mut descriptions = BTreeMap::new();
        let list = file
            .wizard
            .into_iter()
            .map(|entry| {
                if !entry.descriptions.is_empty() {
                    descriptions.insert(entry.name.clone(), entry.descriptions);
                }
                let WizardEntry { name, house, description, pool, favours, .. } = entry;
                Wizard { name, house, description, pool, favours }
            })
            .collect();
        Ok(Wizards { descriptions, ..Wizards::new(list)? })
    }

    /// The line about `wizard` in `language`: the config's `descriptions` entry for it,
    /// else its `description`.
    pub fn description_in<'a>(&'a self, wizard: &'a Wizard, language: crate::language::Language) -> &'a str {
        let translated = self.descriptions.get(&wizard.name).and_then(|d| d.get(language.code()));
        translated.map_or(wizard.description.as_str(), String::as_str)
    }

    /// Validates a wizard list: one-word names, unique ignoring case, the Apprentice
    /// present, each pool with some base element and sane counts, favours on base elements.
    pub fn new(list: Vec<Wizard>) -> Result<Wizards, WizardError> {
        if list.is_empty() {
            return Err(WizardError::Empty);
        }
        for (i, wizard) in list.iter().enumerate() {
            let name = &wizard.name;
            if name.is_empty() || name.chars().any(char::is_whitespace) {
                return Err(WizardError::BadName(name.clone()));
            }
            if list[..i].iter().any(|w| w.name.to_lowercase() == name.to_lowercase()) {
                return Err(WizardError::DuplicateName(name.clone()));
            }
            for element in Element::ALL {
                let count = wizard.pool.get(element);
                if count > MAX_POOL_COUNT {
                    return Err(WizardError::PoolTooLarge { name: name.clone(), element, count });
                }
            }
            if Element::BASE.iter().all(|e| wizard.pool.get(*e) == 0) {
                return Err(WizardError::EmptyPool(name.clone()));
            }
            for (j, favour) in wizard.favours.iter().enumerate() {
                let repeated = wizard.favours[..j].iter().any(|f| f.attribute == favour.attribute);
                if !favour.attribute.is_base() || repeated {
                    return Err(WizardError::BadFavour { name: name.clone(), element: favour.attribute });
                }
                if favour.bonus > MAX_FAVOUR_BONUS {
                    return Err(WizardError::BonusTooLarge { name: name.clone(), bonus: favour.bonus });
                }
            }
        }
        if !list.iter().any(|w| w.name.eq_ignore_ascii_case(APPRENTICE)) {
            return Err(WizardError::MissingApprentice);
        }
        Ok(Wizards { list, descriptions: BTreeMap::new() })
    }

    /// The wizard called `name`, ignoring case, or by its name in another language
    /// ([`name_in`]: `!接受 火法师`).
    pub fn get(&self, name: &str) -> Option<&Wizard> {
        let lowered = name.to_lowercase();
        self.list.iter().find(|w| w.name.to_lowercase() == lowered).or_else(|| {
            let translated = |w: &&Wizard| {
                crate::language::Language::ALL.iter().any(|language| name_in(&w.name, *language) == name)
            };
            self.list.iter().find(translated)
        })
    }

    /// The Apprentice (always present).
    pub fn apprentice(&self) -> Wizard {
        self.get(APPRENTICE).cloned().unwrap_or_else(Wizard::apprentice)
    }

    /// The wizard name nearest to a mistyped one.
    pub fn nearest(&self, name: &str) -> Option<&str> {
        let lowered: Vec<String> = self.list.iter().map(|w| w.name.to_lowercase()).collect();
        let guess = words::nearest(name, lowered.iter().map(String::as_str))?;
        self.get(guess).map(|w| w.name.as_str())
    }

    /// Every wizard, in the file's order.
    pub fn iter(&self) -> impl Iterator<Item = &Wizard> {
        self.list.iter()
    }

    /// The names, comma-separated.
    pub fn names(&self) -> String {
        self.list.iter().map(|w| w.name.as_str()).collect::<Vec<_>>().join(", ")
    }
}

impl Default for Wizards {
    /// The shipped list; a test checks it is valid, so this never falls back in practice.
    fn default() -> Self {
        Wizards::from_toml(DEFAULT_WIZARDS_TOML)
            .unwrap_or_else(|_| Wizards { list: vec![Wizard::apprentice()], descriptions: BTreeMap::new() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::language::Language;

    /// Issue 31: the shipped wizards have Chinese names, which a Chinese player may type;
    /// a wizard the config adds is called by its own name in every language.
    #[test]
    fn the_shipped_wizards_are_named_and_chosen_in_chinese() {
        let wizards = Wizards::from_toml(DEFAULT_WIZARDS_TOML).expect("config/wizards.toml is valid");
        for wizard in wizards.iter() {
            assert_eq!(name_in(&wizard.name, Language::En), wizard.name);
            let chinese = name_in(&wizard.name, Language::ZhCn);
            assert!(chinese != wizard.name && !chinese.is_ascii(), "{} is {chinese}", wizard.name);
            assert_eq!(wizards.get(&chinese).map(|w| w.name.as_str()), Some(wizard.name.as_str()));
        }
        assert_eq!(name_in("Necromancer", Language::ZhCn), "Necromancer");
        assert_eq!(wizards.get("火法师").map(|w| w.name.as_str()), Some("Pyromancer"));
        assert!(wizards.get("火").is_none() && wizards.get("").is_none());
    }

    #[test]
    fn d13_the_shipped_list_has_the_apprentice_and_marked_house_wizards() {
        // RULES D-13
        let wizards = Wizards::from_toml(DEFAULT_WIZARDS_TOML).expect("config/wizards.toml is valid");
        let apprentice = wizards.get("apprentice").expect("Apprentice present");
        assert_eq!(apprentice, &Wizard::apprentice_with(apprentice.description.clone()));
        assert!(!apprentice.house);
        let house: Vec<&Wizard> = wizards.iter().filter(|w| w.house).collect();
        assert!((2..=3).contains(&house.len()));
        for wizard in house {
            assert!(!wizard.favours.is_empty(), "{} has favours", wizard.name);
            assert_eq!(wizard.pool.total(), apprentice.pool.total(), "{} keeps the total fair", wizard.name);
        }
    }

    #[test]
    fn d13_favour_bonus_counts_each_favoured_attribute() {
        // RULES D-13
        let wizard = Wizard {
            favours: vec![
                Favour { attribute: Element::Thunder, bonus: 2 },
                Favour { attribute: Element::Wind, bonus: 2 },
            ],
            ..Wizard::apprentice()
        };
        assert_eq!(wizard.favour_bonus(&[Element::Thunder, Element::Wind]), 4);
        assert_eq!(wizard.favour_bonus(&[Element::Wind]), 2);
        assert_eq!(wizard.favour_bonus(&[]), 0);
    }

    #[test]
    fn bad_lists_are_refused_with_clear_errors() {
        let one = |body: &str| {
            Wizards::from_toml(&format!("[[wizard]]\nname = \"Apprentice\"\npool = {{ fire = 1 }}\n{body}"))
        };
        assert!(one("").is_ok());
        assert_eq!(
            one("[[wizard]]\nname = \"APPRENTICE\"\npool = { fire = 1 }"),
            Err(WizardError::DuplicateName("APPRENTICE".into()))
        );
        assert_eq!(
            Wizards::from_toml("[[wizard]]\nname = \"Pyro\"\npool = { fire = 1 }"),
            Err(WizardError::MissingApprentice)
        );
        assert_eq!(
            Wizards::from_toml("[[wizard]]\nname = \"Apprentice\"\npool = { void = 3 }"),
            Err(WizardError::EmptyPool("Apprentice".into()))
        );
        assert!(matches!(
            one("favours = [{ attribute = \"void\", bonus = 1 }]"),
            Err(WizardError::BadFavour { .. })
        ));
        assert!(matches!(
            Wizards::from_toml("[[wizard]]\nname = \"Apprentice\"\npool = { fyre = 1 }"),
            Err(WizardError::Toml(_))
        ));
        assert!(matches!(
            Wizards::from_toml("[[wizard]]\nname = \"Two Words\"\npool = { fire = 1 }"),
            Err(WizardError::BadName(_))
        ));
        assert_eq!(Wizards::from_toml(""), Err(WizardError::Empty));
    }

    #[test]
    fn pools_take_until_empty() {
        let mut pool = Pool { fire: 1, ..Pool::default() };
        assert!(!pool.is_empty());
        assert!(pool.take(Element::Fire));
        assert!(!pool.take(Element::Fire));
        assert!(pool.is_empty());
    }

    impl Wizard {
        fn apprentice_with(description: String) -> Wizard {
            Wizard { description, ..Wizard::apprentice() }
        }
    }
}
