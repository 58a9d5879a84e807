-- 001-initial: the two queues the WCS drains, the outbox towards the sorter, and the history
-- of delivered messages. Times are ISO-8601 UTC text ('2026-11-21T14:03:07.123Z'): readable
-- as they are and comparable as strings. Columns are the spec's fields, one a column, so an
-- operator can read every row with the sqlite3 tool.

-- REQUEST and VERIFY messages from the sorter, waiting for GET /sortation. FIFO by id.
CREATE TABLE sortation_queue (
  id                  INTEGER PRIMARY KEY AUTOINCREMENT,
  type                TEXT    NOT NULL CHECK (type IN ('REQUEST', 'VERIFY')),
  message_code        INTEGER NOT NULL,
  track_id            TEXT    NOT NULL,
  barcode             TEXT    NOT NULL,
  induct_location     TEXT,            -- REQUEST only (InductLocation)
  destination         TEXT,            -- VERIFY only (Destination)
  recirculation_count INTEGER,         -- REQUEST only
  length              REAL,            -- REQUEST only
  width               REAL,
  height              REAL,
  weight              REAL,
  received_at         TEXT    NOT NULL -- when the service committed it
);

-- SCAN messages from the sorter, waiting for GET /destination. FIFO by id.
CREATE TABLE destination_queue (
  id                 INTEGER PRIMARY KEY AUTOINCREMENT,
  message_code       INTEGER NOT NULL,
  destination        TEXT    NOT NULL,
  destination_status TEXT    NOT NULL,
  destination_text   TEXT    NOT NULL DEFAULT '',
  light_status       TEXT    NOT NULL,
  light_color        TEXT    NOT NULL,
  button_id          INTEGER NOT NULL DEFAULT 0,
  batch_door_status  TEXT,             -- NULL when not applicable
  received_at        TEXT    NOT NULL
);

-- Assignments (POST /sortation) and destination settings (POST /destination) on their way to
-- the sorter. A row leaves only when the sorter has acknowledged it.
CREATE TABLE outbox (
  id                 INTEGER PRIMARY KEY AUTOINCREMENT,
  kind               TEXT    NOT NULL CHECK (kind IN ('ASSIGNMENT', 'DESTINATION')),
  track_id           TEXT,             -- ASSIGNMENT
  barcode            TEXT,             -- ASSIGNMENT
  destination        TEXT    NOT NULL,
  destination_status TEXT,             -- DESTINATION
  destination_text   TEXT,             -- DESTINATION
  light_status       TEXT,             -- DESTINATION
  light_color        TEXT,             -- DESTINATION
  batch_door_status  TEXT,             -- DESTINATION, NULL when not sent
  client_address     TEXT,             -- who posted it
  created_at         TEXT    NOT NULL
);

-- Every message handed to a WCS client: "was this item ever given to the WCS, and when?"
-- Purged after HistoryRetentionDays by the housekeeping job.
CREATE TABLE delivered_history (
  id             INTEGER PRIMARY KEY AUTOINCREMENT,
  queue          TEXT    NOT NULL CHECK (queue IN ('sortation', 'destination')),
  message_id     INTEGER NOT NULL,     -- its id in the queue table
  type           TEXT    NOT NULL,     -- REQUEST, VERIFY or SCAN
  message_code   INTEGER NOT NULL,
  track_id       TEXT,
  barcode        TEXT,
  destination    TEXT,                 -- Destination, or InductLocation for a REQUEST
  payload        TEXT    NOT NULL,     -- the JSON body exactly as the client received it
  received_at    TEXT    NOT NULL,
  delivered_at   TEXT    NOT NULL,
  client_address TEXT
);
CREATE INDEX delivered_history_track_id ON delivered_history (track_id);
CREATE INDEX delivered_history_delivered_at ON delivered_history (delivered_at);
