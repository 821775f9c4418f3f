//! The Duel's command and token parser never panics.
#![no_main]
use libfuzzer_sys::fuzz_target;
use spellbridge_core::games::duel;

fuzz_target!(|text: &str| {
    let _ = duel::command::parse(text);
});
