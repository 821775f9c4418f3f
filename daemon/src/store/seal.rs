//! The seal on each stored snapshot: a running SHA-256 over the table's journal rows (the
//! *journal digest*, extended row by row as they are committed) and a SHA-256 over that
//! digest and the snapshot's text (the *seal*), both kept in the table's row.
//!
//! On start, a snapshot whose seal does not match it, or whose table's journal no longer
//! hashes to the digest sealed with it, was changed outside spellbridge (an edit in SQL, a
//! damaged disk): the table is rebuilt from its journal instead (`Store::load_checked`).
//! The digest covers each row's stored text (the `entry` and `events` columns), whatever
//! fields the journal's entries carry. It detects changes, not a forger: anyone who can
//! write the file can recompute SHA-256.

use sha2::{Digest as _, Sha256};

/// A SHA-256 value.
pub type Digest = [u8; 32];

/// The journal digest of a table with no journal rows yet.
pub const EMPTY: Digest = [0; 32];

/// The journal digest after one more row: SHA-256 over the previous digest and the row's
/// `entry` and `events` text, each preceded by its length (so no two rows hash alike).
pub fn extend(previous: &Digest, entry: &[u8], events: &[u8]) -> Digest {
    let mut hasher = Sha256::new();
    hasher.update(previous);
    for part in [entry, events] {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part);
    }
    hasher.finalize().into()
}

/// The seal over a table's journal digest and its snapshot's text.
pub fn seal(journal: &Digest, snapshot: &[u8]) -> Digest {
    let mut hasher = Sha256::new();
    hasher.update(b"spellbridge snapshot seal\0");
    hasher.update(journal);
    hasher.update(snapshot);
    hasher.finalize().into()
}

/// A digest as stored: lowercase hex.
pub fn to_hex(digest: &Digest) -> String {
    digest.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// A stored hex digest, if it is one.
pub fn from_hex(text: &str) -> Option<Digest> {
    if text.len() != 64 || !text.is_ascii() {
        return None;
    }
    let mut digest = EMPTY;
    for (i, byte) in digest.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(digest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips_and_rejects_what_is_not_a_digest() {
        let digest = extend(&EMPTY, b"{}", b"[]");
        assert_eq!(from_hex(&to_hex(&digest)), Some(digest));
        assert_eq!(from_hex("abc"), None);
        assert_eq!(from_hex(&"zz".repeat(32)), None);
    }

    #[test]
    fn the_digest_depends_on_every_row_and_where_its_parts_split() {
        let one = extend(&EMPTY, b"ab", b"c");
        assert_ne!(one, extend(&EMPTY, b"a", b"bc"), "the split between entry and events counts");
        assert_ne!(extend(&one, b"x", b""), extend(&EMPTY, b"x", b""), "earlier rows count");
        assert_ne!(seal(&one, b"{\"coins\":3}"), seal(&one, b"{\"coins\":300}"));
    }
}
