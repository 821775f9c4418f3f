//! The spellbridge binary.
fn main() {}
