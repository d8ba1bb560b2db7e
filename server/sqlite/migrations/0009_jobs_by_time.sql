-- 0009: the job list (ListJobs) reads one project's jobs newest first, by
-- (created_at, id), a page at a time from a cursor. The primary key orders
-- jobs by ID and jobs_ready holds active jobs only, so without this index
-- every page would scan and sort the whole history of jobs; with it, a page
-- is a seek to the cursor's place and a backward walk of the page's rows.
CREATE INDEX jobs_by_time ON jobs (project_id, created_at, id);
