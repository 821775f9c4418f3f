-- Version 12 of the schema on PostgreSQL (issue 34): every table the store keeps, in the
-- shape SQLite's migrations 1 to 12 (daemon/src/store/migrations/) give it, made at once
-- (steps 1 to 11 are empty on PostgreSQL: no PostgreSQL database ever had those shapes).
-- Row ids are bigint identities (SQLite's AUTOINCREMENT: never reused); u64 numbers are
-- kept by their bits in bigint, as SQLite keeps them. The leader lease
-- (daemon/src/leader/migrations/0001_leader_lease.sql) is made in the same step.
--
-- A database made before this list (stop 31's numbering: 1 the lease, 2 the journal,
-- outbox, seen ids, meta and dice keys, 3 the snapshots, 4 what is kept beside the games)
-- is at version 1 to 4 and comes through steps 2 to 11 (empty) to this one: so every
-- statement here makes only what is missing (IF NOT EXISTS; those versions' tables have
-- this shape already), and version 2's `tables`, which had no game, room or seal and
-- which nothing wrote, is made again in its whole shape. The journal, outbox and every
-- other row stay; start-up then writes each table's snapshot from its journal.
DO $$
BEGIN
    IF to_regclass('tables') IS NOT NULL AND NOT EXISTS (
        SELECT 1 FROM information_schema.columns
        WHERE table_schema = current_schema() AND table_name = 'tables' AND column_name = 'game'
    ) THEN
        DROP TABLE tables;
    END IF;
END
$$;

CREATE TABLE IF NOT EXISTS journal (
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
CREATE UNIQUE INDEX IF NOT EXISTS journal_table_sequence ON journal (table_id, sequence) WHERE sequence IS NOT NULL;
CREATE INDEX IF NOT EXISTS journal_table ON journal (table_id);

-- Each table's snapshot, sealed with its journal's digest (store/seal.rs), covering its
-- journal up to the row journal_upto; its history is in rows of its own.
CREATE TABLE IF NOT EXISTS tables (
    id             bigint  PRIMARY KEY,
    game           text    NOT NULL,
    network        text    NOT NULL,
    room           text    NOT NULL,
    finished       boolean NOT NULL,
    snapshot       text    NOT NULL,   -- Router::table_snapshot as JSON, its history apart
    journal_digest text,               -- running SHA-256 of its journal rows, hex
    seal           text,               -- SHA-256 of that digest and the snapshot, hex
    journal_upto   bigint  NOT NULL DEFAULT 0
);

CREATE TABLE IF NOT EXISTS history (
    table_id bigint NOT NULL,
    position bigint NOT NULL,
    entry    text   NOT NULL,
    PRIMARY KEY (table_id, position)
);

CREATE TABLE IF NOT EXISTS history_heads (
    table_id       bigint PRIMARY KEY,
    history_rows   bigint NOT NULL,
    history_digest text   NOT NULL    -- 64 hex digits
);

CREATE TABLE IF NOT EXISTS seen_messages (
    network    text NOT NULL,
    message_id text NOT NULL,
    PRIMARY KEY (network, message_id)
);

CREATE TABLE IF NOT EXISTS outbox (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    network     text NOT NULL,
    destination text NOT NULL,        -- JSON: {"room": "#magic"} or {"private": "alice"}
    text        text NOT NULL         -- the message as JSON
);

CREATE TABLE IF NOT EXISTS outbox_set_aside (
    id           bigint PRIMARY KEY,  -- its id in the outbox
    network      text,                -- the outbox row's columns, exactly as stored
    destination  text,
    text         text,
    reason       text   NOT NULL,     -- why it was set aside
    set_aside_at bigint NOT NULL      -- when, in Unix seconds
);

CREATE TABLE IF NOT EXISTS meta (
    key   text PRIMARY KEY,
    value text NOT NULL
);

CREATE TABLE IF NOT EXISTS dice_keys (
    table_id bigint NOT NULL,
    epoch    bigint NOT NULL,
    key      text   NOT NULL,         -- 64 hex digits
    PRIMARY KEY (table_id, epoch)
);

CREATE TABLE IF NOT EXISTS sts_policies (
    host    text    PRIMARY KEY,
    port    integer NOT NULL,
    expires bigint  NOT NULL
);

CREATE TABLE IF NOT EXISTS appservice_txns (
    network text NOT NULL,
    txn_id  text NOT NULL,
    PRIMARY KEY (network, txn_id)
);

CREATE TABLE IF NOT EXISTS relayed_lines (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    network    text NOT NULL,
    message_id text NOT NULL,
    name       text NOT NULL,
    words      text NOT NULL,
    UNIQUE (network, message_id)
);

CREATE TABLE IF NOT EXISTS latest_lines (
    network    text   NOT NULL,
    room       text   NOT NULL,
    name       text   NOT NULL,
    message_id text   NOT NULL,
    at         bigint NOT NULL,
    PRIMARY KEY (network, room, name)
);
CREATE INDEX IF NOT EXISTS latest_lines_at ON latest_lines (at);
