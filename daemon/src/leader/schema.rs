//! Migrating the PostgreSQL schema: the store's one list of numbered migrations
//! (`store::schema::MIGRATIONS`, each step in SQLite's and PostgreSQL's SQL; step 12 makes
//! the leader lease, `migrations/0001_leader_lease.sql`, and the store's tables; step 14
//! makes the lease's epoch a key for the fence, `migrations/0014_lease_epoch_key.sql`), its
//! version recorded in `spellbridge_schema` (SQLite's in `PRAGMA user_version`).
//!
//! Two daemons may start at once on an empty database: the migrations run in one
//! transaction that first takes a *transaction*-level advisory lock, so the second waits
//! for the first and then finds the schema done. (Leadership itself never rests on an
//! advisory lock: see `lease.rs`.)

use tokio_postgres::Client;

use super::LeaseError;
use crate::store::schema::MIGRATIONS;

/// The key of the advisory lock the migrations serialise on ("spbridge" in ASCII).
const MIGRATION_LOCK: i64 = 0x7370_6272_6964_6765;

/// The schema version this build writes.
pub fn current_version() -> i32 {
    MIGRATIONS.len() as i32
}

/// Applies the migrations the database lacks, all in one transaction; refuses a database
/// whose schema is newer than this build knows.
pub async fn migrate(client: &mut Client) -> Result<(), LeaseError> {
    let sql = |what: &'static str| move |source| LeaseError::Sql { what, source };
    let transaction = client.transaction().await.map_err(sql("beginning the migration"))?;
    transaction
        .execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await
        .map_err(sql("waiting for another daemon's migration"))?;
    transaction
        .batch_execute(
            "CREATE TABLE IF NOT EXISTS spellbridge_schema (
                 single boolean PRIMARY KEY DEFAULT true CHECK (single),
                 version integer NOT NULL
             )",
        )
        .await
        .map_err(sql("creating spellbridge_schema"))?;
    let found: i32 = transaction
        .query_opt("SELECT version FROM spellbridge_schema", &[])
        .await
        .map_err(sql("reading the schema version"))?
        .map_or(0, |row| row.get(0));
    let known = current_version();
    if found > known {
        return Err(LeaseError::TooNew { found, known });
    }
    if found == known {
        // Ended here rather than left to `Drop`, whose ROLLBACK is only queued: the
        // advisory lock is released before this returns.
        return transaction.commit().await.map_err(sql("ending the schema check"));
    }
    for migration in &MIGRATIONS[found as usize..] {
        transaction.batch_execute(migration.postgres).await.map_err(sql("applying a migration"))?;
    }
    transaction
        .execute(
            "INSERT INTO spellbridge_schema (version) VALUES ($1)
             ON CONFLICT (single) DO UPDATE SET version = excluded.version",
            &[&known],
        )
        .await
        .map_err(sql("recording the schema version"))?;
    transaction.commit().await.map_err(sql("committing the migration"))
}
