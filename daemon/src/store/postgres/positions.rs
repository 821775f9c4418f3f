//! The Matrix `/sync` positions kept in PostgreSQL (table `matrix_sync_positions`,
//! migration 13): read by a daemon that takes over, written by the leader after each sync
//! response it handled (`store::sync_positions`).
//!
//! A position is written under the lease's fence, as a move is: in a transaction that
//! first passes [`leader::fenced`] (the lease row `FOR KEY SHARE`, still this daemon's
//! epoch and unexpired), so a leader paused between its own lease check (the transport's
//! `may_send`) and the write cannot overwrite the newer position of the daemon that took
//! over: its write is refused, and a take-over waits for a write that passed the fence.

use super::PgStore;
use crate::leader::{self, FenceError};
use crate::store::StoreError;

/// Keeps a network's position, the latest one winning.
const KEEP: &str = "INSERT INTO matrix_sync_positions (network, next_batch) VALUES ($1, $2)
     ON CONFLICT (network) DO UPDATE SET next_batch = excluded.next_batch";

impl PgStore {
    /// The `/sync` position the leader last handled on `network`, if any.
    pub(in crate::store) fn sync_position(&self, network: &str) -> Result<Option<String>, StoreError> {
        let network = network.to_owned();
        self.call("reading the Matrix sync position", move |client| {
            Box::pin(async move {
                let row = client
                    .query_opt("SELECT next_batch FROM matrix_sync_positions WHERE network = $1", &[&network])
                    .await?;
                Ok(row.map(|row| row.get(0)))
            })
        })
    }

    /// Keeps `next_batch` as the `/sync` position handled on `network`, under this store's
    /// fence: refused ([`StoreError::Fenced`]) once the lease is another daemon's or ran
    /// out, and ([`StoreError::NoLease`]) by a store that holds no lease.
    pub(in crate::store) fn keep_sync_position(
        &self,
        network: &str,
        next_batch: &str,
    ) -> Result<(), StoreError> {
        let Some(fence) = self.fence().cloned() else {
            return Err(StoreError::NoLease { target: self.url().shown().to_owned() });
        };
        let (network, next_batch) = (network.to_owned(), next_batch.to_owned());
        let kept = self.call("keeping the Matrix sync position", move |client| {
            Box::pin(async move {
                let transaction = client.transaction().await?;
                match leader::fenced(&transaction, &fence).await {
                    Ok(()) => {}
                    Err(FenceError::Sql(source)) => return Err(source),
                    // Dropped: rolled back at once (the connection's thread runs on).
                    Err(stale) => return Ok(Err(stale)),
                }
                transaction.execute(KEEP, &[&network, &next_batch]).await?;
                transaction.commit().await?;
                Ok(Ok(()))
            })
        })?;
        kept.map_err(|source| StoreError::Fenced { source })
    }
}
