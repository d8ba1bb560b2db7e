-- 0004: page_views keyed by (project_id, hour, path).
--
-- The key was (project_id, path, hour), which spreads the rows of one hour
-- over the whole table: a flush of an hour's 5,000 paths wrote 5,000 pages
-- of a large table, so flushes grew slower as the table grew. Keyed by hour
-- first, a flush writes into the hour's few pages. The views query reads
-- the rolls, not the rows, and the cap asks view_day_paths whether a day
-- holds a path, so nothing reads rows by path any more; page_views_by_hour,
-- which ordered the rows by hour for the query and for the rebuilds of the
-- rolls, is the key itself now, and goes with the old table. WITHOUT ROWID
-- makes the key the table: a range of hours is read in key order with no
-- second lookup.
CREATE TABLE page_views_new (
    project_id TEXT    NOT NULL,
    path       TEXT    NOT NULL,
    hour       INTEGER NOT NULL,
    human      INTEGER NOT NULL DEFAULT 0 CHECK (human >= 0),
    ai         INTEGER NOT NULL DEFAULT 0 CHECK (ai >= 0),
    bot        INTEGER NOT NULL DEFAULT 0 CHECK (bot >= 0),
    PRIMARY KEY (project_id, hour, path)
) STRICT, WITHOUT ROWID;

INSERT INTO page_views_new (project_id, path, hour, human, ai, bot)
SELECT project_id, path, hour, human, ai, bot FROM page_views ORDER BY project_id, hour, path;

DROP TABLE page_views;
ALTER TABLE page_views_new RENAME TO page_views;
