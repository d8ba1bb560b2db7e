-- 0005: the rolls count bot views too, and become the record.
--
-- Segments of format 2 held human and AI views; format 3 adds bots, so that
-- the hour rolls hold everything page_views holds and page_views can go
-- (migration 6): a flush wrote one page_views row per count, an index
-- insertion each, which made up most of its time. The step in Go that
-- follows this file rebuilds the rolls from page_views; view_days and
-- view_day_paths do not change.
DELETE FROM view_hour_rolls;
DELETE FROM view_day_rolls;
DELETE FROM view_week_rolls;
