-- Version 5: player ids name their network (`libera:dave`; issue 13). A database that
-- already has games is marked; its next load rewrites the journal's bare ids and
-- rebuilds the snapshots (daemon/src/store/player_ids.rs), then removes the mark.
INSERT INTO meta (key, value) SELECT 'player_ids', 'bare' WHERE EXISTS (SELECT 1 FROM journal);
