-- 0001: the initial schema. It mirrors server/sqlite's, table for table, so
-- that both backends keep the same records the same way; where PostgreSQL
-- does something differently, the comment says why.
--
-- Conventions, so that every table reads the same way:
--   - Times are timestamptz, NULL for "not set" (a zero time.Time).
--     timestamptz keeps exactly microseconds, the precision store.go
--     promises, compares and indexes natively, and reads as a date in psql,
--     which bigint microseconds would not; the Go side truncates to
--     microseconds before writing and converts to UTC after reading.
--   - IDs, and paths, are text COLLATE "C": byte order, which is Go's string
--     order and the suite's "paths compare by bytes", whatever collation the
--     database was created with. It is also the cheapest collation to compare
--     and index. Free text (names, prompts) keeps the database's default.
--   - Constraints have explicit names: the store maps a unique violation to
--     ErrConflict by the constraint's name.
--   - No table has a foreign key index beyond its primary key: nothing is
--     ever deleted, so the indexes PostgreSQL would need to check deletes of
--     referenced rows would be pure write cost.

CREATE TABLE projects (
    id         text COLLATE "C" NOT NULL,
    name       text             NOT NULL,
    repository text             NOT NULL,
    ref        text             NOT NULL,
    model      text             NOT NULL,
    created_at timestamptz,
    CONSTRAINT projects_pkey PRIMARY KEY (id)
);

-- The secret is never stored, only its hash. The UNIQUE constraint on hash is
-- also the index that makes the lookup authentication does on every request
-- (KeyByHash) a single btree seek.
CREATE TABLE api_keys (
    id         text COLLATE "C" NOT NULL,
    hash       bytea            NOT NULL,
    hint       text             NOT NULL,
    name       text             NOT NULL,
    created_at timestamptz,
    expires_at timestamptz,
    revoked_at timestamptz,
    CONSTRAINT api_keys_pkey PRIMARY KEY (id),
    CONSTRAINT api_keys_hash_key UNIQUE (hash)
);

-- Keys lists keys by (created_at, id), a NULL created_at first as the zero
-- time sorts before every other; the index returns them in that order.
CREATE INDEX api_keys_by_created ON api_keys (created_at NULLS FIRST, id);

-- A key's projects and scopes are sets, kept in join tables whose primary key
-- is (key, value): duplicates cannot be stored, a key's values come back
-- sorted from the primary key itself, and "keys of this project" stays one
-- indexable query. project_id has no foreign key: a key may name a project
-- created later, and CreateKey does not check projects (as in SQLite).
CREATE TABLE api_key_projects (
    key_id     text COLLATE "C" NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
    project_id text COLLATE "C" NOT NULL,
    CONSTRAINT api_key_projects_pkey PRIMARY KEY (key_id, project_id)
);

CREATE TABLE api_key_scopes (
    key_id text COLLATE "C" NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
    scope  text COLLATE "C" NOT NULL,
    CONSTRAINT api_key_scopes_pkey PRIMARY KEY (key_id, scope)
);

-- Job IDs are unique across projects: ExtendLease, FinishJob and ReleaseJob
-- name a job by its ID alone. The lease is (lease_owner, lease_expires_at),
-- both NULL when the job is not leased.
CREATE TABLE jobs (
    id               text COLLATE "C" NOT NULL,
    project_id       text COLLATE "C" NOT NULL REFERENCES projects (id),
    status           text             NOT NULL
                     CHECK (status IN ('active', 'completed', 'archived', 'failed')),
    repository       text             NOT NULL,
    ref              text             NOT NULL,
    model            text             NOT NULL,
    branch           text             NOT NULL,
    handled          integer          NOT NULL DEFAULT 0 CHECK (handled >= 0),
    pr_link          text             NOT NULL DEFAULT '',
    failure_reason   text             NOT NULL DEFAULT '',
    attempts         integer          NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    lease_owner      text,
    lease_expires_at timestamptz,
    created_at       timestamptz,
    updated_at       timestamptz,
    archived_at      timestamptz,
    CONSTRAINT jobs_pkey PRIMARY KEY (id),
    CHECK ((lease_owner IS NULL) = (lease_expires_at IS NULL))
);

-- The claim. ClaimJob asks for the oldest active job (created_at, then id)
-- whose lease is free or expired, FOR UPDATE SKIP LOCKED, LIMIT 1. This
-- partial index holds active jobs only, so it stays as small as the queue
-- however long the history of finished jobs grows, and it yields them in
-- claim order: the claim walks it from the start, tests the lease of a
-- handful of rows (at most the running jobs come before the first free one)
-- and stops, instead of scanning and sorting the table. NULLS FIRST matches
-- the claim's ORDER BY, which puts a zero CreatedAt first as SQLite does.
CREATE INDEX jobs_ready ON jobs (created_at NULLS FIRST, id) WHERE status = 'active';

-- The prompt history is a child table, as in SQLite: AddPrompt appends one
-- row instead of rewriting a whole history, and the primary key (job_id,
-- position) reads it back in order and makes a duplicate position
-- impossible.
CREATE TABLE job_prompts (
    job_id   text COLLATE "C" NOT NULL REFERENCES jobs (id),
    position integer          NOT NULL CHECK (position >= 0),
    text     text             NOT NULL,
    at       timestamptz,
    CONSTRAINT job_prompts_pkey PRIMARY KEY (job_id, position)
);

-- One row per Idempotency-Key a project used, shared by CreateJob and
-- AddPrompt. The primary key is the uniqueness the contract asks for, and
-- what makes concurrent retries safe: a write inserts its key first, with ON
-- CONFLICT DO NOTHING, so a second request with the same key waits for the
-- first one's transaction and then sees its row. Because the key comes
-- first, the job it names may not exist yet when it is inserted: the foreign
-- key to jobs is checked at commit (DEFERRABLE INITIALLY DEFERRED).
CREATE TABLE idempotency_keys (
    project_id   text COLLATE "C" NOT NULL REFERENCES projects (id),
    key          text COLLATE "C" NOT NULL,
    request_hash bytea            NOT NULL,
    job_id       text COLLATE "C" NOT NULL REFERENCES jobs (id) DEFERRABLE INITIALLY DEFERRED,
    CONSTRAINT idempotency_keys_pkey PRIMARY KEY (project_id, key)
);

-- Page-view counts per project, path and hour (the hour's first instant).
-- The primary key is the upsert target of AddViews. No foreign key to
-- projects: views are recorded by a middleware in batches, and one unknown
-- project must not make a whole batch fail; QueryViews answers unknown
-- projects with nothing anyway.
CREATE TABLE page_views (
    project_id text COLLATE "C" NOT NULL,
    path       text COLLATE "C" NOT NULL,
    hour       timestamptz      NOT NULL,
    human      bigint           NOT NULL DEFAULT 0 CHECK (human >= 0),
    ai         bigint           NOT NULL DEFAULT 0 CHECK (ai >= 0),
    bot        bigint           NOT NULL DEFAULT 0 CHECK (bot >= 0),
    CONSTRAINT page_views_pkey PRIMARY KEY (project_id, path, hour)
);

-- The views query. QueryViews reads one project over an hour range. The
-- primary key groups a project's rows by path, so PostgreSQL 15 (no skip
-- scan) could only filter the hour inside every path's rows, reading the
-- project's whole history; this index seeks straight to (project, first
-- hour) and reads the range contiguously. INCLUDE carries path and the two
-- exported counts, so the query is an index-only scan: rows old enough to
-- be on all-visible pages (nearly all of a 30-day export) never touch the
-- table. The price is that the counts are in an index, so AddViews' updates
-- are never HOT; a flush updates a few thousand rows at most, which is
-- cheap next to reading a month of rows from the heap on every export.
CREATE INDEX page_views_by_hour ON page_views (project_id, hour) INCLUDE (path, human, ai);
