-- 0003: rolls keyed by path, in segments, and the days' counts of paths
-- (see package server/internal/rollup).
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
-- Tables with a rowid, as SQLite keeps large values out of WITHOUT ROWID
-- tables' b-tree pages poorly.
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
