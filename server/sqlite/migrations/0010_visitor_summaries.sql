-- 0010: a summary of each closed day's visitors: per path, its human, AI
-- and total visitors as numbers (see package server/internal/rollup,
-- visitors_summary.go). A day's hashes are salted with that day's salt,
-- so the visitors of a range of days add up day by day, and a query of a
-- month reads the summaries of its closed days and weeks instead of their
-- sketches.
--
-- last_seq is the seq of the day roll's last segment when the summary was
-- made: a summary whose last_seq is not the roll's last describes a day
-- written to since, and is not read.
CREATE TABLE visitor_day_summaries (
    project_id TEXT    NOT NULL,
    day        INTEGER NOT NULL, -- Unix time of the UTC day's start
    last_seq   INTEGER NOT NULL CHECK (last_seq > 0),
    counts     BLOB    NOT NULL,
    PRIMARY KEY (project_id, day)
) STRICT;

-- A closed week's day summaries added up. days lists the days it adds up
-- with their rolls' last seq (rollup.AppendVisitorDays): it describes its
-- week while those are the week's day rolls and last seqs.
CREATE TABLE visitor_week_summaries (
    project_id TEXT    NOT NULL,
    week       INTEGER NOT NULL, -- Unix time of the week's start (a Monday, UTC)
    days       BLOB    NOT NULL,
    counts     BLOB    NOT NULL,
    PRIMARY KEY (project_id, week)
) STRICT;
