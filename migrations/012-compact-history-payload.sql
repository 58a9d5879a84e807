-- 012-compact-history-payload: delivered_history's payload keeps only what its other columns do not.
-- A row repeated the message's Type, TrackID, Barcode, MessageCode and InductLocation or
-- Destination in its payload, with every field's name, beside the columns that hold them: about
-- 320 bytes for a REQUEST, so each row took a 512-byte page to itself, and the history wrote 2.7
-- of an item's 9 WAL pages (docs/performance.md, "What it writes to the disk"). From now on the
-- payload is a JSON array of the other fields, in the message's order (db/queue-rows.ts,
-- historyPayload):
--   REQUEST  [RecirculationCount, Length, Width, Height, Weight]
--   VERIFY   []
--   SCAN     [DestinationStatus, DestinationText, LightStatus, LightColor, ButtonID, BatchDoorStatus]
-- Two rows share a page, the longest barcodes too.
--
-- Rows written before keep their whole body (a JSON object). The view delivered_messages gives
-- every row with `body`, the JSON exactly as the client received it: an older row's payload as it
-- is, a newer row's columns and payload put back together in the message's order (SQLite's ->
-- keeps each value's JSON text as it was written, so 400 stays 400 and 1e-7 stays 1e-7).
CREATE VIEW delivered_messages AS
SELECT h.*,
  CASE
    WHEN json_type(h.payload) = 'object' THEN h.payload
    WHEN h.type = 'REQUEST' THEN json_object('Type', h.type, 'TrackID', h.track_id, 'Barcode', h.barcode,
      'MessageCode', h.message_code, 'InductLocation', h.destination,
      'RecirculationCount', h.payload -> 0, 'Length', h.payload -> 1, 'Width', h.payload -> 2,
      'Height', h.payload -> 3, 'Weight', h.payload -> 4)
    WHEN h.type = 'VERIFY' THEN json_object('Type', h.type, 'TrackID', h.track_id, 'Barcode', h.barcode,
      'Destination', h.destination, 'MessageCode', h.message_code)
    ELSE json_object('Type', h.type, 'Destination', h.destination,
      'DestinationStatus', h.payload -> 0, 'DestinationText', h.payload -> 1, 'LightStatus', h.payload -> 2,
      'LightColor', h.payload -> 3, 'ButtonID', h.payload -> 4, 'MessageCode', h.message_code,
      'BatchDoorStatus', h.payload -> 5)
  END AS body
FROM delivered_history h;
