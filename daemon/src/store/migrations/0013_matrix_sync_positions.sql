-- Version 13 (issue 34): each Matrix network's /sync position that the leading daemon
-- has handled (its events handed over and its commands answered), so that a standby that
-- takes over syncs on from there. Written only on PostgreSQL, where two daemons share the
-- database; on SQLite the transport's own store_dir keeps the position (`sync-token`).
CREATE TABLE IF NOT EXISTS matrix_sync_positions (
    network    TEXT NOT NULL PRIMARY KEY,
    next_batch TEXT NOT NULL
);
