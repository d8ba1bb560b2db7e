-- 0001: the schema. It mirrors server/sqlite's, table for table, so that
-- both backends keep the same records the same way; where PostgreSQL does
-- something differently, the comment says why. No release has shipped:
-- until one does, this file is changed in place; migrations start again
-- after the first release.
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
    domain     text COLLATE "C" NOT NULL DEFAULT '', -- '' when none; see the assistant block
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

-- The job list: ListJobs reads one project's
-- jobs newest first, by (created_at, id), from a cursor's row value: a
-- backward scan of this index from that place, instead of a scan and sort
-- of every job (the primary key orders by ID, jobs_ready holds active jobs
-- only).
CREATE INDEX jobs_by_time ON jobs (project_id, created_at, id);

-- Page views (see package server/internal/rollup, which describes the
-- format): per project and hour, UTC day and week, a roll of the per-path
-- counts, stored as its segments in the order written (seq). The hour
-- rolls are the record of every view. entries is the number of paths a
-- segment holds, read to decide merges without reading segments. No
-- foreign key to projects: views are recorded in batches, and one unknown
-- project must not make a whole batch fail.
-- Segments are compact varints already, so they are stored out of line
-- uncompressed: compressing saves little and every read would pay to
-- inflate them.
CREATE TABLE view_hour_rolls (
    project_id text COLLATE "C" NOT NULL,
    hour       bigint NOT NULL, -- Unix time of the hour's start
    seq        bigint NOT NULL CHECK (seq > 0),
    entries    bigint NOT NULL CHECK (entries >= 0),
    counts     bytea  NOT NULL,
    CONSTRAINT view_hour_rolls_pkey PRIMARY KEY (project_id, hour, seq)
);
ALTER TABLE view_hour_rolls ALTER COLUMN counts SET STORAGE EXTERNAL;

CREATE TABLE view_day_rolls (
    project_id text COLLATE "C" NOT NULL,
    day        bigint NOT NULL, -- Unix time of the UTC day's start
    seq        bigint NOT NULL CHECK (seq > 0),
    entries    bigint NOT NULL CHECK (entries >= 0),
    counts     bytea  NOT NULL,
    CONSTRAINT view_day_rolls_pkey PRIMARY KEY (project_id, day, seq)
);
ALTER TABLE view_day_rolls ALTER COLUMN counts SET STORAGE EXTERNAL;

-- Weeks start on Mondays at midnight UTC: a month's range reads about four
-- week rolls and a few day rolls, instead of 30 day rolls.
CREATE TABLE view_week_rolls (
    project_id text COLLATE "C" NOT NULL,
    week       bigint NOT NULL, -- Unix time of the week's start
    seq        bigint NOT NULL CHECK (seq > 0),
    entries    bigint NOT NULL CHECK (entries >= 0),
    counts     bytea  NOT NULL,
    CONSTRAINT view_week_rolls_pkey PRIMARY KEY (project_id, week, seq)
);
ALTER TABLE view_week_rolls ALTER COLUMN counts SET STORAGE EXTERNAL;

-- Per project and UTC day: how many distinct paths have a row that day (the
-- path "/(other pages)" aside), which the cap on paths per day compares
-- with, and what the cap folded into "/(other pages)": counts (a path's
-- views in an hour) and their views. Every flush locks the rows of its
-- days: the lock also guards the day's rolls, its own and its hours', and
-- its paths; the lock of a week's Monday guards the week's roll.
CREATE TABLE view_days (
    project_id    text COLLATE "C" NOT NULL,
    day           bigint NOT NULL, -- Unix time of the UTC day's start
    paths         bigint NOT NULL DEFAULT 0 CHECK (paths >= 0),
    folded_counts bigint NOT NULL DEFAULT 0 CHECK (folded_counts >= 0),
    folded_views  bigint NOT NULL DEFAULT 0 CHECK (folded_views >= 0),
    CONSTRAINT view_days_pkey PRIMARY KEY (project_id, day)
);

-- The paths each day holds, for the cap to tell a new path from a known one
-- with one seek. A row is added the first time a path comes to a day, so a
-- flush of paths the day holds writes nothing here.
CREATE TABLE view_day_paths (
    project_id text COLLATE "C" NOT NULL,
    day        bigint NOT NULL,
    path       text COLLATE "C" NOT NULL,
    CONSTRAINT view_day_paths_pkey PRIMARY KEY (project_id, day, path)
);

-- Unique visitors (see package server/internal/rollup, visitors.go), and
-- the daily salts visitors are hashed with. Nothing here identifies a
-- visitor: a sketch keeps a few bits of each visitor's salted hash, and a
-- day's salt is deleted once no server can still call the day yesterday.
--
-- A project's day of visitors: its paths' numbers (a segment in the
-- views' format: human, AI and total visitors) and the project's, and
-- whether the day is open. An open day's numbers are made anew from its
-- sketches at every flush; a closed day's are final, and in its week's
-- roll too. The lock of the day's view_days row guards them, and the
-- lock of its week's Monday the week's roll.
CREATE TABLE visitor_days (
    project_id text COLLATE "C" NOT NULL,
    day        bigint  NOT NULL, -- Unix time of the UTC day's start
    open       boolean NOT NULL,
    human      bigint  NOT NULL CHECK (human >= 0),
    ai         bigint  NOT NULL CHECK (ai >= 0),
    total      bigint  NOT NULL CHECK (total >= 0),
    entries    bigint  NOT NULL CHECK (entries >= 0),
    counts     bytea   NOT NULL,
    CONSTRAINT visitor_days_pkey PRIMARY KEY (project_id, day)
);
ALTER TABLE visitor_days ALTER COLUMN counts SET STORAGE EXTERNAL;

-- The days a new salt may close: the open ones, by day.
CREATE INDEX visitor_days_open ON visitor_days (day) WHERE open;

-- The HyperLogLog sketches of an open day's visitors, human and AI (NULL:
-- none), per path; path '' holds the project's, which are not the union
-- of its paths'. Deleted when the day closes.
CREATE TABLE visitor_sketches (
    project_id text COLLATE "C" NOT NULL,
    day        bigint NOT NULL,
    path       text COLLATE "C" NOT NULL,
    human      bytea,
    ai         bytea,
    CONSTRAINT visitor_sketches_pkey PRIMARY KEY (project_id, day, path)
);

-- The numbers of each week's closed days, as the views' week rolls hold
-- their counts.
CREATE TABLE visitor_week_rolls (
    project_id text COLLATE "C" NOT NULL,
    week       bigint NOT NULL, -- Unix time of the week's start (a Monday, UTC)
    seq        bigint NOT NULL CHECK (seq > 0),
    entries    bigint NOT NULL CHECK (entries >= 0),
    counts     bytea  NOT NULL,
    CONSTRAINT visitor_week_rolls_pkey PRIMARY KEY (project_id, week, seq)
);
ALTER TABLE visitor_week_rolls ALTER COLUMN counts SET STORAGE EXTERNAL;

-- The salt of each UTC day whose visitors may still be hashed: made when
-- first asked for (up to an hour before the day starts), deleted when the
-- salt of the third day after it is (about two days after the day ends),
-- since the day is yesterday to some server until the second day after it
-- starts, by then asked for already.
CREATE TABLE visitor_salts (
    day  bigint NOT NULL PRIMARY KEY, -- Unix time of the UTC day's start
    salt bytea  NOT NULL CHECK (length(salt) = 32)
);

-- One row per piece of feedback; IDs are unique across projects. comment
-- is NULL when no comment was sent, '' when an empty one was.
CREATE TABLE feedback (
    id         text COLLATE "C" NOT NULL,
    project_id text COLLATE "C" NOT NULL REFERENCES projects (id),
    path       text COLLATE "C" NOT NULL,
    source     text             NOT NULL,
    status     text             NOT NULL,
    helpful    boolean          NOT NULL DEFAULT false,
    comment    text,
    contact    text             NOT NULL DEFAULT '',
    code       text             NOT NULL DEFAULT '',
    filename   text             NOT NULL DEFAULT '',
    lang       text             NOT NULL DEFAULT '',
    created_at timestamptz      NOT NULL,
    updated_at timestamptz      NOT NULL,
    CONSTRAINT feedback_pkey PRIMARY KEY (id)
);

-- The export pages newest first by (created_at, id) from a cursor: a
-- backward scan of this index from the cursor's row value reads the page
-- and stops, whatever the project holds.
CREATE INDEX feedback_by_time ON feedback (project_id, created_at, id);

-- The entries of each project's UTC day, for the cap on entries per day.
-- A write locks its day's row, so replicas adding at once queue on it and
-- the cap holds.
CREATE TABLE feedback_days (
    project_id text COLLATE "C" NOT NULL,
    day        timestamptz      NOT NULL,
    entries    bigint           NOT NULL CHECK (entries >= 0),
    CONSTRAINT feedback_days_pkey PRIMARY KEY (project_id, day)
);

-- Searches per project, UTC day and normalised query: counts, never one row
-- per search.
CREATE TABLE search_queries (
    project_id text COLLATE "C" NOT NULL,
    day        timestamptz      NOT NULL,
    query      text COLLATE "C" NOT NULL,
    hits       bigint           NOT NULL CHECK (hits >= 0),
    clicks     bigint           NOT NULL CHECK (clicks >= 0),
    last_at    timestamptz      NOT NULL,
    CONSTRAINT search_queries_pkey PRIMARY KEY (project_id, day, query)
);

-- Which results were opened after a query, per day: for topClickedPage.
CREATE TABLE search_clicks (
    project_id text COLLATE "C" NOT NULL,
    day        timestamptz      NOT NULL,
    query      text COLLATE "C" NOT NULL,
    path       text COLLATE "C" NOT NULL,
    clicks     bigint           NOT NULL CHECK (clicks >= 0),
    CONSTRAINT search_clicks_pkey PRIMARY KEY (project_id, day, query, path)
);

-- What each project's day holds, for the caps, and what the caps folded. A
-- write locks its days' rows (sorted), so replicas apply the caps in turn.
CREATE TABLE search_days (
    project_id          text COLLATE "C" NOT NULL,
    day                 timestamptz      NOT NULL,
    queries             bigint           NOT NULL DEFAULT 0,
    click_paths         bigint           NOT NULL DEFAULT 0,
    folded_searches     bigint           NOT NULL DEFAULT 0,
    unattributed_clicks bigint           NOT NULL DEFAULT 0,
    CONSTRAINT search_days_pkey PRIMARY KEY (project_id, day)
);

-- The public tokens of the recording endpoints. origins is the set of web
-- origins allowed to use the token, sorted, separated by single spaces.
CREATE TABLE site_tokens (
    token      text COLLATE "C" NOT NULL,
    project_id text COLLATE "C" NOT NULL REFERENCES projects (id),
    name       text             NOT NULL,
    origins    text             NOT NULL,
    created_at timestamptz,
    revoked_at timestamptz,
    CONSTRAINT site_tokens_pkey PRIMARY KEY (token)
);

CREATE INDEX site_tokens_by_project ON site_tokens (project_id, created_at NULLS FIRST, token);

-- ---- Assistant keys and projects' domains (the /discovery endpoints) ----
--
-- A project's domain identifier addresses it in the /discovery paths. Many
-- projects have none (''), so uniqueness is over the others only: the
-- partial unique index decides between two replicas atomically, and is
-- ProjectByDomain's seek.
CREATE UNIQUE INDEX projects_by_domain ON projects (domain) WHERE domain <> '';

-- Assistant keys (mint_dsc_...): bound to one project and to the web
-- origins listed in origins (sorted, separated by single spaces; '' for a
-- key only servers use). As for api_keys, the secret is never stored, only
-- its hash, whose UNIQUE constraint is the index of the lookup every
-- request makes. A table of their own, so that no query on api_keys can
-- return one, nor the other way round.
CREATE TABLE assistant_keys (
    id         text COLLATE "C" NOT NULL,
    hash       bytea            NOT NULL,
    hint       text             NOT NULL,
    project_id text COLLATE "C" NOT NULL REFERENCES projects (id),
    name       text             NOT NULL,
    origins    text             NOT NULL,
    created_at timestamptz,
    revoked_at timestamptz,
    CONSTRAINT assistant_keys_pkey PRIMARY KEY (id),
    CONSTRAINT assistant_keys_hash_key UNIQUE (hash)
);

CREATE INDEX assistant_keys_by_project ON assistant_keys (project_id, created_at NULLS FIRST, id);
CREATE INDEX assistant_keys_by_created ON assistant_keys (created_at NULLS FIRST, id);
-- ---- End of the assistant block ----

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

-- Page views per agent (see store.AgentStore): per project, UTC day and
-- path, the views of each AI agent and crawler by name, as the traffic
-- classifier names its rules. Names come from a rule table, never from a
-- user agent as sent, and rows are added only for the paths the day holds
-- views of (the cap on paths per day applies to them), so a day holds at
-- most the cap's paths times the table's names. No foreign key to
-- projects, as for the views.
CREATE TABLE agent_days (
    project_id text COLLATE "C" NOT NULL,
    day        bigint NOT NULL, -- Unix time of the UTC day's start
    path       text COLLATE "C" NOT NULL,
    agent      text COLLATE "C" NOT NULL,
    class      text COLLATE "C" NOT NULL CHECK (class IN ('ai', 'search-bot', 'training-bot', 'other-bot')),
    views      bigint NOT NULL CHECK (views >= 0),
    CONSTRAINT agent_days_pkey PRIMARY KEY (project_id, day, path, agent, class)
);

-- A page's agents over a range (?path= on the dashboard and the API).
CREATE INDEX agent_days_by_path ON agent_days (project_id, path, day);

-- ===================================================================
-- The documentation index (store.DocsStore): each project's pages, read
-- from its repository, searched with PostgreSQL's full-text search.
-- ===================================================================

-- The commit each project's index holds.
CREATE TABLE doc_indexes (
    project_id text COLLATE "C" NOT NULL REFERENCES projects (id),
    commit_sha text NOT NULL,
    CONSTRAINT doc_indexes_pkey PRIMARY KEY (project_id)
);

-- The files the index read, with their git blob, so that an update reads
-- only the files that changed.
CREATE TABLE doc_files (
    project_id text COLLATE "C" NOT NULL REFERENCES projects (id),
    file       text COLLATE "C" NOT NULL,
    blob       text NOT NULL,
    CONSTRAINT doc_files_pkey PRIMARY KEY (project_id, file)
);

-- The pages, one per URL path; groups are the navigation groups,
-- outermost first.
CREATE TABLE doc_pages (
    id          bigint GENERATED ALWAYS AS IDENTITY,
    project_id  text COLLATE "C" NOT NULL REFERENCES projects (id),
    path        text COLLATE "C" NOT NULL,
    file        text COLLATE "C" NOT NULL,
    title       text   NOT NULL,
    description text   NOT NULL,
    groups      text[] NOT NULL,
    version     text   NOT NULL,
    language    text   NOT NULL,
    CONSTRAINT doc_pages_pkey PRIMARY KEY (id),
    CONSTRAINT doc_pages_path UNIQUE (project_id, path)
);

-- A file's pages, which an update replaces.
CREATE INDEX doc_pages_by_file ON doc_pages (project_id, file);

-- The pages' sections, in order, each with its search vector: weight A
-- the page's title and description (first section only, so that a page
-- does not match once per section by its title), B the heading, C the
-- text, D the code, all with the English configuration's stems.
CREATE TABLE doc_sections (
    page_id bigint  NOT NULL REFERENCES doc_pages (id) ON DELETE CASCADE,
    ord     integer NOT NULL,
    anchor  text    NOT NULL,
    heading text    NOT NULL,
    text    text    NOT NULL,
    code    text    NOT NULL,
    search  tsvector NOT NULL,
    CONSTRAINT doc_sections_pkey PRIMARY KEY (page_id, ord)
);

CREATE INDEX doc_sections_search ON doc_sections USING gin (search);

-- ---------------------------------------------------------------------
-- Documentation updates: re-reads of a project's repository into the
-- index, queued and leased to one worker as jobs are (DocsUpdateStore).
-- lists holds the logs and the commit's file lists as one JSON text,
-- read whole and never queried.
CREATE TABLE docs_updates (
    id               text COLLATE "C" NOT NULL,
    project_id       text COLLATE "C" NOT NULL REFERENCES projects (id),
    status           text             NOT NULL
                     CHECK (status IN ('queued', 'in_progress', 'success', 'failure')),
    trigger          text             NOT NULL,
    summary          text             NOT NULL DEFAULT '',
    lists            text             NOT NULL DEFAULT '',
    commit_sha       text             NOT NULL DEFAULT '',
    commit_ref       text             NOT NULL DEFAULT '',
    commit_message   text             NOT NULL DEFAULT '',
    attempts         integer          NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    lease_owner      text,
    lease_expires_at timestamptz,
    created_at       timestamptz      NOT NULL,
    updated_at       timestamptz      NOT NULL,
    ended_at         timestamptz,
    CONSTRAINT docs_updates_pkey PRIMARY KEY (id),
    CHECK ((lease_owner IS NULL) = (lease_expires_at IS NULL))
);

-- The claim's candidates, in claim order: only updates not ended.
CREATE INDEX docs_updates_open ON docs_updates (created_at, id)
    WHERE status IN ('queued', 'in_progress');

-- A project's open updates: the creation's queued one, the claim's
-- check that none of the project's runs.
CREATE INDEX docs_updates_open_by_project ON docs_updates (project_id)
    WHERE status IN ('queued', 'in_progress');

-- ---------------------------------------------------------------------
-- The assistant's conversations (store.ConversationStore), as server/
-- sqlite keeps them: threads, exchanges, the tokens each project's model
-- spent per UTC day, and the links from content gaps to agent jobs. Unlike
-- the other tables, these lose rows: DeleteConversationsBefore deletes
-- what the retention no longer keeps.
CREATE TABLE assistant_threads (
    id         text COLLATE "C" NOT NULL, -- a ULID
    project_id text COLLATE "C" NOT NULL REFERENCES projects (id),
    key_hash   bytea            NOT NULL,
    fp         text             NOT NULL,
    caller     text             NOT NULL CHECK (caller IN ('web', 'api', 'other')),
    created_at timestamptz      NOT NULL,
    exchanges  integer          NOT NULL CHECK (exchanges >= 0),
    CONSTRAINT assistant_threads_pkey PRIMARY KEY (id)
);

-- The threads the retention emptied, which it deletes next (see sqlite's).
CREATE INDEX assistant_threads_empty ON assistant_threads (id) WHERE exchanges = 0;

-- One row per exchange; id and question_id are unique across projects and
-- across both columns (AddExchange checks each ID in both, under the lock
-- of the project's day). sources is JSON text, read whole, never queried.
CREATE TABLE assistant_exchanges (
    id            text COLLATE "C" NOT NULL,
    question_id   text COLLATE "C" NOT NULL,
    project_id    text COLLATE "C" NOT NULL REFERENCES projects (id),
    thread_id     text COLLATE "C" NOT NULL REFERENCES assistant_threads (id),
    question      text             NOT NULL,
    asked_at      timestamptz      NOT NULL,
    answer        text             NOT NULL,
    answered_at   timestamptz,
    response_type text             NOT NULL CHECK (response_type IN ('answer', 'clarifying_question')),
    resolution    text             NOT NULL CHECK (resolution IN ('answered', 'unanswered')),
    sources       text             NOT NULL,
    page_url      text             NOT NULL,
    caller        text             NOT NULL CHECK (caller IN ('web', 'api', 'other')),
    CONSTRAINT assistant_exchanges_pkey PRIMARY KEY (id),
    CONSTRAINT assistant_exchanges_question_key UNIQUE (question_id)
);

-- The export by ID from a cursor, the caller statistics over a range of
-- asked_at, a thread's exchanges in order, and the retention's oldest.
-- The thread index is also the one the foreign key's deletes need, which
-- the retention makes.
CREATE INDEX assistant_exchanges_by_id ON assistant_exchanges (project_id, id);
CREATE INDEX assistant_exchanges_by_time ON assistant_exchanges (project_id, asked_at);
CREATE INDEX assistant_exchanges_by_thread ON assistant_exchanges (thread_id, asked_at, id);
CREATE INDEX assistant_exchanges_asked ON assistant_exchanges (asked_at);

-- The exchanges of each project's UTC day, for the cap on exchanges per
-- day: a write locks its day's row, so replicas adding at once queue on it
-- and the cap holds (as feedback_days).
CREATE TABLE assistant_days (
    project_id text COLLATE "C" NOT NULL,
    day        timestamptz      NOT NULL,
    exchanges  bigint           NOT NULL CHECK (exchanges >= 0),
    CONSTRAINT assistant_days_pkey PRIMARY KEY (project_id, day)
);

-- The tokens each project's model spent per UTC day.
CREATE TABLE assistant_token_days (
    project_id text COLLATE "C" NOT NULL,
    day        timestamptz      NOT NULL,
    tokens     bigint           NOT NULL CHECK (tokens >= 0),
    CONSTRAINT assistant_token_days_pkey PRIMARY KEY (project_id, day)
);

-- The content gaps each agent job was made from (see sqlite's).
CREATE TABLE gap_links (
    project_id text COLLATE "C" NOT NULL REFERENCES projects (id),
    kind       text COLLATE "C" NOT NULL CHECK (kind IN ('question', 'search', 'page')),
    key        text COLLATE "C" NOT NULL,
    job_id     text COLLATE "C" NOT NULL REFERENCES jobs (id),
    created_at timestamptz      NOT NULL,
    CONSTRAINT gap_links_pkey PRIMARY KEY (project_id, kind, key, job_id)
);
