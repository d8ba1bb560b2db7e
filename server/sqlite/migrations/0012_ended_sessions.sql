-- 0012: the secret that seals sessions and cursors leaves the database,
-- and sign-outs enter it.
--
-- The key that sealed the dashboard's session cookies and the exports'
-- cursors was kept in server_secrets, so a copy of this file (a backup, a
-- dump) was enough to seal a session of any key whose hash it holds. The
-- server now takes that secret from outside the database (a file or the
-- environment), and nothing else was ever kept there: the table goes, and
-- with it every cursor and session sealed with its key.
DROP TABLE server_secrets;

-- A session signed out before it expired, kept until it would have
-- expired (plus a margin for the clocks of the processes sharing the
-- database), so that a copy of its cookie is refused after a restart too.
-- Each sign-out deletes the records that lapsed (the index on kept_until).
CREATE TABLE ended_sessions (
    id         BLOB    NOT NULL PRIMARY KEY CHECK (length(id) = 32),
    kept_until INTEGER NOT NULL -- Unix microseconds
) STRICT, WITHOUT ROWID;

CREATE INDEX ended_sessions_by_until ON ended_sessions (kept_until);
