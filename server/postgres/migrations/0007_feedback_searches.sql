-- 0007: readers' feedback and searches, recorded through the public site
-- endpoints with the site tokens below, and the secrets every replica must
-- agree on (the key that signs pagination cursors). It mirrors
-- server/sqlite's migration 7, table for table.
--
-- No table here holds a reader's address, user agent or any identifier of
-- a reader: feedback keeps what the reader wrote, searches only counts.

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

-- Secrets shared by every replica, by name: the first to need one inserts
-- it (ON CONFLICT DO NOTHING), and all read the row that won.
CREATE TABLE server_secrets (
    name   text COLLATE "C" NOT NULL,
    secret bytea            NOT NULL,
    CONSTRAINT server_secrets_pkey PRIMARY KEY (name)
);
