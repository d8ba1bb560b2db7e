-- 0001: the initial schema.
--
-- Conventions, so that every table reads the same way:
--   - Times are INTEGER unix microseconds, NULL for "not set" (a zero
--     time.Time); the store package promises microsecond precision, and
--     integers sort and compare correctly where text timestamps would depend
--     on formatting.
--   - IDs are the caller's strings, compared with the BINARY collation, which
--     orders exactly as Go's string comparison does.
--   - Tables are STRICT, so a value of the wrong type is an error instead of
--     being silently stored as something else.

CREATE TABLE projects (
    id         TEXT    NOT NULL PRIMARY KEY,
    name       TEXT    NOT NULL,
    repository TEXT    NOT NULL,
    ref        TEXT    NOT NULL,
    model      TEXT    NOT NULL,
    created_at INTEGER
) STRICT;

-- The secret is never stored, only its hash. hash is UNIQUE because
-- authentication looks a key up by it on every request: the constraint is also
-- the index that makes that lookup a single seek.
CREATE TABLE api_keys (
    id         TEXT    NOT NULL PRIMARY KEY,
    hash       BLOB    NOT NULL UNIQUE,
    hint       TEXT    NOT NULL,
    name       TEXT    NOT NULL,
    created_at INTEGER,
    expires_at INTEGER,
    revoked_at INTEGER
) STRICT;

-- Keys lists keys by (created_at, id); this index returns them in that order
-- without a sort.
CREATE INDEX api_keys_by_created ON api_keys (created_at, id);

-- A key's projects and scopes are sets, so they live in join tables whose
-- primary key is (key, value): the key's rows come back in sorted order from
-- the primary key itself, duplicates cannot be stored, and a later "keys of
-- this project" query stays possible without parsing a list out of a column.
-- project_id deliberately has no foreign key: a key may be bound to a project
-- that is created later, and the store's contract does not make CreateKey
-- check projects.
CREATE TABLE api_key_projects (
    key_id     TEXT NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
    project_id TEXT NOT NULL,
    PRIMARY KEY (key_id, project_id)
) STRICT, WITHOUT ROWID;

CREATE TABLE api_key_scopes (
    key_id TEXT NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
    scope  TEXT NOT NULL,
    PRIMARY KEY (key_id, scope)
) STRICT, WITHOUT ROWID;

-- Job IDs are unique across projects: ExtendLease, FinishJob and ReleaseJob
-- name a job by its ID alone. The lease is (lease_owner, lease_expires_at),
-- both NULL when the job is not leased.
CREATE TABLE jobs (
    id               TEXT    NOT NULL PRIMARY KEY,
    project_id       TEXT    NOT NULL REFERENCES projects (id),
    status           TEXT    NOT NULL
                     CHECK (status IN ('active', 'completed', 'archived', 'failed')),
    repository       TEXT    NOT NULL,
    ref              TEXT    NOT NULL,
    model            TEXT    NOT NULL,
    branch           TEXT    NOT NULL,
    handled          INTEGER NOT NULL DEFAULT 0 CHECK (handled >= 0),
    pr_link          TEXT    NOT NULL DEFAULT '',
    failure_reason   TEXT    NOT NULL DEFAULT '',
    attempts         INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    lease_owner      TEXT,
    lease_expires_at INTEGER,
    created_at       INTEGER,
    updated_at       INTEGER,
    archived_at      INTEGER,
    CHECK ((lease_owner IS NULL) = (lease_expires_at IS NULL))
) STRICT;

-- ClaimJob looks for the oldest active job, by (created_at, id). A partial
-- index over active jobs only stays as small as the queue, however long the
-- history of finished jobs grows, and yields candidates already in claim
-- order, so the lease test runs on a handful of rows instead of a table scan
-- and a sort.
CREATE INDEX jobs_ready ON jobs (created_at, id) WHERE status = 'active';

-- The prompt history is a child table rather than a JSON column: AddPrompt
-- appends one row instead of rewriting the whole history, and the primary key
-- (job_id, position) both reads the history back in order and makes a
-- duplicate position impossible.
CREATE TABLE job_prompts (
    job_id   TEXT    NOT NULL REFERENCES jobs (id),
    position INTEGER NOT NULL CHECK (position >= 0),
    text     TEXT    NOT NULL,
    at       INTEGER,
    PRIMARY KEY (job_id, position)
) STRICT, WITHOUT ROWID;

-- One row per Idempotency-Key a project used, shared by CreateJob and
-- AddPrompt: the primary key is the uniqueness the contract asks for and the
-- lookup each idempotent write starts with.
CREATE TABLE idempotency_keys (
    project_id   TEXT NOT NULL REFERENCES projects (id),
    key          TEXT NOT NULL,
    request_hash BLOB NOT NULL,
    job_id       TEXT NOT NULL REFERENCES jobs (id),
    PRIMARY KEY (project_id, key)
) STRICT, WITHOUT ROWID;

-- Page-view counts per project, path and hour (unix seconds of the hour's
-- start). The primary key is the upsert target of AddViews. No foreign key to
-- projects: views are recorded by a middleware in batches, and one unknown
-- project must not make a whole batch fail; QueryViews answers unknown
-- projects with nothing anyway.
CREATE TABLE page_views (
    project_id TEXT    NOT NULL,
    path       TEXT    NOT NULL,
    hour       INTEGER NOT NULL,
    human      INTEGER NOT NULL DEFAULT 0 CHECK (human >= 0),
    ai         INTEGER NOT NULL DEFAULT 0 CHECK (ai >= 0),
    bot        INTEGER NOT NULL DEFAULT 0 CHECK (bot >= 0),
    PRIMARY KEY (project_id, path, hour)
) STRICT, WITHOUT ROWID;

-- QueryViews filters one project by an hour range. The primary key groups a
-- project's rows by path, so a range would scan every hour the project ever
-- had; this index seeks straight to the range, and carrying path and the
-- counts makes it covering, so the query never touches the table.
CREATE INDEX page_views_by_hour ON page_views (project_id, hour, path, human, ai);
