-- Version 6: each table's secret dice keys (RULES T-10), one per dice epoch (a Thaum
-- season). A key lives here, never in the journal or a snapshot, so `export` cannot show
-- it before its table reveals it (the journal's `revealed` entry); recovery and `verify`
-- read it back. Tables from before keys have a seed in their `opened` entry instead.
CREATE TABLE IF NOT EXISTS dice_keys (
    table_id INTEGER NOT NULL,
    epoch    INTEGER NOT NULL,
    key      TEXT    NOT NULL,   -- 64 hex digits
    PRIMARY KEY (table_id, epoch)
) WITHOUT ROWID;
