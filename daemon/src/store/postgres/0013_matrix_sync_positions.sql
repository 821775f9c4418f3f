-- Version 13 of the schema on PostgreSQL (issue 34): each Matrix network's /sync position
-- that the leading daemon has handled, so that a standby that takes over syncs on from it
-- (daemon/src/store/sync_positions.rs).
CREATE TABLE matrix_sync_positions (
    network    text NOT NULL PRIMARY KEY,
    next_batch text NOT NULL
);
