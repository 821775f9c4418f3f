-- Version 2: the outbox. A message to send is queued in the same transaction as the
-- action that caused it, and deleted only once an adapter reports it sent.
CREATE TABLE outbox (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    network     TEXT NOT NULL,
    destination TEXT NOT NULL,   -- JSON: {"room": "#magic"} or {"private": "alice"}
    text        TEXT NOT NULL    -- RichText as JSON
);
