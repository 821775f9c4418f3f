//! What the site keeps between requests, so many spectators after one move cost one
//! read and one drawing: the last board pictures ([`Pictures`]), the last table pages
//! ([`Pages`]) and the leaderboard's derived summary ([`Standings`]).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use hyper::body::Bytes;
use spellbridge_core::Language;

use crate::journal::TableId;
use crate::ratings::Summary;

/// How many tables' pictures are kept.
const PICTURES_KEPT: usize = 32;

/// The latest picture of each recently drawn table in each language: its sequence and PNG.
#[derive(Default)]
pub struct Pictures {
    pictures: Mutex<BTreeMap<(TableId, Language), (u64, Bytes)>>,
}

impl Pictures {
    pub(super) fn get(&self, id: TableId, language: Language, sequence: u64) -> Option<Bytes> {
        let pictures = self.pictures.lock().unwrap_or_else(PoisonError::into_inner);
        pictures.get(&(id, language)).filter(|(kept, _)| *kept == sequence).map(|(_, png)| png.clone())
    }

    pub(super) fn put(&self, id: TableId, language: Language, sequence: u64, png: Bytes) {
        let mut pictures = self.pictures.lock().unwrap_or_else(PoisonError::into_inner);
        if pictures.len() >= PICTURES_KEPT && !pictures.contains_key(&(id, language)) {
            // The oldest table goes first: newer tables are the ones being watched.
            pictures.pop_first();
        }
        pictures.insert((id, language), (sequence, png));
    }

    /// How many pictures are kept now.
    pub(super) fn len(&self) -> usize {
        self.pictures.lock().unwrap_or_else(PoisonError::into_inner).len()
    }
}

/// The last page written of each recently shown table, by language: after a move every
/// open page fetches the table's page again, and all of them get the one written first.
#[derive(Default)]
pub struct Pages {
    pages: Mutex<BTreeMap<(u64, Language), Written>>,
}

/// A written page: the table's sequence and whether it had finished, and the HTML.
type Written = (u64, bool, Bytes);

/// How many pages are kept.
const PAGES_KEPT: usize = 64;

impl Pages {
    pub(super) fn get(&self, key: (u64, Language), sequence: u64, finished: bool) -> Option<Bytes> {
        let pages = self.pages.lock().unwrap_or_else(PoisonError::into_inner);
        pages.get(&key).filter(|(s, f, _)| (*s, *f) == (sequence, finished)).map(|(_, _, html)| html.clone())
    }

    pub(super) fn put(&self, key: (u64, Language), sequence: u64, finished: bool, html: Bytes) {
        let mut pages = self.pages.lock().unwrap_or_else(PoisonError::into_inner);
        if pages.len() >= PAGES_KEPT && !pages.contains_key(&key) {
            pages.pop_first();
        }
        pages.insert(key, (sequence, finished, html));
    }
}

/// The last summary derived, and the journal row it was derived up to.
#[derive(Default)]
pub struct Standings {
    kept: Mutex<Option<(i64, Arc<Summary>)>>,
}

impl Standings {
    /// Forgets the kept summary (the hidden rooms changed).
    pub fn clear(&self) {
        *self.kept.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }

    /// The summary kept, if it was derived up to journal row `head`.
    pub(super) fn at(&self, head: i64) -> Option<Arc<Summary>> {
        let kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        kept.as_ref().filter(|(at, _)| *at == head).map(|(_, summary)| summary.clone())
    }

    /// Keeps `summary`, derived up to journal row `head`.
    pub(super) fn keep(&self, head: i64, summary: Arc<Summary>) {
        *self.kept.lock().unwrap_or_else(PoisonError::into_inner) = Some((head, summary));
    }
}
