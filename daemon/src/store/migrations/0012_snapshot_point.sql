-- Version 12: a table's snapshot is written every few journal entries, not at every commit
-- (issue 16; `Store::commit`). `journal_upto` is the id of the table's last journal row the
-- snapshot (and its journal_digest) covers; the table's rows after it are replayed onto
-- the snapshot on start. Every snapshot written before version 12 covered its table's
-- whole journal.
ALTER TABLE tables ADD COLUMN journal_upto INTEGER NOT NULL DEFAULT 0;
UPDATE tables SET journal_upto = COALESCE((SELECT MAX(id) FROM journal WHERE journal.table_id = tables.id), 0);
