-- 009-outbox-history-at-settlement: an assignment or destination setting gets its row in
-- outbox_history when it is settled (the sorter acknowledged it, or it was dropped), no longer
-- when it is posted. While it waits for the sorter it is in `outbox`, which says the same
-- (GET /items/{TrackID} and `npm run trace` read both). A POST's transaction, which is synced
-- before its 200, then changes two pages fewer (this table and its TrackID index); the row is
-- written with the sorter's acknowledgement, which needs no sync and is committed together with
-- others (docs/performance.md, "What it writes to the disk").
DROP TRIGGER outbox_history_posted;
DROP TRIGGER outbox_history_dropped;
DROP TRIGGER outbox_history_acknowledged;

-- Entries still waiting: their row comes when they are settled.
DELETE FROM outbox_history WHERE fate = 'Queued' AND outbox_id IN (SELECT id FROM outbox);

-- A drop writes outbox_dropped first, then deletes the outbox row (db/link-store.ts).
CREATE TRIGGER outbox_history_dropped AFTER INSERT ON outbox_dropped BEGIN
  INSERT OR REPLACE INTO outbox_history (outbox_id, kind, track_id, barcode, destination, client_address, created_at, fate, settled_at, reason)
  SELECT id, kind, track_id, barcode, destination, client_address, created_at, 'Dropped', NEW.dropped_at, NEW.reason FROM outbox WHERE id = NEW.id;
END;

-- Any other removal from the outbox is the sorter's acknowledgement.
CREATE TRIGGER outbox_history_acknowledged AFTER DELETE ON outbox BEGIN
  INSERT OR IGNORE INTO outbox_history (outbox_id, kind, track_id, barcode, destination, client_address, created_at, fate, settled_at)
  VALUES (OLD.id, OLD.kind, OLD.track_id, OLD.barcode, OLD.destination, OLD.client_address, OLD.created_at, 'Acknowledged', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
END;
