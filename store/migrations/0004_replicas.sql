-- Earshot schema version 4: several replicas on one database. Portable SQL:
-- SQLite and PostgreSQL run this file unchanged.

-- One row per running replica, written every few seconds (its lease). A
-- replica whose row is older than the lease is dead: another deletes the
-- row and releases its claims.
CREATE TABLE replicas (
    id           TEXT PRIMARY KEY,
    started_at   BIGINT NOT NULL,
    heartbeat_at BIGINT NOT NULL
);

-- The claim: the replica whose audio stream feeds a live session (NULL
-- while no stream does). Exactly one stream feeds a session because a
-- claim is taken only where the column is NULL or already the taker's.
ALTER TABLE sessions ADD COLUMN replica_id TEXT;
-- When the stream that fed a live session was cut (its replica died or
-- the process restarted): the session waits a grace period for the call
-- to reconnect, then fails StreamInterrupted.
ALTER TABLE sessions ADD COLUMN interrupted_at BIGINT;

CREATE INDEX sessions_replica ON sessions (replica_id) WHERE replica_id IS NOT NULL;
