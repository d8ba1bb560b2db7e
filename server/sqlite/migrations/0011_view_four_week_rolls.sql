-- 0011: rolls of four weeks for the views (see package
-- server/internal/rollup, viewspan.go).
--
-- A year's range read 52 week rolls, each about every path of a busy site:
-- a year's page took the merge of 52 lists of the same paths. A four-week
-- roll holds the counts of four weeks, starting on the Monday of every
-- fourth week since 1970-01-05, so a range's whole four weeks lie among its
-- whole weeks and a year reads about 13 of them, and a few week and day
-- rolls at its edges. AddViews adds to them in the transaction that adds to
-- the other rolls. The step in Go that follows this file builds them from
-- the week rolls: four of those are exactly one of these.
--
-- As the other rolls: a table with a rowid, as SQLite keeps large values
-- out of WITHOUT ROWID tables' b-tree pages poorly.
CREATE TABLE view_four_week_rolls (
    project_id TEXT    NOT NULL,
    four_week  INTEGER NOT NULL, -- Unix time of the four weeks' start, a Monday
    seq        INTEGER NOT NULL CHECK (seq > 0),
    entries    INTEGER NOT NULL CHECK (entries >= 0),
    counts     BLOB    NOT NULL,
    PRIMARY KEY (project_id, four_week, seq)
) STRICT;
