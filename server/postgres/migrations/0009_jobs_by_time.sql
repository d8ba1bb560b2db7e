-- 0009: the job list, as SQLite's migration 9. ListJobs reads one project's
-- jobs newest first, by (created_at, id), from a cursor's row value: a
-- backward scan of this index from that place, instead of a scan and sort
-- of every job (the primary key orders by ID, jobs_ready holds active jobs
-- only).
CREATE INDEX jobs_by_time ON jobs (project_id, created_at, id);
