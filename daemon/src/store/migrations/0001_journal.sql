-- Version 1: the journal, table snapshots, and redelivery detection.

-- Every change the router made, in the order it made them (see daemon/src/journal.rs).
CREATE TABLE journal (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    table_id   INTEGER,            -- NULL for lobby entries (challenges)
    sequence   INTEGER,            -- the action's number at its table; NULL for Opened and lobby entries
    kind       TEXT    NOT NULL,   -- opened | acted | fired | challenged | challenge_closed
    player     TEXT,               -- who acted, for Acted
    command    TEXT,               -- the message as typed, for Acted
    network    TEXT,               -- where the message came from
    message_id TEXT,               -- the network's id for it
    dice_seed  INTEGER,            -- the seed of the action's dice (RULES T-10)
    entry      TEXT    NOT NULL,   -- the whole entry as JSON: enough to replay it
    events     TEXT    NOT NULL    -- what was announced, as JSON
);
CREATE UNIQUE INDEX journal_table_sequence ON journal (table_id, sequence) WHERE sequence IS NOT NULL;
CREATE INDEX journal_table ON journal (table_id);

-- The latest state of every table, written in the same transaction as its journal entries.
CREATE TABLE tables (
    id       INTEGER PRIMARY KEY,
    game     TEXT    NOT NULL,
    network  TEXT    NOT NULL,
    room     TEXT    NOT NULL,
    finished INTEGER NOT NULL,
    snapshot TEXT    NOT NULL     -- Router::table_snapshot as JSON
);

-- Messages already handled, so a network's redelivery is not applied twice.
CREATE TABLE seen_messages (
    network    TEXT NOT NULL,
    message_id TEXT NOT NULL,
    PRIMARY KEY (network, message_id)
) WITHOUT ROWID;
