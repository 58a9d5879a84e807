-- 008-history-purged-by-id: the two history tables lose the indexes that served only the
-- retention purge (docs/performance.md, "What it writes to the disk"). Each index costs a page
-- written in every transaction that adds a history row: together about 2.7 of the 17 pages an
-- item wrote to the WAL. Rows are added in the order of their time (delivered_at, created_at),
-- so the purge reads the oldest rows by id instead, a chunk at a time (db/history-store.ts).
-- The TrackID indexes stay: GET /items/{TrackID} and `npm run trace` read by them.
DROP INDEX IF EXISTS delivered_history_delivered_at;
DROP INDEX IF EXISTS outbox_history_created_at;
