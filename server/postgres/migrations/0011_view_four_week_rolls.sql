-- 0011: rolls of four weeks for the views (see package
-- server/internal/rollup, viewspan.go).
--
-- A year's range read 52 week rolls, each about every path of a busy site:
-- a year's page took the merge of 52 lists of the same paths. A four-week
-- roll holds the counts of four weeks, starting on the Monday of every
-- fourth week since 1970-01-05, so a range's whole four weeks lie among its
-- whole weeks and a year reads about 13 of them, and a few week and day
-- rolls at its edges. AddViews adds to them in the transaction that adds to
-- the other rolls, under the lock of the view_days row of the four weeks'
-- first day (as a week's roll is under its Monday's). The step in Go that
-- follows this file builds them from the week rolls: four of those are
-- exactly one of these.
CREATE TABLE view_four_week_rolls (
    project_id text COLLATE "C" NOT NULL,
    four_week  bigint NOT NULL, -- Unix time of the four weeks' start, a Monday
    seq        bigint NOT NULL CHECK (seq > 0),
    entries    bigint NOT NULL CHECK (entries >= 0),
    counts     bytea  NOT NULL,
    CONSTRAINT view_four_week_rolls_pkey PRIMARY KEY (project_id, four_week, seq)
);
-- Segments are packed already: compressing them would cost every query a
-- decompression for little space (as the other rolls).
ALTER TABLE view_four_week_rolls ALTER COLUMN counts SET STORAGE EXTERNAL;
