-- 010-ids-without-autoincrement: the queues and the outbox give their ids without AUTOINCREMENT.
-- AUTOINCREMENT keeps the highest id of each table in sqlite_sequence, and so wrote that page
-- in nearly every transaction (about 2.9 of an item's 16 WAL pages: docs/performance.md, "What it
-- writes to the disk"), the synced ones of the sorter's telegrams and the WCS's POSTs included.
-- An id must still never be given twice, even after its queue drained and the service restarted:
-- a WCS acknowledges a message by its id (X-Ack), delivered_history and dead_letters name
-- messages by it, and an outbox id is the number of its telegram to the sorter and the key of its
-- outbox_history row. So each table's highest id is kept in id_floors as its rows leave (a
-- delivery, an acknowledgement: transactions that need no sync and are committed together), and
-- a new row takes one above both that and the table's own highest id (db/queue-rows.ts,
-- db/outbox-store.ts). Rows an operator deletes with sqlite3 count too: the triggers see them.
--
-- The tables keep their rows and their file format: only the word AUTOINCREMENT leaves their
-- CREATE statements (the documented way to change what does not touch the stored rows,
-- https://www.sqlite.org/lang_altertable.html, section 7); rebuilding delivered_history, which
-- may hold millions of rows, would take minutes and a second copy of the file. delivered_history
-- needs no floor: nothing refers to its ids.
PRAGMA writable_schema = ON;
UPDATE sqlite_schema SET sql = replace(sql, 'INTEGER PRIMARY KEY AUTOINCREMENT', 'INTEGER PRIMARY KEY')
  WHERE type = 'table' AND name IN ('sortation_queue', 'destination_queue', 'outbox', 'delivered_history');
PRAGMA writable_schema = RESET;

-- The highest id each table has given whose row has left it.
CREATE TABLE id_floors (
  name  TEXT    PRIMARY KEY CHECK (name IN ('sortation_queue', 'destination_queue', 'outbox')),
  floor INTEGER NOT NULL
) WITHOUT ROWID;

INSERT INTO id_floors (name, floor)
  SELECT t.name, coalesce((SELECT seq FROM sqlite_sequence s WHERE s.name = t.name), 0)
  FROM (SELECT 'sortation_queue' AS name UNION ALL SELECT 'destination_queue' UNION ALL SELECT 'outbox') AS t;
DELETE FROM sqlite_sequence WHERE name IN ('sortation_queue', 'destination_queue', 'outbox', 'delivered_history');

CREATE TRIGGER sortation_queue_id_floor AFTER DELETE ON sortation_queue BEGIN
  UPDATE id_floors SET floor = OLD.id WHERE name = 'sortation_queue' AND floor < OLD.id;
END;
CREATE TRIGGER destination_queue_id_floor AFTER DELETE ON destination_queue BEGIN
  UPDATE id_floors SET floor = OLD.id WHERE name = 'destination_queue' AND floor < OLD.id;
END;
CREATE TRIGGER outbox_id_floor AFTER DELETE ON outbox BEGIN
  UPDATE id_floors SET floor = OLD.id WHERE name = 'outbox' AND floor < OLD.id;
END;
