//! The daemon's lobby command parser never panics.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = spellbridge::lobby::parse(text);
});
