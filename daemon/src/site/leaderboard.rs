//! `/leaderboard`: for each game with records (`ratings::words::ranked`), a challenge
//! game's players by Glicko-2 rating or an open table's by rounds won, as
//! `crate::ratings` derives them from the journal (linked identities count as one
//! player). The games of hidden rooms are left out of the site's derivation, so a table
//! the site does not show cannot be read back from a rating either. The derived summary
//! is kept until the journal grows.

use std::collections::BTreeSet;
use std::sync::Arc;

use hyper::Response;
use maud::html;
use spellbridge_core::locale::{self, Args};
use spellbridge_core::{Language, TableKind};

use super::error::SiteError;
use super::names::Names;
use super::page::Body;
use super::page::{layout, ok};
use super::shared::Site;
use super::words::words;
use crate::journal::TableId;
use crate::ratings::words::words_of;
use crate::ratings::{self, Summary};

/// The summary of every shown table's games.
pub fn summary(site: &Site) -> Result<Arc<Summary>, SiteError> {
    let head = site.reader().journal_head()?;
    let cache = &site.inner.standings;
    if let Some(summary) = cache.at(head) {
        return Ok(summary);
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
    let summary = match ratings::derive(&site.registry(), site.inner.scopes.clone(), shown) {
        Ok(summary) => summary,
        Err(error) => {
            tracing::warn!(%error, "the leaderboard could not be derived from the journal");
            Summary::default()
        }
    };
    let summary = Arc::new(summary);
    cache.keep(head, summary.clone());
    Ok(summary)
}

/// The page: one table per game with records, in the order `!top` offers them.
pub fn page(site: &Site, language: Language) -> Result<Option<Response<Body>>, SiteError> {
    let summary = summary(site)?;
    let w = words(language);
    let names = Names::kept(site)?;
    let registry = site.registry();
    let boards = ratings::words::ranked(&registry).into_iter().map(|plugin| {
        let game = plugin.name();
        let board = words_of(plugin).board;
        let heading = locale::text(language, board, &Args::new().text("game", plugin.name_in(language)).read_by(board));
        let table = match plugin.kind() {
            TableKind::Challenge { .. } => {
                let rated = summary.challenge_leaderboard(game);
                html! {
                    @if rated.is_empty() { p.sub { (w.none) } } @else { div.wide {
                        table #(game) {
                            thead { tr {
                                th.n { "#" } th { (w.players) } th.n { (w.rating) } th.n { "RD" } th.n { (w.games) }
                                th.n { (w.record) } th.n { (w.streak) } th { (w.favourite) }
                            } }
                            tbody {
                                @for (place, (player, d)) in rated.iter().enumerate() {
                                    tr {
                                        td.n { (place + 1) }
                                        td { (names.shown(player.as_str())) }
                                        td.n { (format!("{:.0}", d.rating.rating)) }
                                        td.n { (format!("{:.0}", d.rating.deviation)) }
                                        td.n { (d.games) }
                                        td.n { (d.wins) "–" (d.losses) "–" (d.draws) }
                                        td.n { (d.longest_streak) }
                                        td { (plugin.choice_in(&d.favourite, language)) }
                                    }
                                }
                            }
                        }
                    } }
                }
            }
            TableKind::Open => {
                let played = summary.open_leaderboard(game);
                html! {
                    @if played.is_empty() { p.sub { (w.none) } } @else { div.wide {
                        table #(game) {
                            thead { tr { th.n { "#" } th { (w.players) } th.n { (w.seasons_won) } th.n { (w.seasons) } } }
                            tbody {
                                @for (place, (player, t)) in played.iter().enumerate() {
                                    tr { td.n { (place + 1) } td { (names.shown(player.as_str())) } td.n { (t.won) } td.n { (t.rounds) } }
                                }
                            }
                        }
                    } }
                }
            }
        };
        (heading, table)
    });
    let boards: Vec<_> = boards.collect();
    let main = html! {
        main {
            h1 { (w.leaderboard) }
            @for (heading, table) in &boards {
                h2 { (heading) }
                (table)
            }
        }
    };
    Ok(Some(ok(layout(language, w.leaderboard, main))))
}
