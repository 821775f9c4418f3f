-- Version 2 of the PostgreSQL schema (issue 34): the store's tables, in the shape the
-- SQLite schema has at its version 12 (daemon/src/store/migrations/): the journal, the
-- tables' snapshots, the message ids seen, the outbox, named values and the dice keys.
-- Row ids are bigint identities (SQLite's AUTOINCREMENT: never reused); u64 numbers are
-- kept by their bits in bigint, as SQLite keeps them.
CREATE TABLE journal (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    table_id   bigint,            -- NULL for lobby entries
    sequence   bigint,            -- the action's number at its table
    kind       text   NOT NULL,
    player     text,
    command    text,
    network    text,
    message_id text,
    dice_seed  bigint,
    entry      text   NOT NULL,   -- the whole entry as JSON: enough to replay it
    events     text   NOT NULL    -- what was announced, as JSON
);
CREATE UNIQUE INDEX journal_table_sequence ON journal (table_id, sequence) WHERE sequence IS NOT NULL;
CREATE INDEX journal_table ON journal (table_id);

CREATE TABLE tables (
    id             bigint PRIMARY KEY,
    snapshot       text   NOT NULL,
    journal_upto   bigint NOT NULL DEFAULT 0
);

CREATE TABLE seen_messages (
    network    text NOT NULL,
    message_id text NOT NULL,
    PRIMARY KEY (network, message_id)
);

CREATE TABLE outbox (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    network     text NOT NULL,
    destination text NOT NULL,
    text        text NOT NULL
);

CREATE TABLE meta (
    key   text PRIMARY KEY,
    value text NOT NULL
);

CREATE TABLE dice_keys (
    table_id bigint NOT NULL,
    epoch    bigint NOT NULL,
    key      text   NOT NULL,
    PRIMARY KEY (table_id, epoch)
);
