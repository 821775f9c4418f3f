-- Version 3 of the PostgreSQL schema (issue 34): the tables' snapshots as SQLite keeps
-- them since its version 12 (its migrations 1, 4, 7 and 12): the table's game, room and
-- whether it ended, its journal digest and seal (`store/seal.rs`), the journal row it
-- covers up to, and its history in rows of their own. Nothing wrote `tables` before this
-- version, so it is made anew in its whole shape.
DROP TABLE tables;
CREATE TABLE tables (
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

CREATE TABLE history (
    table_id bigint NOT NULL,
    position bigint NOT NULL,
    entry    text   NOT NULL,
    PRIMARY KEY (table_id, position)
);

CREATE TABLE history_heads (
    table_id       bigint PRIMARY KEY,
    history_rows   bigint NOT NULL,
    history_digest text   NOT NULL    -- 64 hex digits
);
