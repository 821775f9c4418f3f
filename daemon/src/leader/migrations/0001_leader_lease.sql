-- Part of step 12 of the schema on PostgreSQL (store/schema.rs; issue 34): who leads.
-- One row: the lease's epoch (raised by every take-over, never lowered), its holder, and
-- when it runs out by the
-- database's clock. A released lease has expires_at at the release time. The journal's
-- commits will check this row in their own transaction (daemon/src/leader/fence.rs).
CREATE TABLE IF NOT EXISTS leader_lease (
    single     boolean     PRIMARY KEY DEFAULT true CHECK (single),
    epoch      bigint      NOT NULL CHECK (epoch >= 0),
    holder     text        NOT NULL,
    expires_at timestamptz NOT NULL
);
INSERT INTO leader_lease (epoch, holder, expires_at) VALUES (0, '', 'epoch')
    ON CONFLICT (single) DO NOTHING; -- a database from before one list has its lease
