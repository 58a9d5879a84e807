-- 007-dead-letters: messages handed out MaxDeliveries times without proof that a client read
-- them (docs/queue-semantics.md, "Dead letters"). They leave their queue, so that the queue moves
-- on past a message that some client keeps taking without proving its read, and wait here, with
-- the client that had them last, until an operator sends them back (POST /dead-letters/requeue)
-- or deletes them. Nothing purges this table.
CREATE TABLE dead_letters (
  id                  INTEGER PRIMARY KEY,
  queue               TEXT    NOT NULL CHECK (queue IN ('sortation', 'destination')),
  message_id          INTEGER NOT NULL,  -- its id in its queue table (X-Message-Id); it goes back under this id, so in its old place
  type                TEXT    NOT NULL,  -- REQUEST, VERIFY or SCAN
  message_code        INTEGER NOT NULL,
  track_id            TEXT,
  barcode             TEXT,
  destination         TEXT,              -- Destination, or InductLocation for a REQUEST
  payload             TEXT    NOT NULL,  -- the JSON body exactly as clients received it
  received_at         TEXT    NOT NULL,  -- when the service committed it from the sorter
  dead_at             TEXT    NOT NULL,  -- when it left its queue
  attempts            INTEGER NOT NULL,  -- deliveries that ended without proof of the read
  last_client_address TEXT,              -- the client that had it last (X-Forwarded-For behind a trusted proxy)
  last_return         TEXT    NOT NULL   -- how the last delivery ended: 'NoProof' (nothing proved or disproved the read) or 'Reset'
);
CREATE INDEX dead_letters_track_id ON dead_letters (track_id);

-- delivered_history.read_proof gains three values (no schema change): 'LastResponse' (the
-- response was the last on its connection, we closed it, and the client closed cleanly in
-- answer), 'Acknowledged' (the client sent X-Ack with the message id) and 'Answered' (the client
-- posted the assignment for the REQUEST's TrackID); both of the latter for X-Ack-Mode explicit.
