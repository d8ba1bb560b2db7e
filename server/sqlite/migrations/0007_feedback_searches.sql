-- 0007: what readers do on the documentation site besides reading: their
-- feedback and their searches, recorded through the public site endpoints
-- with the site tokens below; and the secrets every process sharing the
-- database must agree on (the key that signs pagination cursors).
--
-- No table here holds a reader's address, user agent or any identifier of
-- a reader: feedback keeps what the reader wrote, searches only counts.

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

-- Secrets shared by every process on this database, by name. The first
-- process that needs one stores it; the others read it.
CREATE TABLE server_secrets (
    name   TEXT NOT NULL PRIMARY KEY,
    secret BLOB NOT NULL
) STRICT;
