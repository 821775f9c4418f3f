-- Version 4: each table's snapshot is sealed with a checksum of the journal it came from
-- (daemon/src/store/seal.rs), and outbox rows that cannot be sent are set aside.

-- The running SHA-256 over the table's journal rows (entry and events, as stored), hex.
ALTER TABLE tables ADD COLUMN journal_digest TEXT;
-- SHA-256 over journal_digest and the snapshot, hex. NULL: not sealed yet (a table written
-- before version 4, or after a schema upgrade): the next start checks it by replaying its
-- journal and seals it.
ALTER TABLE tables ADD COLUMN seal TEXT;

-- Outbox rows found unreadable at start: kept here as they were (never sent, never
-- silently dropped), with why. `spellbridge verify` lists them.
CREATE TABLE outbox_set_aside (
    id           INTEGER PRIMARY KEY,   -- its id in the outbox
    network,                            -- the outbox row's columns, exactly as stored
    destination,
    text,
    reason       TEXT    NOT NULL,      -- why it was set aside
    set_aside_at INTEGER NOT NULL       -- when, in Unix seconds
);
