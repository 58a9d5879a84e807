-- 002-sorter-link: state of the telegram link to the sorter that must survive a restart.

-- One row per peer (the sorter PLC): what we accepted from it, and how we number what we send.
CREATE TABLE link_state (
  peer           TEXT    PRIMARY KEY,      -- sender name in the telegram header, e.g. PLC01
  peer_epoch     TEXT,                     -- the peer's session id from its last SYNS
  last_seq_in    INTEGER NOT NULL DEFAULT 0, -- last data sequence accepted from the peer in that session
  our_epoch      TEXT    NOT NULL,         -- our session id, sent in our SYNS
  next_seq_out   INTEGER NOT NULL DEFAULT 1, -- sequence number of our next new data telegram
  updated_at     TEXT    NOT NULL
);

-- An outbox row keeps the sequence number it was first sent with, so a resend after a
-- reconnect or a restart carries the same number and the sorter recognises it.
ALTER TABLE outbox ADD COLUMN seq INTEGER;
ALTER TABLE outbox ADD COLUMN sent_at TEXT;      -- first time it was written to the sorter
ALTER TABLE outbox ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;

-- Assignments the sorter could no longer use (older than Sorter.AssignmentTtlSeconds): kept
-- for the operator, not sent.
CREATE TABLE outbox_dropped (
  id          INTEGER PRIMARY KEY,         -- the outbox id it had
  kind        TEXT    NOT NULL,
  track_id    TEXT,
  destination TEXT    NOT NULL,
  created_at  TEXT    NOT NULL,
  dropped_at  TEXT    NOT NULL,
  reason      TEXT    NOT NULL
);
