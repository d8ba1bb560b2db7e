-- 0008: unique visitors, as HyperLogLog sketches in rolls like the views'
-- (see package server/internal/rollup, visitors.go), and the daily salts
-- the recorder hashes visitors with.
--
-- Nothing here identifies a visitor: a sketch keeps a few bits of each
-- visitor's salted hash, from which neither the hash nor the visitor can be
-- recovered, and a day's salt is deleted once the day after it is over, so
-- the hashes of a past day can never be computed again.
--
-- A flush locks the view_days rows of its days and weeks, as AddViews
-- does, which guard these rolls too.

-- A roll's segments, in the order written (seq); size is a segment's bytes,
-- read to decide merges without reading segments. Sketches are compact
-- already: stored out of line uncompressed, as the views' segments are.
CREATE TABLE visitor_hour_rolls (
    project_id text COLLATE "C" NOT NULL,
    hour       bigint NOT NULL, -- Unix time of the hour's start
    seq        bigint NOT NULL CHECK (seq > 0),
    size       bigint NOT NULL CHECK (size > 0),
    sketches   bytea  NOT NULL,
    PRIMARY KEY (project_id, hour, seq)
);
ALTER TABLE visitor_hour_rolls ALTER COLUMN sketches SET STORAGE EXTERNAL;

CREATE TABLE visitor_day_rolls (
    project_id text COLLATE "C" NOT NULL,
    day        bigint NOT NULL, -- Unix time of the UTC day's start
    seq        bigint NOT NULL CHECK (seq > 0),
    size       bigint NOT NULL CHECK (size > 0),
    sketches   bytea  NOT NULL,
    PRIMARY KEY (project_id, day, seq)
);
ALTER TABLE visitor_day_rolls ALTER COLUMN sketches SET STORAGE EXTERNAL;

CREATE TABLE visitor_week_rolls (
    project_id text COLLATE "C" NOT NULL,
    week       bigint NOT NULL, -- Unix time of the week's start (a Monday, UTC)
    seq        bigint NOT NULL CHECK (seq > 0),
    size       bigint NOT NULL CHECK (size > 0),
    sketches   bytea  NOT NULL,
    PRIMARY KEY (project_id, week, seq)
);
ALTER TABLE visitor_week_rolls ALTER COLUMN sketches SET STORAGE EXTERNAL;

-- The salt of each UTC day whose visitors may still be recorded: today's
-- and yesterday's (a flush may carry the last hour of a day past midnight).
CREATE TABLE visitor_salts (
    day  bigint NOT NULL PRIMARY KEY, -- Unix time of the UTC day's start
    salt bytea  NOT NULL CHECK (length(salt) = 32)
);
