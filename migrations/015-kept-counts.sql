-- 015-kept-counts: counts that the figures read several times a second take from a row, where
-- they walked a table that grows for as long as the service runs.
--
-- The outbox entries dropped (older than Sorter.AssignmentTtlSeconds, or refused by the sorter),
-- by kind, ever: Sorter.DroppedAssignments and DroppedSettings in GET /status, and the counters
-- assignments_dropped_total and destination_settings_dropped_total, which must never go down.
-- They counted the rows of outbox_dropped, walking the table on every /status (twice), /health,
-- scrape and alarm look: 28 ms each at 100,000 rows on the development machine (an hour of a WCS
-- posting at 50 items/s to a sorter that is away leaves 180,000). The rows themselves now go with
-- the history after HistoryRetentionDays (db/history-store.ts; outbox_history keeps the same fate
-- and reason), and the count stays. A drop is rare and its transaction is not synced before
-- anything waits for it: the count's page in it costs the card nothing to speak of. The service
-- writes a repeated drop (after a resync) as an update, which is not counted again.
CREATE TABLE outbox_dropped_counts (
  kind TEXT    PRIMARY KEY CHECK (kind IN ('ASSIGNMENT', 'DESTINATION')),
  n    INTEGER NOT NULL
) WITHOUT ROWID;

INSERT INTO outbox_dropped_counts (kind, n)
  SELECT k.kind, (SELECT count(*) FROM outbox_dropped d WHERE d.kind = k.kind)
  FROM (SELECT 'ASSIGNMENT' AS kind UNION ALL SELECT 'DESTINATION') AS k;

CREATE TRIGGER outbox_dropped_counted AFTER INSERT ON outbox_dropped BEGIN
  UPDATE outbox_dropped_counts SET n = n + 1 WHERE kind = NEW.kind;
END;

-- The dead letters (messages some client kept taking without proving its read), by queue: GET
-- /status, a scrape and the alarm look count them (DeadLetters, DEAD_LETTERS), and they stay until
-- an operator sends them back or deletes them. A client that never proves a read (a proxy that
-- buffers responses, say) sends every message there after MaxDeliveries: thousands an hour. A
-- dead letter's transaction writes its row and its queue's anyway.
CREATE TABLE dead_letter_counts (
  queue TEXT    PRIMARY KEY CHECK (queue IN ('sortation', 'destination')),
  n     INTEGER NOT NULL
) WITHOUT ROWID;

INSERT INTO dead_letter_counts (queue, n)
  SELECT q.queue, (SELECT count(*) FROM dead_letters d WHERE d.queue = q.queue)
  FROM (SELECT 'sortation' AS queue UNION ALL SELECT 'destination') AS q;

CREATE TRIGGER dead_letters_counted AFTER INSERT ON dead_letters BEGIN
  UPDATE dead_letter_counts SET n = n + 1 WHERE queue = NEW.queue;
END;
CREATE TRIGGER dead_letters_uncounted AFTER DELETE ON dead_letters BEGIN
  UPDATE dead_letter_counts SET n = n - 1 WHERE queue = OLD.queue;
END;
CREATE TRIGGER dead_letters_recounted AFTER UPDATE OF queue ON dead_letters BEGIN
  UPDATE dead_letter_counts SET n = n - 1 WHERE queue = OLD.queue;
  UPDATE dead_letter_counts SET n = n + 1 WHERE queue = NEW.queue;
END;
