-- Version 4 of the PostgreSQL schema (issue 34): what the daemon keeps beside the games,
-- as SQLite keeps it since its migrations 4, 8, 9, 10 and 11: outbox rows set aside, IRC
-- STS policies, Matrix appservice transactions taken in, relayed lines' ids and the
-- speakers' latest lines.
CREATE TABLE outbox_set_aside (
    id           bigint PRIMARY KEY,   -- its id in the outbox
    network      text,                 -- the outbox row's columns, exactly as stored
    destination  text,
    text         text,
    reason       text   NOT NULL,      -- why it was set aside
    set_aside_at bigint NOT NULL       -- when, in Unix seconds
);

CREATE TABLE sts_policies (
    host    text    PRIMARY KEY,
    port    integer NOT NULL,
    expires bigint  NOT NULL
);

CREATE TABLE appservice_txns (
    network text NOT NULL,
    txn_id  text NOT NULL,
    PRIMARY KEY (network, txn_id)
);

CREATE TABLE relayed_lines (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    network    text NOT NULL,
    message_id text NOT NULL,
    name       text NOT NULL,
    words      text NOT NULL,
    UNIQUE (network, message_id)
);

CREATE TABLE latest_lines (
    network    text   NOT NULL,
    room       text   NOT NULL,
    name       text   NOT NULL,
    message_id text   NOT NULL,
    at         bigint NOT NULL,
    PRIMARY KEY (network, room, name)
);
CREATE INDEX latest_lines_at ON latest_lines (at);
