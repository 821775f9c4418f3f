-- Version 14 of the schema on PostgreSQL: the lease's epoch made a key (a unique index),
-- so that a take-over, which raises the epoch, is a key update. A journal commit's fence
-- reads the lease row FOR KEY SHARE (daemon/src/leader/fence.rs): a key update waits for
-- it, while a renewal or a release, which change expires_at only, never do.
CREATE UNIQUE INDEX IF NOT EXISTS leader_lease_epoch ON leader_lease (epoch);
