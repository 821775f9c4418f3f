-- Version 10: the network's ids of relayed lines (issue 17, items 4 and 7). The bot relays
-- a line into a Matrix room as its own event; the transport learns the event's id once it
-- is sent, and this keeps which speaker and words it stands for, so a reply or a reaction
-- to it names the speaker after a restart too. Only the start of the words is kept (what
-- a reaction quotes), and only the latest rows (`store/relayed`, pruned as it writes).
CREATE TABLE IF NOT EXISTS relayed_lines (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    network    TEXT NOT NULL,
    message_id TEXT NOT NULL,
    name       TEXT NOT NULL,
    words      TEXT NOT NULL,
    UNIQUE (network, message_id)
);
