-- 003-delivery-proof: how each delivery to a WCS client was confirmed (docs/queue-semantics.md).
-- A message leaves its queue only once the service has evidence that the client read it; the
-- history says which evidence it was and whether the message had been handed out before.

-- Which delivery of the message this was: 1 for the first; 2 or more when an earlier response
-- may have been read (it went out, then its connection ended with neither proof of the read nor
-- proof of the contrary, and the message was handed out again): a possible duplicate.
ALTER TABLE delivered_history ADD COLUMN attempt INTEGER NOT NULL DEFAULT 1;

-- What proved the read: 'NextRequest' (the client sent its next request on the same
-- connection), 'ClientClose' (the client closed the connection cleanly after the response),
-- 'ServerClose' (we closed an idle connection and the client closed cleanly in answer),
-- 'Grace' (Delivery AtMostOnce: no failure seen within 5 ms), 'Injected' (an in-process test
-- request). NULL for rows delivered before this migration.
ALTER TABLE delivered_history ADD COLUMN read_proof TEXT;
