// The alarm journal (migrations/*-alarm-journal.sql): alarms raised, cleared and acknowledged.
import type { Db } from './connection';

/** How bad an alarm is: critical stops sorting, major degrades it, warning wants a look. */
export type AlarmSeverity = 'critical' | 'major' | 'warning';

/** An alarm as /status, GET /alarms and the dashboard show it. */
export interface AlarmEntry {
  Id: number;
  Code: string;
  Severity: AlarmSeverity;
  Detail: string;
  RaisedAt: string;
  ClearedAt: string | null;
  AcknowledgedAt: string | null;
  AcknowledgedBy: string | null;
}

/** A row of the journal as it is raised. */
export interface AlarmRaised {
  id: number;
  code: string;
  severity: AlarmSeverity;
  detail: string;
  raisedAt: string;
}

/** Reading the journal (main thread's read-only connection). */
export interface AlarmReads {
  /** The highest id the journal ever gave (0 when none): new alarms take ids above it. */
  highestAlarmId(): number;
  /** Alarms not cleared (left by the run before, when read at start). */
  openAlarms(): AlarmEntry[];
  /** Alarms raised at or after `since` or still active, newest first, at most `limit`. */
  alarmJournal(since: string, limit: number): AlarmEntry[];
  /** One alarm by id, or null. */
  alarm(id: number): AlarmEntry | null;
}

/** Writing the journal (writer thread). */
export interface AlarmWrites {
  raiseAlarm(alarm: AlarmRaised): void;
  /** Mark an alarm cleared (no-op when it already is). */
  clearAlarm(id: number, at: string): void;
  /** Record who acknowledged an alarm, unless someone already did; false when there is no such alarm. */
  acknowledgeAlarm(id: number, by: string, at: string): boolean;
  /** Delete alarms cleared before `cutoff` (never the newest row), at most `limit`; returns how many. */
  purgeAlarmsBefore(cutoff: string, limit: number): number;
}

interface AlarmRow {
  id: number;
  code: string;
  severity: AlarmSeverity;
  detail: string;
  raised_at: string;
  cleared_at: string | null;
  acked_at: string | null;
  acked_by: string | null;
}

const asEntry = (r: AlarmRow): AlarmEntry => ({
  Id: r.id,
  Code: r.code,
  Severity: r.severity,
  Detail: r.detail,
  RaisedAt: r.raised_at,
  ClearedAt: r.cleared_at,
  AcknowledgedAt: r.acked_at,
  AcknowledgedBy: r.acked_by,
});

/** The journal's reads on an open, migrated database. */
export function alarmReads(db: Db): AlarmReads {
  // The purge never takes the newest row (alarmWrites), so this is the highest id ever given.
  const highest = db.prepare('SELECT coalesce(max(id), 0) FROM alarm_journal').pluck();
  const open = db.prepare('SELECT * FROM alarm_journal WHERE cleared_at IS NULL ORDER BY id');
  const journal = db.prepare('SELECT * FROM alarm_journal WHERE raised_at >= @since OR cleared_at IS NULL ORDER BY id DESC LIMIT @limit');
  const one = db.prepare('SELECT * FROM alarm_journal WHERE id = ?');
  return {
    highestAlarmId: () => highest.get() as number,
    openAlarms: () => (open.all() as AlarmRow[]).map(asEntry),
    alarmJournal: (since, limit) => (journal.all({ since, limit }) as AlarmRow[]).map(asEntry),
    alarm: (id) => {
      const row = one.get(id) as AlarmRow | undefined;
      return row ? asEntry(row) : null;
    },
  };
}

/** The journal's writes on an open, migrated database. */
export function alarmWrites(db: Db): AlarmWrites {
  const insert = db.prepare(
    'INSERT OR IGNORE INTO alarm_journal (id, code, severity, detail, raised_at) VALUES (@id, @code, @severity, @detail, @raisedAt)',
  );
  const clear = db.prepare('UPDATE alarm_journal SET cleared_at = @at WHERE id = @id AND cleared_at IS NULL');
  const exists = db.prepare('SELECT 1 FROM alarm_journal WHERE id = ?').pluck();
  // The first acknowledgement stands: a second operator's click does not rewrite who saw it first.
  const ack = db.prepare('UPDATE alarm_journal SET acked_at = @at, acked_by = @by WHERE id = @id AND acked_at IS NULL');
  // The newest row stays whatever its age: the next id is one above it (see the alarm journal migration).
  const purge = db.prepare(
    'DELETE FROM alarm_journal WHERE id IN (SELECT id FROM alarm_journal WHERE cleared_at < @cutoff AND id < (SELECT max(id) FROM alarm_journal) ORDER BY id LIMIT @limit)',
  );
  return {
    raiseAlarm: (alarm) => void insert.run(alarm),
    clearAlarm: (id, at) => void clear.run({ id, at }),
    acknowledgeAlarm: (id, by, at) => {
      ack.run({ id, by, at });
      return exists.get(id) !== undefined;
    },
    purgeAlarmsBefore: (cutoff, limit) => purge.run({ cutoff, limit }).changes,
  };
}
