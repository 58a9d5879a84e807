-- 004-drop-dead-link-columns: migration 002 added columns that nothing reads or writes, with a
-- comment that says the wrong thing about numbering. Outbound data telegrams are numbered by
-- their outbox id: ((id - 1) mod 999999) + 1 (docs/sorter-protocol.md), so a resend after a
-- reconnect or a restart carries the same number without storing it. Removed here:
-- link_state.next_seq_out, outbox.seq, outbox.sent_at, outbox.attempts.

-- link_state is rebuilt so that `.schema link_state` shows the right comments.
CREATE TABLE link_state_new (
  peer           TEXT    PRIMARY KEY,        -- sender name in the telegram header, e.g. PLC01
  peer_epoch     TEXT,                       -- the peer's session id from its last SYNS
  last_seq_in    INTEGER NOT NULL DEFAULT 0, -- last data sequence number committed from the peer in that session
  our_epoch      TEXT    NOT NULL,           -- our session id, sent in our SYNS (our numbers come from outbox ids)
  updated_at     TEXT    NOT NULL
);
INSERT INTO link_state_new (peer, peer_epoch, last_seq_in, our_epoch, updated_at)
  SELECT peer, peer_epoch, last_seq_in, our_epoch, updated_at FROM link_state;
DROP TABLE link_state;
ALTER TABLE link_state_new RENAME TO link_state;

ALTER TABLE outbox DROP COLUMN seq;
ALTER TABLE outbox DROP COLUMN sent_at;
ALTER TABLE outbox DROP COLUMN attempts;
