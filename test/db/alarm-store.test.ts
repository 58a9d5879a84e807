// The alarm journal (db/alarm-store.ts) on a real SQLite file: raise, clear, acknowledge (the first
// one stands), the journal's window, ids never given twice after a purge.
import { alarmReads, alarmWrites } from '../../db/alarm-store';
import { freshDbEach } from '../helpers/db';

const ctx = freshDbEach();
const T = (s: number) => new Date(Date.UTC(2026, 10, 27, 9, 0, s)).toISOString();

describe('alarm journal', () => {
  it('keeps an alarm raised, cleared and acknowledged, readable as an operator reads it', () => {
    const reads = alarmReads(ctx.db);
    const writes = alarmWrites(ctx.db);
    expect(reads.highestAlarmId()).toBe(0);
    writes.raiseAlarm({ id: 1, code: 'SORTER_LINK_DOWN', severity: 'critical', detail: 'down 12 s', raisedAt: T(0) });
    expect(reads.openAlarms().map((a) => a.Code)).toEqual(['SORTER_LINK_DOWN']);
    expect(writes.acknowledgeAlarm(1, 'shift-lead', T(5))).toBe(true);
    expect(writes.acknowledgeAlarm(1, 'someone-else', T(6))).toBe(true);
    writes.clearAlarm(1, T(9));
    writes.clearAlarm(1, T(20));
    expect(reads.alarm(1)).toEqual({
      Id: 1,
      Code: 'SORTER_LINK_DOWN',
      Severity: 'critical',
      Detail: 'down 12 s',
      RaisedAt: T(0),
      ClearedAt: T(9),
      AcknowledgedAt: T(5),
      AcknowledgedBy: 'shift-lead',
    });
    expect(reads.openAlarms()).toEqual([]);
    expect(writes.acknowledgeAlarm(7, 'x', T(9))).toBe(false);
    expect(ctx.db.prepare('SELECT code, acked_by, cleared_at FROM alarm_journal').all()).toEqual([
      { code: 'SORTER_LINK_DOWN', acked_by: 'shift-lead', cleared_at: T(9) },
    ]);
  });

  it('the journal holds what was raised since a time and what is still active, newest first; a purge takes cleared rows only and keeps the newest, so ids go on above it', () => {
    const reads = alarmReads(ctx.db);
    const writes = alarmWrites(ctx.db);
    writes.raiseAlarm({ id: 1, code: 'DEAD_LETTERS', severity: 'warning', detail: '1', raisedAt: T(0) });
    writes.raiseAlarm({ id: 2, code: 'SORTER_SILENT', severity: 'warning', detail: '2', raisedAt: T(1) });
    writes.raiseAlarm({ id: 3, code: 'DECISIONS_LATE', severity: 'major', detail: '3', raisedAt: T(30) });
    writes.clearAlarm(2, T(2));
    writes.clearAlarm(3, T(31));
    expect(reads.alarmJournal(T(10), 10).map((a) => a.Id)).toEqual([3, 1]);
    // The newest row stays, cleared long ago or not: the next id is one above it.
    expect(writes.purgeAlarmsBefore(T(40), 10)).toBe(1);
    expect(reads.alarmJournal(T(0), 10).map((a) => a.Id)).toEqual([3, 1]);
    expect(reads.highestAlarmId()).toBe(3);
  });
});
