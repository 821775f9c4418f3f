//! `/leaderboard`: the Duel players by Glicko-2 rating and the Thaum players by seasons
//! won, as `crate::ratings` derives them from the journal (linked identities count as one
//! player). The games of hidden rooms are left out of the site's derivation, so a table
//! the site does not show cannot be read back from a rating either. The derived summary
//! is kept until the journal grows.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError};

use hyper::Response;
use maud::html;
use spellbridge_core::Language;
use spellbridge_core::games::duel::wizard;

use super::names::Names;
use super::page::{layout, ok};
use super::words::words;
use super::{Body, Site, SiteError};
use crate::journal::TableId;
use crate::ratings::{self, Summary};

/// The last summary derived, and the journal row it was derived up to.
#[derive(Default)]
pub struct Cache {
    kept: Mutex<Option<(i64, Arc<Summary>)>>,
}

impl Cache {
    /// Forgets the kept summary (the hidden rooms changed).
    pub fn clear(&self) {
        *self.kept.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }
}

/// The summary of every shown table's games.
pub fn summary(site: &Site) -> Result<Arc<Summary>, SiteError> {
    let head = site.reader().journal_head()?;
    let cache = &site.inner.standings;
    if let Some((at, summary)) = &*cache.kept.lock().unwrap_or_else(PoisonError::into_inner)
        && *at == head
    {
        return Ok(summary.clone());
    }
    let hidden = site.hidden();
    let hidden_tables: BTreeSet<TableId> = site
        .reader()
        .places()?
        .into_iter()
        .filter(|(_, network, room)| hidden.hides(network, room))
        .map(|(id, ..)| id)
        .collect();
    let (head, journal) = site.reader().journal()?;
    let shown = journal.iter().filter(|entry| entry.table().is_none_or(|id| !hidden_tables.contains(&id)));
    let summary = match ratings::derive(site.registry(), site.inner.scopes.clone(), shown) {
        Ok(summary) => summary,
        Err(error) => {
            tracing::warn!(%error, "the leaderboard could not be derived from the journal");
            Summary::default()
        }
    };
    let summary = Arc::new(summary);
    *cache.kept.lock().unwrap_or_else(PoisonError::into_inner) = Some((head, summary.clone()));
    Ok(summary)
}

/// The page.
pub fn page(site: &Site, language: Language) -> Result<Option<Response<Body>>, SiteError> {
    let summary = summary(site)?;
    let w = words(language);
    let duel = summary.duel_leaderboard();
    let thaum = summary.thaum_leaderboard();
    let names = Names::kept(site)?;
    let main = html! {
        main {
            h1 { (w.leaderboard) }
            h2 { (w.duel_ranking) }
            @if duel.is_empty() { p.sub { (w.none) } } @else { div.wide {
                table #duel {
                    thead { tr {
                        th.n { "#" } th { (w.players) } th.n { (w.rating) } th.n { "RD" } th.n { (w.games) }
                        th.n { (w.record) } th.n { (w.streak) } th { (w.favourite) }
                    } }
                    tbody {
                        @for (place, (player, record)) in duel.iter().enumerate() {
                            @if let Some(d) = &record.duel {
                                tr {
                                    td.n { (place + 1) }
                                    td { (names.shown(player.as_str())) }
                                    td.n { (format!("{:.0}", d.rating.rating)) }
                                    td.n { (format!("{:.0}", d.rating.deviation)) }
                                    td.n { (d.games) }
                                    td.n { (d.wins) "–" (d.losses) "–" (d.draws) }
                                    td.n { (d.longest_streak) }
                                    td { (wizard::name_in(&d.favourite_wizard, language)) }
                                }
                            }
                        }
                    }
                }
            } }
            h2 { (w.thaum_ranking) }
            @if thaum.is_empty() { p.sub { (w.none) } } @else { div.wide {
                table #thaum {
                    thead { tr { th.n { "#" } th { (w.players) } th.n { (w.seasons_won) } th.n { (w.seasons) } } }
                    tbody {
                        @for (place, (player, record)) in thaum.iter().enumerate() {
                            @if let Some(t) = &record.thaum {
                                tr { td.n { (place + 1) } td { (names.shown(player.as_str())) } td.n { (t.won) } td.n { (t.seasons) } }
                            }
                        }
                    }
                }
            } }
        }
    };
    Ok(Some(ok(layout(language, w.leaderboard, main))))
}
