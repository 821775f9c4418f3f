//! The games that ship with spellbridge, each a [`crate::GamePlugin`].

pub mod duel;
pub mod thaum;

#[cfg(test)]
mod zh_cn_tests;
