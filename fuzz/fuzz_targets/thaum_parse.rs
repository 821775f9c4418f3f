//! Thaum's command parser never panics, and what it accepts it accepts again in the
//! same form.
#![no_main]
use libfuzzer_sys::fuzz_target;
use spellbridge_core::games::thaum;

fuzz_target!(|text: &str| {
    if let Ok(command) = thaum::parse(text) {
        assert_eq!(thaum::parse(text), Ok(command));
    }
});
