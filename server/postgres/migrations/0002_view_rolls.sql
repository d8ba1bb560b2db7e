-- Rolls of page views (see package server/internal/rollup): per project and
-- hour, and per project and day, the per-path counts of that hour or day in
-- one packed value, kept in the same transaction as page_views. A 30-day
-- views query reads 30 day rolls instead of one row per path per hour. The
-- rows stayed the truth; a step in Go filled the rolls from them, until
-- migration 3 replaced these rolls (and the step) and migration 6 dropped
-- the rows.

-- A path's number inside rolls. An identity never hands out a value twice,
-- so a roll never names the wrong path.
CREATE TABLE view_paths (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    project_id text COLLATE "C" NOT NULL,
    path       text COLLATE "C" NOT NULL,
    CONSTRAINT view_paths_key UNIQUE (project_id, path)
);

-- Keys are Unix seconds, as rollup.Span bounds them (an open side is the
-- largest or smallest bigint). Rolls are already compact varints, so they
-- are stored out of line uncompressed: compressing saves little and every
-- read would pay to inflate them.
CREATE TABLE view_hour_rolls (
    project_id text COLLATE "C" NOT NULL,
    hour       bigint NOT NULL,
    counts     bytea  NOT NULL,
    CONSTRAINT view_hour_rolls_pkey PRIMARY KEY (project_id, hour)
);
ALTER TABLE view_hour_rolls ALTER COLUMN counts SET STORAGE EXTERNAL;

CREATE TABLE view_day_rolls (
    project_id text COLLATE "C" NOT NULL,
    day        bigint NOT NULL,
    counts     bytea  NOT NULL,
    CONSTRAINT view_day_rolls_pkey PRIMARY KEY (project_id, day)
);
ALTER TABLE view_day_rolls ALTER COLUMN counts SET STORAGE EXTERNAL;
