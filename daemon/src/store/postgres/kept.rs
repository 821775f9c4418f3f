//! What the daemon keeps beside the games on PostgreSQL (issue 34), as SQLite keeps it:
//! the relayed lines' ids (`relayed`), the speakers' latest lines (`latest`), the derived
//! ratings (`ratings`), IRC STS policies (`sts`) and Matrix appservice transactions
//! (`appservice_txns`).
//!
//! None of it is a move: it is written outside the fenced commits, as SQLite writes it
//! without waiting for the disk. A daemon that lost its lease stops acting, but its last
//! such writes may still land; each is a cache the next leader refreshes (ratings are
//! derived again at its start, lines are learned again as people speak).

use spellbridge_core::{NetworkId, RoomId, Timestamp};

use super::super::StoreError;
use super::super::ratings::Ratings;
use super::super::relayed::RelayedLine;
use super::PgStore;
use crate::journal::Entry;
use crate::relay::replies::{LATEST, LEARNED, LatestLine, REPLY_WITHIN};
use crate::router::Router;
use crate::turn::Place;

impl PgStore {
    /// Keeps the ids of lines relayed (see [`super::super::SqliteStore::keep_relayed`]);
    /// only the latest [`LEARNED`] are kept.
    pub fn keep_relayed(&self, lines: &[RelayedLine]) -> Result<(), StoreError> {
        let rows: Vec<(String, String, String, String)> = lines
            .iter()
            .map(|(network, id, line)| {
                (network.as_str().to_owned(), id.clone(), line.name.clone(), line.text.clone())
            })
            .collect();
        self.call("keeping relayed lines' ids", move |client| {
            Box::pin(async move {
                let transaction = client.transaction().await?;
                let insert = transaction
                    .prepare(
                        "INSERT INTO relayed_lines (network, message_id, name, words) VALUES ($1, $2, $3, $4)
                         ON CONFLICT (network, message_id) DO UPDATE SET name = excluded.name, words = excluded.words",
                    )
                    .await?;
                for (network, id, name, words) in &rows {
                    transaction.execute(&insert, &[network, id, name, words]).await?;
                }
                transaction
                    .execute(
                        "DELETE FROM relayed_lines WHERE id <= (SELECT MAX(id) FROM relayed_lines) - $1",
                        &[&(LEARNED as i64)],
                    )
                    .await?;
                transaction.commit().await
            })
        })
    }

    /// The relayed lines' ids kept, oldest first.
    pub fn relayed(&self) -> Result<Vec<RelayedLine>, StoreError> {
        self.call("reading relayed lines' ids", move |client| {
            Box::pin(async move {
                let rows = client
                    .query("SELECT network, message_id, name, words FROM relayed_lines ORDER BY id", &[])
                    .await?;
                Ok(rows
                    .into_iter()
                    .map(|r| {
                        let line = spellbridge_core::Relayed { name: r.get(2), text: r.get(3) };
                        (NetworkId::new(r.get::<_, String>(0)), r.get(1), line)
                    })
                    .collect())
            })
        })
    }

    /// Keeps the speakers' latest lines (one per speaker and room, only fresh ones, at
    /// most [`LATEST`]; see [`super::super::SqliteStore::keep_latest`]).
    pub fn keep_latest(&self, lines: &[LatestLine]) -> Result<(), StoreError> {
        let Some(newest) = lines.iter().map(|line| line.at).max() else { return Ok(()) };
        let rows: Vec<(String, String, String, String, i64)> = lines
            .iter()
            .map(|l| {
                (
                    l.place.network.as_str().to_owned(),
                    l.place.room.as_str().to_owned(),
                    l.name.clone(),
                    l.id.clone(),
                    l.at.0,
                )
            })
            .collect();
        self.call("keeping speakers' latest lines", move |client| {
            Box::pin(async move {
                let transaction = client.transaction().await?;
                let upsert = transaction
                    .prepare(
                        "INSERT INTO latest_lines (network, room, name, message_id, at) VALUES ($1, $2, $3, $4, $5)
                         ON CONFLICT (network, room, name) DO UPDATE SET message_id = excluded.message_id, at = excluded.at",
                    )
                    .await?;
                for (network, room, name, id, at) in &rows {
                    transaction.execute(&upsert, &[network, room, name, id, at]).await?;
                }
                transaction.execute("DELETE FROM latest_lines WHERE at < $1", &[&(newest.0 - REPLY_WITHIN)]).await?;
                transaction
                    .execute(
                        "DELETE FROM latest_lines WHERE (network, room, name) IN
                         (SELECT network, room, name FROM latest_lines
                          ORDER BY at DESC, network, room, name OFFSET $1)",
                        &[&(LATEST as i64)],
                    )
                    .await?;
                transaction.commit().await
            })
        })
    }

    /// The speakers' latest lines kept, oldest first.
    pub fn latest(&self) -> Result<Vec<LatestLine>, StoreError> {
        self.call("reading speakers' latest lines", move |client| {
            Box::pin(async move {
                let rows = client
                    .query(
                        "SELECT network, room, name, message_id, at FROM latest_lines ORDER BY at, network, room, name",
                        &[],
                    )
                    .await?;
                Ok(rows
                    .into_iter()
                    .map(|r| LatestLine {
                        place: Place {
                            network: NetworkId::new(r.get::<_, String>(0)),
                            room: RoomId::new(r.get::<_, String>(1)),
                        },
                        name: r.get(2),
                        id: r.get(3),
                        at: Timestamp(r.get(4)),
                    })
                    .collect())
            })
        })
    }

    /// Puts the kept latest lines and relayed lines' ids into `router` (a failure is
    /// logged: the daemon plays on without them, as on SQLite).
    pub(super) fn load_relayed(&self, router: &mut Router) {
        match self.latest() {
            Ok(lines) => router.recall_latest(lines),
            Err(error) => tracing::warn!(%error, "the speakers' latest lines do not read"),
        }
        match self.relayed() {
            Ok(lines) => {
                for (network, id, line) in lines {
                    router.learn_relayed(&network, &id, line);
                }
            }
            Err(error) => tracing::warn!(%error, "the relayed lines' ids do not read"),
        }
    }

    /// The STS policy kept for `host`: its port and expiry in Unix seconds.
    pub(in crate::store) fn sts_policy(&self, host: &str) -> Result<Option<(i64, i64)>, StoreError> {
        let host = host.to_owned();
        self.call("reading an STS policy", move |client| {
            Box::pin(async move {
                let row = client
                    .query_opt("SELECT port, expires FROM sts_policies WHERE host = $1", &[&host])
                    .await?;
                Ok(row.map(|r| (i64::from(r.get::<_, i32>(0)), r.get(1))))
            })
        })
    }

    /// Keeps (or, with `None`, removes) the STS policy for `host`: port, expiry.
    pub(in crate::store) fn set_sts_policy(
        &self,
        host: &str,
        policy: Option<(u16, i64)>,
    ) -> Result<(), StoreError> {
        let host = host.to_owned();
        self.call("keeping an STS policy", move |client| {
            Box::pin(async move {
                match policy {
                    Some((port, expires)) => client
                        .execute(
                            "INSERT INTO sts_policies (host, port, expires) VALUES ($1, $2, $3)
                             ON CONFLICT (host) DO UPDATE SET port = excluded.port, expires = excluded.expires",
                            &[&host, &i32::from(port), &expires],
                        )
                        .await
                        .map(drop),
                    None => client.execute("DELETE FROM sts_policies WHERE host = $1", &[&host]).await.map(drop),
                }
            })
        })
    }

    /// True when this appservice transaction was taken in before.
    pub(in crate::store) fn txn_seen(&self, network: &str, txn: &str) -> Result<bool, StoreError> {
        let (network, txn) = (network.to_owned(), txn.to_owned());
        self.call("reading appservice transactions", move |client| {
            Box::pin(async move {
                let row = client
                    .query_opt(
                        "SELECT 1 FROM appservice_txns WHERE network = $1 AND txn_id = $2",
                        &[&network, &txn],
                    )
                    .await?;
                Ok(row.is_some())
            })
        })
    }

    /// Notes an appservice transaction as taken in.
    pub(in crate::store) fn note_txn(&self, network: &str, txn: &str) -> Result<(), StoreError> {
        let (network, txn) = (network.to_owned(), txn.to_owned());
        self.call("keeping an appservice transaction", move |client| {
            Box::pin(async move {
                client
                    .execute(
                        "INSERT INTO appservice_txns (network, txn_id) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                        &[&network, &txn],
                    )
                    .await
                    .map(drop)
            })
        })
    }
}

impl Ratings for PgStore {
    fn entries(&self) -> Result<Vec<Entry>, StoreError> {
        self.journal()
    }

    fn named(&self, key: &str) -> Result<Option<String>, StoreError> {
        self.meta(key)
    }

    fn keep_named(&self, key: &str, value: &str) -> Result<(), StoreError> {
        let (key, value) = (key.to_owned(), value.to_owned());
        self.call("keeping a named value", move |client| {
            Box::pin(async move {
                client
                    .execute(
                        "INSERT INTO meta (key, value) VALUES ($1, $2)
                         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                        &[&key, &value],
                    )
                    .await
                    .map(drop)
            })
        })
    }

    fn row_error(&self, detail: String) -> StoreError {
        self.bad_row(detail)
    }
}
