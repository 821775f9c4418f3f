//! Reading the outbox on PostgreSQL, as SQLite's store does (`store::outbox`): a row that
//! does not read is set aside at start (moved, exactly as stored, to `outbox_set_aside`
//! with why, logged, never sent), and `verify` checks the rows without moving them.

use spellbridge_core::NetworkId;

use super::super::outbox::{self, BadRow};
use super::super::{Queued, StoreError};
use super::PgStore;

impl PgStore {
    /// Every message waiting in the outbox, oldest first, and the rows that do not read,
    /// which the leading daemon sets aside (a store that holds no lease leaves them).
    pub fn pending_checked(&self) -> Result<(Vec<Queued>, Vec<BadRow>), StoreError> {
        let (queued, bad) = self.read_outbox(None)?;
        if bad.is_empty() || self.fence.is_none() {
            return Ok((queued, bad));
        }
        let rows: Vec<(i64, String)> = bad.iter().map(|row| (row.id, row.reason.clone())).collect();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
        self.call("setting outbox rows aside", move |client| {
            Box::pin(async move {
                let transaction = client.transaction().await?;
                for (id, reason) in &rows {
                    transaction
                        .execute(
                            "INSERT INTO outbox_set_aside (id, network, destination, text, reason, set_aside_at)
                             SELECT id, network, destination, text, $2, $3 FROM outbox WHERE id = $1
                             ON CONFLICT (id) DO UPDATE SET reason = excluded.reason, set_aside_at = excluded.set_aside_at",
                            &[id, reason, &now],
                        )
                        .await?;
                    transaction.execute("DELETE FROM outbox WHERE id = $1", &[id]).await?;
                }
                transaction.commit().await
            })
        })?;
        outbox::tell_set_aside(&bad);
        Ok((queued, bad))
    }

    /// Checks every outbox row without changing anything; with `networks`, a row for a
    /// network not among them is a problem too.
    pub fn check_outbox(&self, networks: Option<&[NetworkId]>) -> Result<Vec<BadRow>, StoreError> {
        self.read_outbox(networks).map(|(_, bad)| bad)
    }

    /// How many rows wait in the outbox.
    pub fn pending_count(&self) -> Result<usize, StoreError> {
        let count: i64 = self.call("counting the outbox", move |client| {
            Box::pin(async move { Ok(client.query_one("SELECT count(*) FROM outbox", &[]).await?.get(0)) })
        })?;
        Ok(usize::try_from(count).unwrap_or(0))
    }

    /// The rows set aside at earlier starts, with why.
    pub fn set_aside_rows(&self) -> Result<Vec<BadRow>, StoreError> {
        self.call("reading the outbox rows set aside", move |client| {
            Box::pin(async move {
                let rows = client.query("SELECT id, reason FROM outbox_set_aside ORDER BY id", &[]).await?;
                Ok(rows.into_iter().map(|r| BadRow { id: r.get(0), reason: r.get(1) }).collect())
            })
        })
    }

    fn read_outbox(&self, networks: Option<&[NetworkId]>) -> Result<(Vec<Queued>, Vec<BadRow>), StoreError> {
        let rows: Vec<(i64, String, String, String)> = self.call("reading the outbox", move |client| {
            Box::pin(async move {
                let rows = client
                    .query("SELECT id, network, destination, text FROM outbox ORDER BY id", &[])
                    .await?;
                Ok(rows.into_iter().map(|r| (r.get(0), r.get(1), r.get(2), r.get(3))).collect())
            })
        })?;
        let (mut queued, mut bad) = (Vec::new(), Vec::new());
        for (id, network, destination, text) in rows {
            match outbox::parse_text(&network, &destination, &text).and_then(|o| outbox::known(o, networks)) {
                Ok(outbound) => queued.push(Queued { id, outbound }),
                Err(reason) => bad.push(BadRow { id, reason }),
            }
        }
        Ok((queued, bad))
    }
}
