//! The Matrix `/sync` positions kept in PostgreSQL (table `matrix_sync_positions`,
//! migration 13): read by a daemon that takes over, written by the leader after each sync
//! response it handled (`store::sync_positions`).

use super::PgStore;
use crate::store::StoreError;

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

    /// Keeps `next_batch` as the `/sync` position handled on `network`.
    pub(in crate::store) fn keep_sync_position(
        &self,
        network: &str,
        next_batch: &str,
    ) -> Result<(), StoreError> {
        let (network, next_batch) = (network.to_owned(), next_batch.to_owned());
        self.call("keeping the Matrix sync position", move |client| {
            Box::pin(async move {
                client
                    .execute(
                        "INSERT INTO matrix_sync_positions (network, next_batch) VALUES ($1, $2)
                         ON CONFLICT (network) DO UPDATE SET next_batch = excluded.next_batch",
                        &[&network, &next_batch],
                    )
                    .await
                    .map(drop)
            })
        })
    }
}
