-- 005-removed-requests: REQUESTs taken out of the sortation queue without reaching a WCS, with
-- the reason (docs/queue-semantics.md, "Superseded and expired REQUESTs").

-- NULL: delivered to a WCS client (read_proof says how that was proven). 'Superseded': a newer
-- REQUEST for the same TrackID arrived (the item went round again); 'Expired': older than
-- MaxRequestAgeSeconds. For these, delivered_at is when it was removed, client_address is NULL.
ALTER TABLE delivered_history ADD COLUMN removed_reason TEXT;

-- Finding the older REQUESTs of an item when a newer one arrives.
CREATE INDEX sortation_queue_request_track ON sortation_queue (track_id) WHERE type = 'REQUEST';
