//! The games that ship with spellbridge, each a [`crate::GamePlugin`].
//!
//! [`games!`] below is the one list of them: a line per game declares its module and
//! names its plugin, and the standard registry ([`standard`]), the message catalogues
//! ([`CATALOGUES`]) and the grammar's translated phrases ([`PHRASES`]) all read it. A new
//! game is a folder here, its locale files and one line in that list.

use crate::locale::Area;

/// What a shipped game brings besides its plugin, found through the [`games!`] list: its
/// own catalogue file and the Chinese for its declarations' phrases. Games whose words
/// are in the shared files (the Duel's and Thaum's, from before games had their own)
/// keep the defaults.
pub trait Shipped {
    /// The game's catalogue file (`locales/<language>/<game>.ftl`), compiled in.
    const CATALOGUE: Option<Area> = None;
    /// Each phrase of the game's command declarations (what a command needs, an
    /// argument as the usage line shows it, an example) with the catalogue message that
    /// says it, like [`crate::grammar::PHRASES`].
    const PHRASES: &'static [(&'static str, &'static str)] = &[];
}

/// Declares each game's module and builds the lists that read it.
macro_rules! games {
    ($($game:ident: $plugin:ident),* $(,)?) => {
        $(pub mod $game;)*

        /// Every game that ships, with its default options, in the order `!games` lists them.
        pub fn standard() -> Vec<Box<dyn crate::GamePlugin>> {
            vec![$(Box::new($game::$plugin::default())),*]
        }

        /// The games' own catalogue files ([`Shipped::CATALOGUE`]).
        pub const CATALOGUES: &[Option<Area>] = &[$(<$game::$plugin as Shipped>::CATALOGUE),*];

        /// The games' own translated phrases ([`Shipped::PHRASES`]).
        pub const PHRASES: &[&[(&str, &str)]] = &[$(<$game::$plugin as Shipped>::PHRASES),*];
    };
}

games! {
    thaum: ThaumPlugin,
    duel: DuelPlugin,
    nim: NimPlugin,
}

impl Shipped for thaum::ThaumPlugin {}
impl Shipped for duel::DuelPlugin {}

#[cfg(test)]
mod zh_cn_tests;
