-- 013-destination-board: the latest state of every destination, one row each (the dashboard's
-- board, docs/operations.md). A row is written in the same transaction as the SCAN that reported
-- it (its queue row) or the WCS's POST /destination that set it (its outbox row), and only when
-- something it shows changed, so an idle destination costs no write.
--   destination_status .. batch_door_status: the state as last reported or set, whichever came last
--   button_id:  the sorter's last SCAN's button; null until a SCAN came
--   changed_at: when one of those last changed (ISO 8601, UTC); changed_by: 'sorter', or the
--               address of the WCS client that set it
--   wcs_*:      what the WCS last set (null: never); agreement: what the sorter's SCANs since say
--               of it: 'Pending' (no SCAN yet), 'Agrees', 'Disagrees' (the SCAN showed another
--               status, text, light or batch door). Once a SCAN agreed, later SCANs are the
--               sorter's own changes and leave it 'Agrees'.
CREATE TABLE destination_board (
  destination        TEXT PRIMARY KEY,
  destination_status TEXT NOT NULL,
  destination_text   TEXT NOT NULL,
  light_status       TEXT NOT NULL,
  light_color        TEXT NOT NULL,
  batch_door_status  TEXT,
  button_id          INTEGER,
  changed_at         TEXT NOT NULL,
  changed_by         TEXT NOT NULL,
  wcs_status         TEXT,
  wcs_text           TEXT,
  wcs_light_status   TEXT,
  wcs_light_color    TEXT,
  wcs_batch_door     TEXT,
  wcs_set_at         TEXT,
  agreement          TEXT CHECK (agreement IN ('Pending', 'Agrees', 'Disagrees'))
) WITHOUT ROWID;

-- The destinations the sorter reported before: their latest SCAN still in the queue or the history.
INSERT INTO destination_board (destination, destination_status, destination_text, light_status, light_color,
  batch_door_status, button_id, changed_at, changed_by)
SELECT destination, destination_status, destination_text, light_status, light_color, batch_door_status,
  button_id, received_at, 'sorter'
FROM destination_queue q
WHERE id = (SELECT max(id) FROM destination_queue WHERE destination = q.destination);
