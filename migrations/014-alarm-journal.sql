-- 014-alarm-journal: the alarms the service raised (docs/operations.md, "Alarms"), one row each
-- time one is raised: when, why, when it cleared, and who acknowledged it. An alarm is active while
-- cleared_at is NULL. The service gives the ids itself (the row may be written after a storage stall
-- that the alarm is about), one above the table's highest. Housekeeping deletes rows cleared more
-- than HistoryRetentionDays ago, but never the newest row, so that an id is never given twice
-- (an operator's acknowledgement names the alarm by it). Times are ISO 8601 UTC, as everywhere else.
CREATE TABLE alarm_journal (
  id          INTEGER PRIMARY KEY,
  code        TEXT    NOT NULL,  -- stable code, e.g. SORTER_LINK_DOWN (docs/operations.md lists them)
  severity    TEXT    NOT NULL CHECK (severity IN ('critical', 'major', 'warning')),
  detail      TEXT    NOT NULL,  -- what was seen when it was raised, one sentence
  raised_at   TEXT    NOT NULL,
  cleared_at  TEXT,              -- NULL while active
  acked_at    TEXT,              -- NULL until an operator acknowledged it
  acked_by    TEXT               -- the name of the API key that acknowledged it (never the key)
);
CREATE INDEX alarm_journal_raised_at ON alarm_journal (raised_at);
