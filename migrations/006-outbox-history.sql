-- What became of every assignment and destination setting the WCS posted: the outbox keeps an
-- entry only until the sorter acknowledges it, so this table remembers its fate for operators
-- ("what happened to item X": GET /items/{TrackID}, npm run trace) and for the retention purge.
-- Kept by triggers on the outbox, in the same transaction as the change they record.
CREATE TABLE outbox_history (
  outbox_id       INTEGER PRIMARY KEY,      -- the entry's id in the outbox (and its telegram number: docs/sorter-protocol.md)
  kind            TEXT    NOT NULL,         -- ASSIGNMENT or DESTINATION
  track_id        TEXT,                     -- ASSIGNMENT only
  barcode         TEXT,
  destination     TEXT    NOT NULL,
  client_address  TEXT,                     -- the WCS that posted it
  created_at      TEXT    NOT NULL,         -- when the POST was committed (ISO-8601 UTC)
  fate            TEXT    NOT NULL DEFAULT 'Queued' CHECK (fate IN ('Queued', 'Acknowledged', 'Dropped')),
  settled_at      TEXT,                     -- when the sorter acknowledged it, or it was dropped
  reason          TEXT                      -- Dropped: why (time to live passed, refused by the sorter)
);
CREATE INDEX outbox_history_track_id ON outbox_history (track_id);
CREATE INDEX outbox_history_created_at ON outbox_history (created_at);

-- Entries already in the outbox when this migration runs.
INSERT INTO outbox_history (outbox_id, kind, track_id, barcode, destination, client_address, created_at)
  SELECT id, kind, track_id, barcode, destination, client_address, created_at FROM outbox;

CREATE TRIGGER outbox_history_posted AFTER INSERT ON outbox BEGIN
  INSERT INTO outbox_history (outbox_id, kind, track_id, barcode, destination, client_address, created_at)
  VALUES (NEW.id, NEW.kind, NEW.track_id, NEW.barcode, NEW.destination, NEW.client_address, NEW.created_at);
END;

-- A drop writes outbox_dropped first, then deletes the outbox row (db/link-store.ts).
CREATE TRIGGER outbox_history_dropped AFTER INSERT ON outbox_dropped BEGIN
  UPDATE outbox_history SET fate = 'Dropped', settled_at = NEW.dropped_at, reason = NEW.reason WHERE outbox_id = NEW.id;
END;

-- Any other removal from the outbox is the sorter's acknowledgement.
CREATE TRIGGER outbox_history_acknowledged AFTER DELETE ON outbox BEGIN
  UPDATE outbox_history SET fate = 'Acknowledged', settled_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
  WHERE outbox_id = OLD.id AND fate = 'Queued';
END;
