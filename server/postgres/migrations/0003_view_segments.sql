-- 0003: rolls keyed by path, in segments, and the days' counts of paths
-- (see package server/internal/rollup; the same as SQLite's migration 3).
--
-- Rolls were keyed by path IDs (view_paths): ranking a page then looked up
-- the path of every row that shared a total with the page's, which a made-up
-- path of one view each made as costly as the project's paths; and a flush
-- rewrote the whole roll of its day. Now a roll's entries are the paths
-- themselves, in byte order and front-coded, so the sum of a range is in
-- path order and nothing is looked up; and a roll is a few segments, a flush
-- writing a new one merged only with the small ones it lands next to.
-- Rolls are derived from page_views: the step in Go that follows this file
-- rebuilds them from the rows.

DROP TABLE view_hour_rolls;
DROP TABLE view_day_rolls;
DROP TABLE view_paths;

-- A roll's segments, in the order written (seq). entries is the number of
-- paths a segment holds, read to decide merges without reading segments.
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
