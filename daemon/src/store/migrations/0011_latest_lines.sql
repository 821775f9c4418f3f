-- Version 11: each speaker's latest line in each bridged room (issue 17, items 4 and 7).
-- An IRC line that addresses a Matrix user (`alice: hi`) is sent as a Matrix reply to her
-- latest line there when it is recent; this keeps those lines, so a restart does not
-- forget them. One row per room and speaker (the name case-folded); rows too old to be
-- answered, and all but the latest few thousand, are deleted as it writes (`store/latest`).
CREATE TABLE IF NOT EXISTS latest_lines (
    network    TEXT    NOT NULL,
    room       TEXT    NOT NULL,
    name       TEXT    NOT NULL,
    message_id TEXT    NOT NULL,
    at         INTEGER NOT NULL,
    PRIMARY KEY (network, room, name)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS latest_lines_at ON latest_lines (at);
