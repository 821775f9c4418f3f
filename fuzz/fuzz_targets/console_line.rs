//! The console's script-line reader never panics.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = spellbridge::console::read_line(text);
});
