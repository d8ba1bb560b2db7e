-- 0008: unique visitors, as HyperLogLog sketches in rolls like the views'
-- (see package server/internal/rollup, visitors.go), and the daily salts
-- the recorder hashes visitors with.
--
-- Nothing here identifies a visitor: a sketch keeps a few bits of each
-- visitor's salted hash, from which neither the hash nor the visitor can be
-- recovered, and a day's salt is deleted once the day after it is over, so
-- the hashes of a past day can never be computed again.

-- A roll's segments, in the order written (seq); size is a segment's bytes,
-- read to decide merges without reading segments. Like the views' rolls,
-- tables with a rowid.
CREATE TABLE visitor_hour_rolls (
    project_id TEXT    NOT NULL,
    hour       INTEGER NOT NULL, -- Unix time of the hour's start
    seq        INTEGER NOT NULL CHECK (seq > 0),
    size       INTEGER NOT NULL CHECK (size > 0),
    sketches   BLOB    NOT NULL,
    PRIMARY KEY (project_id, hour, seq)
) STRICT;

CREATE TABLE visitor_day_rolls (
    project_id TEXT    NOT NULL,
    day        INTEGER NOT NULL, -- Unix time of the UTC day's start
    seq        INTEGER NOT NULL CHECK (seq > 0),
    size       INTEGER NOT NULL CHECK (size > 0),
    sketches   BLOB    NOT NULL,
    PRIMARY KEY (project_id, day, seq)
) STRICT;

CREATE TABLE visitor_week_rolls (
    project_id TEXT    NOT NULL,
    week       INTEGER NOT NULL, -- Unix time of the week's start (a Monday, UTC)
    seq        INTEGER NOT NULL CHECK (seq > 0),
    size       INTEGER NOT NULL CHECK (size > 0),
    sketches   BLOB    NOT NULL,
    PRIMARY KEY (project_id, week, seq)
) STRICT;

-- The salt of each UTC day whose visitors may still be recorded: today's
-- and yesterday's (a flush may carry the last hour of a day past midnight).
CREATE TABLE visitor_salts (
    day  INTEGER NOT NULL PRIMARY KEY, -- Unix time of the UTC day's start
    salt BLOB    NOT NULL CHECK (length(salt) = 32)
) STRICT;
