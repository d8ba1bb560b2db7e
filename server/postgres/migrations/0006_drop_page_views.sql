-- 0006: the hour rolls are the record of every count (migration 5), so
-- the row per project, path and hour goes.
DROP TABLE page_views;
