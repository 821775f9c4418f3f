//! Which catalogue files there are: one [`Area`] per file, each file in every language,
//! compiled in. Adding a file is one line of [`AREAS`] (and the file in each
//! `locales/<language>/` folder; the catalogue checks fail until both exist and agree); a
//! game's own file comes with the game ([`crate::games::Shipped::CATALOGUE`]), and
//! [`all`] gives both.

use crate::language::Language;

/// One catalogue file, in each language.
#[derive(Clone, Copy, Debug)]
pub struct Area {
    /// Its name: the file's stem (`duel` for `duel.ftl`), the first word of its ids.
    pub name: &'static str,
    /// The English file's text.
    pub en: &'static str,
    /// The Simplified Chinese file's text.
    pub zh_cn: &'static str,
}

impl Area {
    /// The file's text in `language`.
    pub fn source(&self, language: Language) -> &'static str {
        match language {
            Language::En => self.en,
            Language::ZhCn => self.zh_cn,
        }
    }
}

/// An [`Area`] from `locales/en/<name>.ftl` and `locales/zh-CN/<name>.ftl`.
macro_rules! area {
    ($name:literal) => {
        Area {
            name: $name,
            en: include_str!(concat!("../../../locales/en/", $name, ".ftl")),
            zh_cn: include_str!(concat!("../../../locales/zh-CN/", $name, ".ftl")),
        }
    };
}

/// Every catalogue file.
pub const AREAS: &[Area] = &[
    area!("common"),
    area!("duel"),
    area!("thaum"),
    area!("lobby"),
    area!("link"),
    area!("router"),
    area!("board"),
    area!("grammar"),
    area!("records"),
    area!("names"),
    area!("notice"),
    area!("component"),
];

/// Every catalogue file: [`AREAS`], then each game's own ([`crate::games::CATALOGUES`]).
pub fn all() -> impl Iterator<Item = &'static Area> + Clone {
    AREAS.iter().chain(crate::games::CATALOGUES.iter().flatten())
}
