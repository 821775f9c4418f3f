-- Version 8: IRCv3 STS policies (issue 14). A server that promised TLS over TLS
-- (`sts=duration=S`) is connected to with TLS only, on `port`, until `expires` (Unix
-- seconds), on every start until then; a `duration=0` deletes its row. One row per host
-- name, lower-case.
CREATE TABLE IF NOT EXISTS sts_policies (
    host    TEXT    PRIMARY KEY,
    port    INTEGER NOT NULL,
    expires INTEGER NOT NULL
);
