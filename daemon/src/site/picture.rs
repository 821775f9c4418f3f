//! `/tables/{id}/board.png`: the table's board picture, drawn by `crate::board` from its
//! public entry ([`super::public::entry`]: the board never sees a queued spell), on the
//! blocking pool, its labels in the language `?lang=` asks for (English by default). The
//! last pictures are kept by table, language and sequence, so a page opened by many
//! spectators after a move is drawn once.

use hyper::body::Bytes;
use hyper::{Response, StatusCode};

use super::error::SiteError;
use super::names::Names;
use super::page::Body;
use super::page::{failed, not_found, plain, whole};
use super::public;
use super::shared::Site;
use crate::journal::TableId;
use spellbridge_core::Language;

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
    let registry = site.registry();
    let entry = names.named(public::entry(&registry, &row), &super::names::ids(&row.snapshot));
    // Drawn by the build the table plays (its snapshot names it; the entry's state is
    // its public view already).
    let state = row.snapshot.get("state").unwrap_or(&serde_json::Value::Null);
    let Some(game) = crate::games::played(&registry, &row.game, state) else {
        return Ok(Drawn::NoBoard(format!("this spellbridge does not know the game `{}`", row.game)));
    };
    match site.inner.board.png_by(&*game, &entry, language) {
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
        self.inner.pictures.len()
    }
}
