-- 011-outbox-sent-before-sync: an assignment may reach the sorter before its outbox row is synced.
-- A POST's outbox entry is committed without a disk sync, sent to the sorter at once, and
-- answered 200 once the sorter acknowledged it or a later sync made the row durable, whichever
-- comes first (db/commit-plan.ts, docs/reliability.md). Its outbox id is the number of its
-- telegram. A power cut may then lose the row of an entry the sorter already has, and with it
-- the id: given again to another entry, its number would look like a repeat to the sorter, which
-- would acknowledge that entry and drop it. So an id is reserved durably before the first entry
-- under it is sent unsynced: `upto` is the highest outbox id that may have been sent so, raised
-- a block at a time in a synced transaction, and the writer's start gives new rows ids above it
-- (id_floors); a clean stop lowers it to the last id given, so that numbering goes on without a gap.
CREATE TABLE outbox_reserved (
  one  INTEGER PRIMARY KEY CHECK (one = 1),
  upto INTEGER NOT NULL
);
INSERT INTO outbox_reserved (one, upto)
  VALUES (1, max((SELECT floor FROM id_floors WHERE name = 'outbox'), coalesce((SELECT max(id) FROM outbox), 0)));
