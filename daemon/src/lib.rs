//! The spellbridge daemon library.
