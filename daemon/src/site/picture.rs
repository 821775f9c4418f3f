//! `/tables/{id}/board.png`: the table's board picture, drawn by `crate::board` from its
//! public entry ([`super::public::entry`]: the board never sees a queued spell), on the
//! blocking pool, its labels in the language `?lang=` asks for (English by default). The
//! last pictures are kept by table, language and sequence, so a page opened by many
//! spectators after a move is drawn once.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

use hyper::body::Bytes;
use hyper::{Response, StatusCode};

use super::names::Names;
use super::page::{failed, not_found, plain, whole};
use super::{Body, Site, SiteError, public};
use crate::journal::TableId;
use spellbridge_core::Language;

/// How many tables' pictures are kept.
const KEPT: usize = 32;

/// The latest picture of each recently drawn table in each language: its sequence and PNG.
#[derive(Default)]
pub struct Cache {
    pictures: Mutex<BTreeMap<(TableId, Language), (u64, Bytes)>>,
}

impl Cache {
    fn get(&self, id: TableId, language: Language, sequence: u64) -> Option<Bytes> {
        let pictures = self.pictures.lock().unwrap_or_else(PoisonError::into_inner);
        pictures.get(&(id, language)).filter(|(kept, _)| *kept == sequence).map(|(_, png)| png.clone())
    }

    fn put(&self, id: TableId, language: Language, sequence: u64, png: Bytes) {
        let mut pictures = self.pictures.lock().unwrap_or_else(PoisonError::into_inner);
        if pictures.len() >= KEPT && !pictures.contains_key(&(id, language)) {
            // The oldest table goes first: newer tables are the ones being watched.
            pictures.pop_first();
        }
        pictures.insert((id, language), (sequence, png));
    }
}

/// What drawing found.
enum Drawn {
    Png(Bytes),
    NoTable,
    NoBoard(String),
}

/// The answer to `/tables/{id}/board.png`.
pub async fn answer(site: &Site, id: TableId, language: Language) -> Response<Body> {
    match site.blocking(move |site| draw(site, id, language)).await {
        Ok(Drawn::Png(png)) => whole(StatusCode::OK, png, "image/png"),
        Ok(Drawn::NoTable) => not_found(spellbridge_core::Language::En),
        Ok(Drawn::NoBoard(reason)) => {
            tracing::debug!(table = id, %reason, "no board picture");
            plain(StatusCode::NOT_FOUND, "this table has no board picture\n")
        }
        Err(error) => failed(&error),
    }
}

fn draw(site: &Site, id: TableId, language: Language) -> Result<Drawn, SiteError> {
    let Some(row) = site.reader().table(id)? else { return Ok(Drawn::NoTable) };
    if site.hidden().hides(&row.network, &row.room) {
        return Ok(Drawn::NoTable);
    }
    let sequence = row.sequence();
    if let Some(png) = site.inner.pictures.get(id, language, sequence) {
        return Ok(Drawn::Png(png));
    }
    let names = Names::kept(site)?;
    let entry = names.named(public::entry(site.registry(), &row), &super::names::ids(&row.snapshot));
    match site.inner.board.png_in(&entry, language) {
        Ok(picture) => {
            let png = Bytes::from(picture.png);
            site.inner.pictures.put(id, language, sequence, png.clone());
            Ok(Drawn::Png(png))
        }
        Err(error) => Ok(Drawn::NoBoard(error.to_string())),
    }
}

impl Site {
    /// How many pictures are kept now (tests).
    pub fn pictures_kept(&self) -> usize {
        self.inner.pictures.pictures.lock().unwrap_or_else(PoisonError::into_inner).len()
    }
}
