-- 0001: the schema. No release has shipped: until one does, this file is
-- changed in place; migrations start again after the first release.
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
    domain     TEXT    NOT NULL DEFAULT '', -- '' when none; see the assistant block
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

-- The job list (ListJobs) reads one project's jobs newest first, by
-- (created_at, id), a page at a time from a cursor. The primary key orders
-- jobs by ID and jobs_ready holds active jobs only, so without this index
-- every page would scan and sort the whole history of jobs; with it, a page
-- is a seek to the cursor's place and a backward walk of the page's rows.
CREATE INDEX jobs_by_time ON jobs (project_id, created_at, id);

-- Page views (see package server/internal/rollup, which describes the
-- format): per project and hour, UTC day and week, a roll of the per-path
-- counts, stored as its segments in the order written (seq). The hour
-- rolls are the record of every view. entries is the number of paths a
-- segment holds, read to decide merges without reading segments. Tables
-- with a rowid, as SQLite keeps large values out of WITHOUT ROWID tables'
-- b-tree pages poorly. No foreign key to projects: views are recorded in
-- batches, and one unknown project must not make a whole batch fail.
CREATE TABLE view_hour_rolls (
    project_id TEXT    NOT NULL,
    hour       INTEGER NOT NULL, -- Unix time of the hour's start
    seq        INTEGER NOT NULL CHECK (seq > 0),
    entries    INTEGER NOT NULL CHECK (entries >= 0),
    counts     BLOB    NOT NULL,
    PRIMARY KEY (project_id, hour, seq)
) STRICT;

CREATE TABLE view_day_rolls (
    project_id TEXT    NOT NULL,
    day        INTEGER NOT NULL, -- Unix time of the UTC day's start
    seq        INTEGER NOT NULL CHECK (seq > 0),
    entries    INTEGER NOT NULL CHECK (entries >= 0),
    counts     BLOB    NOT NULL,
    PRIMARY KEY (project_id, day, seq)
) STRICT;

-- Weeks start on Mondays at midnight UTC: a month's range reads about four
-- week rolls and a few day rolls, instead of 30 day rolls.
CREATE TABLE view_week_rolls (
    project_id TEXT    NOT NULL,
    week       INTEGER NOT NULL, -- Unix time of the week's start
    seq        INTEGER NOT NULL CHECK (seq > 0),
    entries    INTEGER NOT NULL CHECK (entries >= 0),
    counts     BLOB    NOT NULL,
    PRIMARY KEY (project_id, week, seq)
) STRICT;

-- Per project and UTC day: how many distinct paths have a row that day (the
-- path "/(other pages)" aside), which the cap on paths per day compares
-- with, and what the cap folded into "/(other pages)": counts (a path's
-- views in an hour) and their views. A day gets a row once a new path comes
-- to it.
CREATE TABLE view_days (
    project_id    TEXT    NOT NULL,
    day           INTEGER NOT NULL, -- Unix time of the UTC day's start
    paths         INTEGER NOT NULL DEFAULT 0 CHECK (paths >= 0),
    folded_counts INTEGER NOT NULL DEFAULT 0 CHECK (folded_counts >= 0),
    folded_views  INTEGER NOT NULL DEFAULT 0 CHECK (folded_views >= 0),
    PRIMARY KEY (project_id, day)
) STRICT, WITHOUT ROWID;

-- The paths each day holds, for the cap to tell a new path from a known one
-- with one seek. A row is added the first time a path comes to a day, so a
-- flush of paths the day holds writes nothing here.
CREATE TABLE view_day_paths (
    project_id TEXT    NOT NULL,
    day        INTEGER NOT NULL,
    path       TEXT    NOT NULL,
    PRIMARY KEY (project_id, day, path)
) STRICT, WITHOUT ROWID;

-- Unique visitors (see package server/internal/rollup, visitors.go), and
-- the daily salts visitors are hashed with. Nothing here identifies a
-- visitor: a sketch keeps a few bits of each visitor's salted hash, and a
-- day's salt is deleted once no server can still call the day yesterday.
--
-- A project's day of visitors: its paths' numbers (a segment in the
-- views' format: human, AI and total visitors) and the project's, and
-- whether the day is open. An open day's numbers are made anew from its
-- sketches at every flush; a closed day's are final, and in its week's
-- roll too.
CREATE TABLE visitor_days (
    project_id TEXT    NOT NULL,
    day        INTEGER NOT NULL, -- Unix time of the UTC day's start
    open       INTEGER NOT NULL CHECK (open IN (0, 1)),
    human      INTEGER NOT NULL CHECK (human >= 0),
    ai         INTEGER NOT NULL CHECK (ai >= 0),
    total      INTEGER NOT NULL CHECK (total >= 0),
    entries    INTEGER NOT NULL CHECK (entries >= 0),
    counts     BLOB    NOT NULL,
    PRIMARY KEY (project_id, day)
) STRICT;

-- The days a new salt may close: the open ones, by day.
CREATE INDEX visitor_days_open ON visitor_days (day) WHERE open = 1;

-- The HyperLogLog sketches of an open day's visitors, human and AI (NULL:
-- none), per path; path '' holds the project's, which are not the union
-- of its paths'. Deleted when the day closes.
CREATE TABLE visitor_sketches (
    project_id TEXT    NOT NULL,
    day        INTEGER NOT NULL,
    path       TEXT    NOT NULL,
    human      BLOB,
    ai         BLOB,
    PRIMARY KEY (project_id, day, path)
) STRICT;

-- The numbers of each week's closed days, as the views' week rolls hold
-- their counts.
CREATE TABLE visitor_week_rolls (
    project_id TEXT    NOT NULL,
    week       INTEGER NOT NULL, -- Unix time of the week's start (a Monday, UTC)
    seq        INTEGER NOT NULL CHECK (seq > 0),
    entries    INTEGER NOT NULL CHECK (entries >= 0),
    counts     BLOB    NOT NULL,
    PRIMARY KEY (project_id, week, seq)
) STRICT;

-- The salt of each UTC day whose visitors may still be hashed: made when
-- first asked for (up to an hour before the day starts), deleted when the
-- salt of the third day after it is (about two days after the day ends),
-- since the day is yesterday to some server until the second day after it
-- starts, by then asked for already.
CREATE TABLE visitor_salts (
    day  INTEGER NOT NULL PRIMARY KEY, -- Unix time of the UTC day's start
    salt BLOB    NOT NULL CHECK (length(salt) = 32)
) STRICT;

-- One row per piece of feedback. IDs are unique across projects, as job
-- IDs are. comment is NULL when no comment was sent (thumbs only), '' when
-- an empty one was; the other optional texts are '' when absent.
CREATE TABLE feedback (
    id         TEXT    NOT NULL PRIMARY KEY,
    project_id TEXT    NOT NULL REFERENCES projects (id),
    path       TEXT    NOT NULL,
    source     TEXT    NOT NULL,
    status     TEXT    NOT NULL,
    helpful    INTEGER NOT NULL DEFAULT 0 CHECK (helpful IN (0, 1)),
    comment    TEXT,
    contact    TEXT    NOT NULL DEFAULT '',
    code       TEXT    NOT NULL DEFAULT '',
    filename   TEXT    NOT NULL DEFAULT '',
    lang       TEXT    NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
) STRICT;

-- The export pages newest first by (created_at, id) from a cursor, and
-- every query is of one project over a creation range: this index seeks
-- to the cursor's place and reads the page in order, so a page costs its
-- size whatever the project holds. The counts by page read the range
-- through it too.
CREATE INDEX feedback_by_time ON feedback (project_id, created_at, id);

-- The entries of each project's UTC day (unix microseconds of its
-- midnight), for the cap on entries per day: one row to read and bump
-- instead of counting the day's entries at every write.
CREATE TABLE feedback_days (
    project_id TEXT    NOT NULL,
    day        INTEGER NOT NULL,
    entries    INTEGER NOT NULL CHECK (entries >= 0),
    PRIMARY KEY (project_id, day)
) STRICT, WITHOUT ROWID;

-- Searches per project, UTC day and normalised query: how often it was
-- searched, how often a result was opened after it, and when it was last
-- searched. Counts, never one row per search.
CREATE TABLE search_queries (
    project_id TEXT    NOT NULL,
    day        INTEGER NOT NULL,
    query      TEXT    NOT NULL,
    hits       INTEGER NOT NULL CHECK (hits >= 0),
    clicks     INTEGER NOT NULL CHECK (clicks >= 0),
    last_at    INTEGER NOT NULL,
    PRIMARY KEY (project_id, day, query)
) STRICT, WITHOUT ROWID;

-- Which results were opened after a query, per day: for topClickedPage.
CREATE TABLE search_clicks (
    project_id TEXT    NOT NULL,
    day        INTEGER NOT NULL,
    query      TEXT    NOT NULL,
    path       TEXT    NOT NULL,
    clicks     INTEGER NOT NULL CHECK (clicks >= 0),
    PRIMARY KEY (project_id, day, query, path)
) STRICT, WITHOUT ROWID;

-- What each project's day holds, for the caps (distinct queries, distinct
-- pairs of query and opened result), and what the caps folded: searches
-- counted under "(other searches)", openings kept without their result.
CREATE TABLE search_days (
    project_id         TEXT    NOT NULL,
    day                INTEGER NOT NULL,
    queries            INTEGER NOT NULL DEFAULT 0,
    click_paths        INTEGER NOT NULL DEFAULT 0,
    folded_searches    INTEGER NOT NULL DEFAULT 0,
    unattributed_clicks INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (project_id, day)
) STRICT, WITHOUT ROWID;

-- The public tokens of the recording endpoints. origins is the set of web
-- origins allowed to use the token, sorted and separated by single spaces
-- (an origin holds no space).
CREATE TABLE site_tokens (
    token      TEXT    NOT NULL PRIMARY KEY,
    project_id TEXT    NOT NULL REFERENCES projects (id),
    name       TEXT    NOT NULL,
    origins    TEXT    NOT NULL,
    created_at INTEGER,
    revoked_at INTEGER
) STRICT;

CREATE INDEX site_tokens_by_project ON site_tokens (project_id, created_at, token);

-- ---- Assistant keys and projects' domains (the /discovery endpoints) ----
--
-- A project's domain identifier addresses it in the /discovery paths. Many
-- projects have none (''), so uniqueness is over the others only; the index
-- is also ProjectByDomain's seek (its query repeats domain <> '', so that
-- SQLite may use the partial index).
CREATE UNIQUE INDEX projects_by_domain ON projects (domain) WHERE domain <> '';

-- Assistant keys (mint_dsc_...): bound to one project and to the web
-- origins listed in origins (sorted, separated by single spaces; '' for a
-- key only servers use). As for api_keys, the secret is never stored, only
-- its hash, whose UNIQUE constraint is the index of the lookup every
-- request makes. A table of their own, so that no query on api_keys can
-- return one, nor the other way round.
CREATE TABLE assistant_keys (
    id         TEXT    NOT NULL PRIMARY KEY,
    hash       BLOB    NOT NULL UNIQUE,
    hint       TEXT    NOT NULL,
    project_id TEXT    NOT NULL REFERENCES projects (id),
    name       TEXT    NOT NULL,
    origins    TEXT    NOT NULL,
    created_at INTEGER,
    revoked_at INTEGER
) STRICT;

CREATE INDEX assistant_keys_by_project ON assistant_keys (project_id, created_at, id);
CREATE INDEX assistant_keys_by_created ON assistant_keys (created_at, id);
-- ---- End of the assistant block ----

-- A session signed out before it expired, kept until it would have
-- expired (plus a margin for the clocks of the processes sharing the
-- database), so that a copy of its cookie is refused after a restart too.
-- Each sign-out deletes the records that lapsed (the index on kept_until).
CREATE TABLE ended_sessions (
    id         BLOB    NOT NULL PRIMARY KEY CHECK (length(id) = 32),
    kept_until INTEGER NOT NULL -- Unix microseconds
) STRICT, WITHOUT ROWID;

CREATE INDEX ended_sessions_by_until ON ended_sessions (kept_until);

-- Page views per agent (see store.AgentStore): per project, UTC day and
-- path, the views of each AI agent and crawler by name, as the traffic
-- classifier names its rules. Names come from a rule table, never from a
-- user agent as sent, and rows are added only for the paths the day holds
-- views of (the cap on paths per day applies to them), so a day holds at
-- most the cap's paths times the table's names. No foreign key to
-- projects, as for the views.
CREATE TABLE agent_days (
    project_id TEXT    NOT NULL,
    day        INTEGER NOT NULL, -- Unix time of the UTC day's start
    path       TEXT    NOT NULL,
    agent      TEXT    NOT NULL,
    class      TEXT    NOT NULL CHECK (class IN ('ai', 'search-bot', 'training-bot', 'other-bot')),
    views      INTEGER NOT NULL CHECK (views >= 0),
    PRIMARY KEY (project_id, day, path, agent, class)
) STRICT, WITHOUT ROWID;

-- A page's agents over a range (?path= on the dashboard and the API).
CREATE INDEX agent_days_by_path ON agent_days (project_id, path, day);

-- ===================================================================
-- The documentation index (store.DocsStore): each project's pages, read
-- from its repository, searched with FTS5.
-- ===================================================================

-- The commit each project's index holds.
CREATE TABLE doc_indexes (
    project_id TEXT NOT NULL PRIMARY KEY REFERENCES projects (id),
    commit_sha TEXT NOT NULL
) STRICT, WITHOUT ROWID;

-- The files the index read, with their git blob, so that an update reads
-- only the files that changed.
CREATE TABLE doc_files (
    project_id TEXT NOT NULL REFERENCES projects (id),
    file       TEXT NOT NULL,
    blob       TEXT NOT NULL,
    PRIMARY KEY (project_id, file)
) STRICT, WITHOUT ROWID;

-- The pages, one per URL path. groups is a JSON array of the navigation
-- groups, outermost first.
CREATE TABLE doc_pages (
    id          INTEGER PRIMARY KEY,
    project_id  TEXT NOT NULL REFERENCES projects (id),
    path        TEXT NOT NULL,
    file        TEXT NOT NULL,
    title       TEXT NOT NULL,
    description TEXT NOT NULL,
    groups      TEXT NOT NULL,
    version     TEXT NOT NULL,
    language    TEXT NOT NULL,
    UNIQUE (project_id, path)
) STRICT;

-- A file's pages, which an update replaces.
CREATE INDEX doc_pages_by_file ON doc_pages (project_id, file);

-- The pages' sections, in order. title is what the search reads as the
-- section's title: the page's title and description for its first
-- section, "" for the others, so that a page does not match once per
-- section by its title.
CREATE TABLE doc_sections (
    id      INTEGER PRIMARY KEY,
    page_id INTEGER NOT NULL REFERENCES doc_pages (id) ON DELETE CASCADE,
    ord     INTEGER NOT NULL,
    anchor  TEXT NOT NULL,
    title   TEXT NOT NULL,
    heading TEXT NOT NULL,
    text    TEXT NOT NULL,
    code    TEXT NOT NULL,
    UNIQUE (page_id, ord)
) STRICT;

-- The full-text index of the sections, an external-content FTS5 table
-- (the text is kept once, in doc_sections) kept in step by the triggers
-- below; English stems with the Porter stemmer, accents folded.
CREATE VIRTUAL TABLE doc_search USING fts5 (
    title, heading, text, code,
    content = 'doc_sections', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER doc_sections_indexed AFTER INSERT ON doc_sections BEGIN
    INSERT INTO doc_search (rowid, title, heading, text, code)
    VALUES (new.id, new.title, new.heading, new.text, new.code);
END;

-- Sections are deleted with their page (ON DELETE CASCADE fires this too),
-- never updated.
CREATE TRIGGER doc_sections_unindexed AFTER DELETE ON doc_sections BEGIN
    INSERT INTO doc_search (doc_search, rowid, title, heading, text, code)
    VALUES ('delete', old.id, old.title, old.heading, old.text, old.code);
END;

-- ---------------------------------------------------------------------
-- Documentation updates: re-reads of a project's repository into the
-- index, queued and leased to one worker as jobs are (DocsUpdateStore).
-- lists holds the logs and the commit's file lists as one JSON text,
-- read whole and never queried.
CREATE TABLE docs_updates (
    id               TEXT    NOT NULL PRIMARY KEY,
    project_id       TEXT    NOT NULL REFERENCES projects (id),
    status           TEXT    NOT NULL
                     CHECK (status IN ('queued', 'in_progress', 'success', 'failure')),
    trigger          TEXT    NOT NULL,
    summary          TEXT    NOT NULL DEFAULT '',
    lists            TEXT    NOT NULL DEFAULT '',
    commit_sha       TEXT    NOT NULL DEFAULT '',
    commit_ref       TEXT    NOT NULL DEFAULT '',
    commit_message   TEXT    NOT NULL DEFAULT '',
    attempts         INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    lease_owner      TEXT,
    lease_expires_at INTEGER,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    ended_at         INTEGER,
    CHECK ((lease_owner IS NULL) = (lease_expires_at IS NULL))
) STRICT;

-- The claim's candidates, in claim order: only updates not ended, so the
-- index stays as small as the queue however many updates ended.
CREATE INDEX docs_updates_open ON docs_updates (created_at, id)
    WHERE status IN ('queued', 'in_progress');

-- A project's open updates: the creation's queued one, the claim's
-- check that none of the project's runs.
CREATE INDEX docs_updates_open_by_project ON docs_updates (project_id)
    WHERE status IN ('queued', 'in_progress');

-- ---------------------------------------------------------------------
-- The assistant's conversations (store.ConversationStore): threads, each a
-- run of exchanges (a question and its answer), the tokens each project's
-- model spent per UTC day, and the links from content gaps to the agent
-- jobs made from them. Exchanges and threads older than the retention are
-- deleted (DeleteConversationsBefore).
--
-- A thread keeps the SHA-256 of its key, never the key; exchanges counts
-- its exchanges, for the cap on a thread's length.
CREATE TABLE assistant_threads (
    id         TEXT    NOT NULL PRIMARY KEY, -- a ULID
    project_id TEXT    NOT NULL REFERENCES projects (id),
    key_hash   BLOB    NOT NULL,
    fp         TEXT    NOT NULL,
    caller     TEXT    NOT NULL CHECK (caller IN ('web', 'api', 'other')),
    created_at INTEGER NOT NULL,
    exchanges  INTEGER NOT NULL CHECK (exchanges >= 0)
) STRICT;

-- The threads the retention emptied, which it deletes next: a partial
-- index that holds rows only within that transaction, so the deletion
-- reads them without a scan of every thread.
CREATE INDEX assistant_threads_empty ON assistant_threads (id) WHERE exchanges = 0;

-- One row per exchange. id (the answer's message ID) and question_id are
-- ULIDs, unique across projects and across both columns (AddExchange
-- checks each ID in both). sources is a JSON array of {"title", "url"},
-- read whole and never queried.
CREATE TABLE assistant_exchanges (
    id            TEXT    NOT NULL PRIMARY KEY,
    question_id   TEXT    NOT NULL UNIQUE,
    project_id    TEXT    NOT NULL REFERENCES projects (id),
    thread_id     TEXT    NOT NULL REFERENCES assistant_threads (id),
    question      TEXT    NOT NULL,
    asked_at      INTEGER NOT NULL,
    answer        TEXT    NOT NULL,
    answered_at   INTEGER,
    response_type TEXT    NOT NULL CHECK (response_type IN ('answer', 'clarifying_question')),
    resolution    TEXT    NOT NULL CHECK (resolution IN ('answered', 'unanswered')),
    sources       TEXT    NOT NULL,
    page_url      TEXT    NOT NULL,
    caller        TEXT    NOT NULL CHECK (caller IN ('web', 'api', 'other'))
) STRICT;

-- The conversations export pages a project's exchanges by ID (ULIDs, so
-- in the order asked) from a cursor; the caller statistics count a
-- project's range of asked_at; a thread reads its exchanges in order; the
-- retention deletes every project's oldest.
CREATE INDEX assistant_exchanges_by_id ON assistant_exchanges (project_id, id);
CREATE INDEX assistant_exchanges_by_time ON assistant_exchanges (project_id, asked_at);
CREATE INDEX assistant_exchanges_by_thread ON assistant_exchanges (thread_id, asked_at, id);
CREATE INDEX assistant_exchanges_asked ON assistant_exchanges (asked_at);

-- The exchanges of each project's UTC day (unix microseconds of its
-- midnight), for the cap on exchanges per day, as feedback_days.
CREATE TABLE assistant_days (
    project_id TEXT    NOT NULL,
    day        INTEGER NOT NULL,
    exchanges  INTEGER NOT NULL CHECK (exchanges >= 0),
    PRIMARY KEY (project_id, day)
) STRICT, WITHOUT ROWID;

-- The tokens each project's model spent per UTC day, for the daily
-- budget. No foreign key to projects, as for the views: a count.
CREATE TABLE assistant_token_days (
    project_id TEXT    NOT NULL,
    day        INTEGER NOT NULL,
    tokens     INTEGER NOT NULL CHECK (tokens >= 0),
    PRIMARY KEY (project_id, day)
) STRICT, WITHOUT ROWID;

-- The content gaps each agent job was made from: kind is the gap's kind,
-- key names it within its kind (a normalised question or query, a page's
-- path). A link is stored once; linking it again keeps the first.
CREATE TABLE gap_links (
    project_id TEXT    NOT NULL REFERENCES projects (id),
    kind       TEXT    NOT NULL CHECK (kind IN ('question', 'search', 'page')),
    key        TEXT    NOT NULL,
    job_id     TEXT    NOT NULL REFERENCES jobs (id),
    created_at INTEGER NOT NULL,
    PRIMARY KEY (project_id, kind, key, job_id)
) STRICT, WITHOUT ROWID;
