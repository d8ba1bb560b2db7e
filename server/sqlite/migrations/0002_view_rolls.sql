-- Rolls of page views (see package server/internal/rollup): per project and
-- hour, and per project and day, the per-path counts of that hour or day in
-- one packed value, kept in the same transaction as page_views. A 30-day
-- views query reads 30 day rolls instead of one row per path per hour. The
-- rows stayed the truth; a step in Go filled the rolls from them, until
-- migration 3 replaced these rolls (and the step) and migration 6 dropped
-- the rows.

-- A path's number inside rolls. AUTOINCREMENT: an ID is never given to
-- another path, even after the highest one is deleted, so a roll never
-- names the wrong path.
CREATE TABLE view_paths (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id TEXT    NOT NULL,
    path       TEXT    NOT NULL,
    UNIQUE (project_id, path)
) STRICT;

-- Rolls are a few bytes per path, kilobytes for a busy hour or day: tables
-- with a rowid, as SQLite keeps large values out of WITHOUT ROWID tables'
-- b-tree pages poorly.
CREATE TABLE view_hour_rolls (
    project_id TEXT    NOT NULL,
    hour       INTEGER NOT NULL, -- Unix time of the hour's start
    counts     BLOB    NOT NULL,
    UNIQUE (project_id, hour)
) STRICT;

CREATE TABLE view_day_rolls (
    project_id TEXT    NOT NULL,
    day        INTEGER NOT NULL, -- Unix time of the UTC day's start
    counts     BLOB    NOT NULL,
    UNIQUE (project_id, day)
) STRICT;
