//! The boards' colours: one per Duel element (as the chat announcements colour them,
//! `Element::hue`) and one per Thaum, and the few neutral ones around them.

use spellbridge_core::games::duel::Element;

/// The picture's background.
pub const PAPER: &str = "#f7f3ea";
/// A panel's fill.
pub const PANEL: &str = "#ffffff";
/// Outlines and the track.
pub const LINE: &str = "#9a9184";
/// Body text.
pub const INK: &str = "#222222";
/// Secondary text.
pub const MUTED: &str = "#6b6459";
/// Text on a coloured chip.
pub const ON_CHIP: &str = "#ffffff";
/// The track's marker.
pub const MARKER: &str = "#7a2bb8";

/// An element's colour, as an `#rrggbb` string.
pub fn element(element: Element) -> &'static str {
    match element {
        Element::Water => "#2f6fd6",
        Element::Fire => "#d63a2f",
        Element::Thunder => "#c99a00",
        Element::Wind => "#2f9e4f",
        Element::Earth => "#8b5a2b",
        Element::Void => "#5c5c6e",
    }
}

/// A Thaum's colour, by its snapshot key (`fire`, `water`, `earth`, `air`).
pub fn thaum(key: &str) -> &'static str {
    match key {
        "fire" => "#d63a2f",
        "water" => "#2f6fd6",
        "earth" => "#8b5a2b",
        _ => "#3aa5b5",
    }
}

/// The (r, g, b) of an `#rrggbb` colour, for tests that read pixels back.
pub fn rgb(hex: &str) -> (u8, u8, u8) {
    let byte = |i: usize| u8::from_str_radix(hex.get(i..i + 2).unwrap_or("00"), 16).unwrap_or(0);
    (byte(1), byte(3), byte(5))
}
