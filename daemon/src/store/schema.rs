//! The database schema as numbered migrations, each in SQLite's SQL
//! (`migrations/NNNN_*.sql`) and PostgreSQL's (`postgres/NNNN_*.sql`), compiled in.
//!
//! `PRAGMA user_version` records the version. Opening an older database applies the
//! missing migrations in one transaction; a database from a newer spellbridge is refused,
//! so an old binary never writes to a schema it does not know.

use rusqlite::Connection;

/// One step of the schema, in each engine's SQL (the dialects differ): step `i` takes
/// a database from version `i` to `i + 1` on either engine, so a version names the same
/// tables on both.
pub struct Migration {
    /// The step on SQLite.
    pub sqlite: &'static str,
    /// The step on PostgreSQL.
    pub postgres: &'static str,
}

/// A step SQLite took before there was a PostgreSQL store: nothing on PostgreSQL, whose
/// databases start at step 12 with the whole shape.
const fn sqlite_only(sqlite: &'static str) -> Migration {
    Migration { sqlite, postgres: "" }
}

/// The migrations, in order: migration `i` takes the schema from version `i` to `i + 1`.
/// SQLite records its version in `PRAGMA user_version`, PostgreSQL in
/// `spellbridge_schema` (see `leader::schema`); the numbers are the same.
pub const MIGRATIONS: &[Migration] = &[
    sqlite_only(include_str!("migrations/0001_journal.sql")),
    sqlite_only(include_str!("migrations/0002_outbox.sql")),
    sqlite_only(include_str!("migrations/0003_meta.sql")),
    sqlite_only(include_str!("migrations/0004_seal.sql")),
    sqlite_only(include_str!("migrations/0005_player_ids.sql")),
    sqlite_only(include_str!("migrations/0006_dice_keys.sql")),
    sqlite_only(include_str!("migrations/0007_history.sql")),
    sqlite_only(include_str!("migrations/0008_sts.sql")),
    sqlite_only(include_str!("migrations/0009_appservice_txns.sql")),
    sqlite_only(include_str!("migrations/0010_relayed_lines.sql")),
    sqlite_only(include_str!("migrations/0011_latest_lines.sql")),
    Migration {
        sqlite: include_str!("migrations/0012_snapshot_point.sql"),
        // The whole store and the leader lease, at once.
        postgres: concat!(
            include_str!("../leader/migrations/0001_leader_lease.sql"),
            include_str!("postgres/0012_store.sql")
        ),
    },
    Migration {
        sqlite: include_str!("migrations/0013_matrix_sync_positions.sql"),
        postgres: include_str!("postgres/0013_matrix_sync_positions.sql"),
    },
    Migration {
        sqlite: include_str!("migrations/0014_lease_epoch_key.sql"),
        postgres: include_str!("../leader/migrations/0014_lease_epoch_key.sql"),
    },
];

/// The schema version this build writes.
pub fn current_version() -> u32 {
    MIGRATIONS.len() as u32
}

/// Why the schema could not be brought up to date.
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    /// The file was written by a newer spellbridge.
    #[error(
        "the database has schema version {found}, newer than this spellbridge knows ({known}); upgrade spellbridge, or use another file"
    )]
    TooNew {
        /// The version in the file.
        found: u32,
        /// The newest version this build knows.
        known: u32,
    },
    /// SQLite failed while migrating.
    #[error("migrating the schema: {0}")]
    Sql(#[from] rusqlite::Error),
}

/// The schema version of an open database.
pub fn version(connection: &Connection) -> rusqlite::Result<u32> {
    connection.query_row("PRAGMA user_version", [], |row| row.get(0))
}

/// True for an SQLite file with tables of its own and no spellbridge schema version:
/// another program's database, which must not be migrated into.
pub fn is_foreign(connection: &Connection) -> rusqlite::Result<bool> {
    if version(connection)? != 0 {
        return Ok(false);
    }
    let objects: i64 = connection.query_row("SELECT count(*) FROM sqlite_master", [], |row| row.get(0))?;
    Ok(objects > 0)
}

/// Applies the migrations the database lacks, all in one transaction. Upgrading a database
/// that has games unseals every snapshot, so the next start checks each table against its
/// journal by replaying it and seals it again (a migration may rewrite journal rows).
pub fn migrate(connection: &mut Connection) -> Result<(), SchemaError> {
    let found = version(connection)?;
    let known = current_version();
    if found > known {
        return Err(SchemaError::TooNew { found, known });
    }
    if found == known {
        return Ok(());
    }
    let transaction = connection.transaction()?;
    for migration in &MIGRATIONS[found as usize..] {
        transaction.execute_batch(migration.sqlite)?;
    }
    if found > 0 {
        transaction.execute("UPDATE tables SET seal = NULL", [])?;
    }
    transaction.pragma_update(None, "user_version", known)?;
    transaction.commit()?;
    Ok(())
}

/// Brings a database to exactly `target` (for tests of migrating from older versions).
pub fn migrate_to(connection: &mut Connection, target: u32) -> rusqlite::Result<()> {
    let transaction = connection.transaction()?;
    for migration in &MIGRATIONS[..target as usize] {
        transaction.execute_batch(migration.sqlite)?;
    }
    transaction.pragma_update(None, "user_version", target)?;
    transaction.commit()
}
