-- 0004: page_views keyed by (project_id, hour, path).
--
-- The key was (project_id, path, hour), which spreads the index entries of
-- one hour over the whole index: a flush of an hour's 5,000 paths wrote
-- 5,000 index pages of a large table, so flushes grew slower as the table
-- grew. Keyed by hour first, a flush writes into the hour's few pages. The
-- views query reads the rolls, not the rows, and the cap asks
-- view_day_paths whether a day holds a path, so nothing reads rows by path
-- any more; page_views_by_hour, which ordered the rows by hour for the
-- query and for the rebuilds of the rolls, is the key itself now. Dropping
-- it also lets an update of a count be HOT (it held the counts), so an
-- update no longer writes index entries at all.
ALTER TABLE page_views DROP CONSTRAINT page_views_pkey;
ALTER TABLE page_views ADD CONSTRAINT page_views_pkey PRIMARY KEY (project_id, hour, path);
DROP INDEX page_views_by_hour;

-- Room on every page for new versions of its rows: a flush updates the rows
-- of the current hour again and again, and an update that finds room on
-- the row's page is HOT, writing no index entry. Rows written from now on
-- leave a tenth of their page free.
ALTER TABLE page_views SET (fillfactor = 90);
