//! Inbound formatting from the networks, read into rich text for relaying: mIRC codes
//! (IRC) and `formatted_body` HTML (Matrix). Neither may panic (the proptests in
//! `adapters/src/irc/format.rs` and `adapters/src/matrix/html.rs` check the text kept).
#![no_main]

use libfuzzer_sys::fuzz_target;
use spellbridge_adapters::irc::format as irc;
use spellbridge_adapters::matrix::html;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = irc::parse(text);
        let _ = html::html_to_rich(text);
    }
});
