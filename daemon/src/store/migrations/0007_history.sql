-- Version 7: a table's history (a Thaum table's accepted actions) in rows of its own, one
-- per entry, appended as they come, so the snapshot written with every action no longer
-- carries the whole history (issue 16). `history_rows` and `history_digest` say how many
-- rows the table has and the running SHA-256 over them (in `history_heads`, so appending
-- needs no read of the snapshot); the snapshot names both, so its seal covers the rows. A snapshot from before (its history inside) still loads; the
-- start after this upgrade replays and reseals every table, which moves it into rows.
CREATE TABLE IF NOT EXISTS history (
    table_id INTEGER NOT NULL,
    position INTEGER NOT NULL,
    entry    TEXT    NOT NULL,
    PRIMARY KEY (table_id, position)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS history_heads (
    table_id       INTEGER PRIMARY KEY,
    history_rows   INTEGER NOT NULL,
    history_digest TEXT    NOT NULL   -- 64 hex digits
);
