//! The languages spellbridge speaks (issue 19): which one a destination is told in.
//!
//! A [`Language`] is part of a destination's [`Presentation`](crate::Presentation): each
//! room and each player's private conversation has one, English unless the config or the
//! room (`!lang`) chose another. Its code is the BCP 47 tag users write in the config.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A language spellbridge can answer in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Language {
    /// English, the default.
    #[default]
    #[serde(rename = "en")]
    En,
    /// Simplified Chinese: the Duel's own language (its rules were written in it).
    #[serde(rename = "zh-CN")]
    ZhCn,
}

impl Language {
    /// Every language, in the order `!lang` lists them.
    pub const ALL: [Language; 2] = [Language::En, Language::ZhCn];

    /// The BCP 47 tag: `en`, `zh-CN`.
    pub fn code(self) -> &'static str {
        match self {
            Language::En => "en",
            Language::ZhCn => "zh-CN",
        }
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// A language name that is not one spellbridge speaks.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown language {0:?}: use en or zh-CN")]
pub struct UnknownLanguage(pub String);

impl FromStr for Language {
    type Err = UnknownLanguage;

    /// Reads a tag as users type it: `en`, `english`, `zh`, `zh-CN`, `zh_cn`, `中文`
    /// (ASCII case ignored).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.trim().to_ascii_lowercase().replace('_', "-").as_str() {
            "en" | "en-us" | "en-gb" | "english" => Ok(Language::En),
            "zh" | "zh-cn" | "zh-hans" | "chinese" | "中文" | "简体中文" => Ok(Language::ZhCn),
            _ => Err(UnknownLanguage(text.to_owned())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_read_as_users_type_them() {
        for tag in ["en", "EN", "english", "en-GB"] {
            assert_eq!(tag.parse(), Ok(Language::En), "{tag}");
        }
        for tag in ["zh", "zh-CN", "zh_cn", "中文", "ZH-Hans"] {
            assert_eq!(tag.parse(), Ok(Language::ZhCn), "{tag}");
        }
        assert_eq!("fr".parse::<Language>(), Err(UnknownLanguage("fr".into())));
    }

    #[test]
    fn serialised_as_the_config_writes_it() {
        assert_eq!(serde_json::to_string(&Language::ZhCn).expect("serialises"), "\"zh-CN\"");
        assert_eq!(serde_json::from_str::<Language>("\"en\"").expect("reads"), Language::En);
        assert_eq!(Language::ZhCn.to_string(), "zh-CN");
    }
}
