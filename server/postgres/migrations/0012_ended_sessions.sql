-- 0012: the secret that seals sessions and cursors leaves the database,
-- and sign-outs enter it; as SQLite's migration 12.
--
-- The key that sealed the dashboard's session cookies and the exports'
-- cursors was kept in server_secrets, so a copy of the database (a backup,
-- a dump, a replica) was enough to seal a session of any key whose hash it
-- holds. The servers now take that secret from outside the database (a
-- file or the environment), and nothing else was ever kept there: the
-- table goes, and with it every cursor and session sealed with its key.
DROP TABLE server_secrets;

-- A session signed out before it expired, kept until it would have
-- expired (plus a margin for the replicas' clocks), so that a copy of its
-- cookie is refused after a restart and by every replica. Each sign-out
-- deletes the records that lapsed (the index on kept_until); two replicas
-- ending one session meet on the primary key.
CREATE TABLE ended_sessions (
    id         bytea       NOT NULL CHECK (length(id) = 32),
    kept_until timestamptz NOT NULL,
    CONSTRAINT ended_sessions_pkey PRIMARY KEY (id)
);

CREATE INDEX ended_sessions_by_until ON ended_sessions (kept_until);
