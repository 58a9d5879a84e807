// The alarm monitor (lib/ops/alarms.ts) over the real journal on a SQLite file, with observations
// and a clock the test sets: each rule raised and cleared by its condition, logged once per raise
// and clear, acknowledged once, and shown in /metrics.
import client from 'prom-client';
import { type AlarmEntry, alarmReads, alarmWrites } from '../../../db/alarm-store';
import { validateConfig } from '../../../lib/process/config';
import { type AlarmJournal, AlarmMonitor, alarmGauge } from '../../../lib/ops/alarms';
import { ALARM_RULES } from '../../../lib/ops/alarm-rules';
import { freshDbEach } from '../../helpers/db';
import { capturingLogger } from '../../helpers/log';

const ctx = freshDbEach();

/** The first of `xs`, which must not be empty. */
function first<T>(xs: readonly T[]): T {
  const [x] = xs;
  if (x === undefined) throw new Error('expected at least one');
  return x;
}
const config = validateConfig({
  LateDecisionMs: 2000,
  Alarms: {
    LinkDownSeconds: 5,
    SorterSilentSeconds: 20,
    WcsPollSeconds: 30,
    QueueAgeSeconds: 30,
    OutboxAgeSeconds: 10,
    StorageStalledSeconds: 5,
    MinFreeDiskBytes: 1000,
    ClearAfterSeconds: 10,
  },
});
const settings = { ...config.Alarms, LateDecisionMs: config.LateDecisionMs };

/** The journal's writes as the writer would run them, synchronously here, as promises. */
function journal(): AlarmJournal {
  const w = alarmWrites(ctx.db);
  return {
    ...alarmReads(ctx.db),
    raiseAlarm: async (a) => w.raiseAlarm(a),
    clearAlarm: async (...a) => w.clearAlarm(...a),
    acknowledgeAlarm: async (...a) => w.acknowledgeAlarm(...a),
    purgeAlarmsBefore: async (...a) => w.purgeAlarmsBefore(...a),
  };
}

const healthy = () => ({
  testMode: false,
  link: { connected: true, since: 0, lost: 0 },
  waitingClients: { sortation: 1, destination: 1 },
  lateDecisions: 0,
  oldestAgeSeconds: { sortation: null, destination: null } as Record<'sortation' | 'destination', number | null>,
  outboxOldestAgeSeconds: null as number | null,
  deadLetters: { sortation: 0, destination: 0 },
  storage: {
    state: 'Ok' as 'Ok' | 'Stalled' | 'Failing',
    since: 0,
    waitingFor: null as string | null,
    lastError: null as string | null,
    lastFailure: null as { at: number; error: string } | null,
  },
  freeDiskBytes: 1e9 as number | null,
});

function monitor(uncleanStart = false) {
  let now = 1_000_000;
  let seen = healthy();
  const { log, lines } = capturingLogger('info');
  const m = new AlarmMonitor({ settings, journal: journal(), observe: () => seen, uncleanStart, clock: () => new Date(now), log });
  const at = (ms: number, change: (o: ReturnType<typeof healthy>) => void = () => {}) => {
    now = 1_000_000 + ms;
    seen = healthy();
    seen.link.since = 1_000_000;
    seen.storage.since = 1_000_000;
    change(seen);
    m.evaluate();
    return m.list().map((a) => a.Code);
  };
  return { m, at, lines, sorterMessage: () => m.sorterMessage() };
}

describe('AlarmMonitor', () => {
  it('times what it keeps itself by the clock that never steps: a step of the system clock raises no SORTER_SILENT or WCS_NOT_POLLING, holds no DECISIONS_LATE, and is logged', () => {
    let wall = 1_000_000;
    let steady = 50_000;
    const { log, lines } = capturingLogger('info');
    let seen = healthy();
    const m = new AlarmMonitor({
      settings,
      journal: journal(),
      observe: () => seen,
      uncleanStart: false,
      clock: () => new Date(wall),
      steadyMs: () => steady,
      log,
    });
    /** `ms` pass, the wall clock set by `stepMs` as well; no client waits (so the polls' age counts). */
    const look = (ms: number, stepMs = 0, change: (o: ReturnType<typeof healthy>) => void = () => {}) => {
      wall += ms + stepMs;
      steady += ms;
      seen = healthy();
      seen.waitingClients = { sortation: 0, destination: 0 };
      seen.link.since = wall;
      seen.storage.since = wall;
      change(seen);
      m.evaluate();
      return m.list().map((a) => a.Code);
    };
    m.sorterMessage();
    m.polled('sortation');
    m.polled('destination');
    expect(look(1000)).toEqual([]);
    // An hour forward: the last poll and sorter message are a second old, not an hour.
    expect(look(1000, 3_600_000)).toEqual([]);
    expect(lines.filter((l) => /system clock/.test(l.msg)).map((l) => l.msg.split(';')[0])).toEqual([
      'the system clock was set forward by 3600 s',
    ]);
    m.sorterMessage();
    m.polled('sortation');
    m.polled('destination');
    expect(look(1000, 0, (o) => (o.lateDecisions = 3))).toEqual(['DECISIONS_LATE']);
    // Two hours back: the late decision is 11 s old after 11 s, and no longer holds its alarm.
    m.sorterMessage();
    m.polled('sortation');
    m.polled('destination');
    expect(look(5000, -7_200_000)).toEqual(['DECISIONS_LATE']);
    m.sorterMessage();
    m.polled('sortation');
    m.polled('destination');
    expect(look(6000)).toEqual([]);
    expect(lines.filter((l) => /system clock/.test(l.msg))).toHaveLength(2);
    expect(lines.filter((l) => /system clock/.test(l.msg))[1]?.msg).toMatch(/^the system clock was set back by 7200 s; /);
  });

  it('raises each alarm when its condition holds past its threshold, and clears it when it passes', () => {
    const { at, m } = monitor();
    expect(at(0)).toEqual([]);
    // Each condition on its own, just under and over its threshold.
    const cases: Array<[string, number, (o: ReturnType<typeof healthy>) => void]> = [
      ['SORTER_LINK_DOWN', 5000, (o) => (o.link = { connected: false, since: 1_000_000, lost: 0 })],
      ['QUEUE_OLD_SORTATION', 0, (o) => (o.oldestAgeSeconds.sortation = 31)],
      ['QUEUE_OLD_DESTINATION', 0, (o) => (o.oldestAgeSeconds.destination = 30)],
      ['OUTBOX_UNACKNOWLEDGED', 0, (o) => (o.outboxOldestAgeSeconds = 10)],
      ['DEAD_LETTERS', 0, (o) => (o.deadLetters.destination = 1)],
      [
        'STORAGE_FAILING',
        0,
        (o) => (o.storage = { state: 'Failing', since: 1_000_000, waitingFor: null, lastError: 'disk I/O error', lastFailure: null }),
      ],
      [
        'STORAGE_STALLED',
        5000,
        (o) => (o.storage = { state: 'Stalled', since: 1_000_000, waitingFor: 'Lock', lastError: null, lastFailure: null }),
      ],
      ['DISK_NEARLY_FULL', 0, (o) => (o.freeDiskBytes = 999)],
    ];
    for (const [code, after, change] of cases) {
      if (after > 0) expect([code, at(after - 100, change)]).toEqual([code, []]);
      expect([code, at(after, change)]).toEqual([code, [code]]);
      expect([code, at(after + 100)]).toEqual([code, []]);
    }
    const journal = m.journal(new Date(0).toISOString());
    expect(journal.map((a) => a.Code).sort()).toEqual(cases.map((c) => c[0]).sort());
    expect(journal.every((a) => a.ClearedAt !== null)).toBe(true);
  });

  it('SORTER_SILENT: connected and no REQUEST, VERIFY or SCAN for SorterSilentSeconds; WCS_NOT_POLLING: no GET on a queue and none waiting', () => {
    const { at, sorterMessage, m } = monitor();
    expect(at(19_000)).toEqual([]);
    expect(at(20_000)).toEqual(['SORTER_SILENT']);
    sorterMessage();
    expect(at(20_500)).toEqual([]);
    // Nobody waits on the destination queue and nobody asked it since the start: 30 s later.
    expect(at(29_000, (o) => (o.waitingClients.destination = 0))).toEqual([]);
    expect(at(30_000, (o) => (o.waitingClients.destination = 0))).toEqual(['WCS_NOT_POLLING_DESTINATION']);
    m.polled('destination');
    expect(at(30_100, (o) => (o.waitingClients.destination = 0))).toEqual([]);
  });

  it('DECISIONS_LATE: raised by REQUESTs that went past LateDecisionMs, cleared ClearAfterSeconds after the last one', () => {
    const { at } = monitor();
    expect(at(1000, (o) => (o.lateDecisions = 3))).toEqual(['DECISIONS_LATE']);
    expect(at(9000)).toEqual(['DECISIONS_LATE']);
    expect(at(10_999)).toEqual(['DECISIONS_LATE']);
    expect(at(11_000)).toEqual([]);
  });

  it('STORAGE_FAILING: held ClearAfterSeconds past the last failed transaction, while small commits go through between failures and the state reads Ok', () => {
    const { at, m } = monitor();
    const failedAt = (ms: number) => (o: ReturnType<typeof healthy>) =>
      (o.storage.lastFailure = { at: 1_000_000 + ms, error: 'SQLITE_FULL: database or disk is full' });
    // A look between two failures sees Ok: the failure 300 ms before raises it all the same.
    expect(at(1000, failedAt(700))).toEqual(['STORAGE_FAILING']);
    expect(m.list()[0]?.Detail).toBe(
      'a transaction failed 0 s ago (SQLITE_FULL: database or disk is full); some commits go through between failures',
    );
    expect(at(5000, failedAt(4500))).toEqual(['STORAGE_FAILING']);
    expect(at(14_499, failedAt(4500))).toEqual(['STORAGE_FAILING']);
    // ClearAfterSeconds (10) after the last failure, with none since: cleared, and raised once in all.
    expect(at(14_500, failedAt(4500))).toEqual([]);
    expect(m.journal(new Date(0).toISOString()).filter((a) => a.Code === 'STORAGE_FAILING')).toHaveLength(1);
  });

  it('SORTER_LINK_UNSTABLE: the link lost LinkDropsInTenMinutes times in ten minutes, though never down for LinkDownSeconds', () => {
    const { at, m, sorterMessage } = monitor();
    const lost = (n: number) => (o: ReturnType<typeof healthy>) => (o.link.lost = n);
    const unstable = (ms: number, n: number) => {
      sorterMessage(); // the items still come: only the link's drops are at issue
      return at(ms, lost(n)).includes('SORTER_LINK_UNSTABLE');
    };
    // The count the first look finds is where counting starts, not drops.
    expect(unstable(0, 4)).toBe(false);
    expect(unstable(60_000, 5)).toBe(false);
    expect(unstable(120_000, 6)).toBe(false);
    // The third drop within ten minutes (default LinkDropsInTenMinutes: 3).
    expect(unstable(180_000, 7)).toBe(true);
    expect(m.list().find((a) => a.Code === 'SORTER_LINK_UNSTABLE')?.Detail).toBe(
      'the sorter link was lost 3 times in the last 10 minutes, the last 0 s ago',
    );
    expect(unstable(600_000 + 59_999, 7)).toBe(true);
    // Ten minutes after the first drop it no longer counts: two left, cleared.
    expect(unstable(660_000, 7)).toBe(false);
    // Several drops between two looks count each.
    expect(unstable(661_000, 9)).toBe(true);
    expect(m.journal(new Date(0).toISOString()).filter((a) => a.Code === 'SORTER_LINK_UNSTABLE')).toHaveLength(2);
  });

  it('SORTER_LINK_UNSTABLE is off at LinkDropsInTenMinutes 0 and in test mode', () => {
    const rule = ALARM_RULES.find((r) => r.code === 'SORTER_LINK_UNSTABLE')!;
    const o = { ...healthy(), now: 1000, lastSorterMessageAt: 0, pollAgeSeconds: { sortation: 0, destination: 0 } };
    const seen = { ...o, lateDecisionAt: null, lateDecisions: 0, uncleanStart: false, linkDropsAt: [100, 200, 300, 400] };
    expect(rule.check(seen, settings)).toMatch(/lost 4 times/);
    expect(rule.check(seen, { ...settings, LinkDropsInTenMinutes: 0 })).toBeNull();
    expect(rule.check({ ...seen, testMode: true }, settings)).toBeNull();
    expect(rule.check({ ...seen, linkDropsAt: [100, 200] }, settings)).toBeNull();
  });

  it('test mode: no sorter, no decision or queue-age alarms; the storage and dead letters still count', () => {
    const { at } = monitor();
    expect(
      at(60_000, (o) =>
        Object.assign(o, {
          testMode: true,
          link: { connected: false, since: 0, lost: 9 },
          lateDecisions: 5,
          oldestAgeSeconds: { sortation: 999, destination: 999 },
          outboxOldestAgeSeconds: 999,
          deadLetters: { sortation: 1, destination: 0 },
        }),
      ),
    ).toEqual(['DEAD_LETTERS']);
  });

  it('logs each raise and each clear once, with the code, severity and what to do', () => {
    const { at, lines } = monitor();
    at(0, (o) => (o.deadLetters.sortation = 2));
    at(1000, (o) => (o.deadLetters.sortation = 3));
    at(2000);
    const alarmLines = lines.filter((l) => l.alarm === 'DEAD_LETTERS');
    expect(alarmLines.map((l) => l.msg.split(':')[0])).toEqual(['alarm raised', 'alarm cleared']);
    expect(first(alarmLines)).toMatchObject({ severity: 'warning', detail: '2 dead letters (2 sortation, 0 destination)' });
    expect(first(alarmLines).msg).toContain('What to do: A client keeps taking messages');
  });

  it('an acknowledgement records who and when once; RESTART_AFTER_CRASH clears with it; an unknown id is null', () => {
    const { at, m, lines } = monitor(true);
    expect(at(0, (o) => (o.deadLetters.sortation = 1))).toEqual(['DEAD_LETTERS', 'RESTART_AFTER_CRASH']);
    const [dead, crash] = m.list() as [AlarmEntry, AlarmEntry];
    expect(m.list()).toHaveLength(2);
    expect(m.acknowledge(dead.Id, 'shift-lead')).toMatchObject({ AcknowledgedBy: 'shift-lead', ClearedAt: null });
    expect(m.acknowledge(dead.Id, 'somebody-else')).toMatchObject({ AcknowledgedBy: 'shift-lead' });
    expect(m.acknowledge(crash.Id, 'shift-lead')).toMatchObject({ AcknowledgedBy: 'shift-lead', ClearedAt: expect.any(String) });
    expect(at(1000, (o) => (o.deadLetters.sortation = 1))).toEqual(['DEAD_LETTERS']);
    expect(m.acknowledge(999, 'x')).toBeNull();
    expect(lines.filter((l) => /acknowledged by/.test(l.msg)).map((l) => l.msg)).toEqual([
      `alarm DEAD_LETTERS (#${dead.Id}) acknowledged by shift-lead`,
      `alarm RESTART_AFTER_CRASH (#${crash.Id}) acknowledged by shift-lead`,
    ]);
    // A cleared alarm can be acknowledged from the journal.
    at(2000);
    expect(m.acknowledge(crash.Id, 'late-comer')).toMatchObject({ AcknowledgedBy: 'shift-lead' });
    expect(alarmReads(ctx.db).alarm(dead.Id)).toMatchObject({ AcknowledgedBy: 'shift-lead', ClearedAt: expect.any(String) });
  });

  it('a restart takes over the alarms left active, clears them once their condition is gone, and gives new ids above the old', () => {
    const earlier = monitor();
    earlier.at(0, (o) => (o.deadLetters.sortation = 1));
    const second = monitor();
    expect(second.m.list().map((a) => a.Code)).toEqual(['DEAD_LETTERS']);
    expect(second.at(0)).toEqual([]);
    expect(second.at(100, (o) => (o.storage.state = 'Failing'))).toEqual(['STORAGE_FAILING']);
    expect(first(second.m.list()).Id).toBe(2);
  });

  it('a journal write the storage refuses is written again at a later look, the whole row', async () => {
    let refuse = true;
    const real = journal();
    const refusing: AlarmJournal = {
      ...real,
      raiseAlarm: (a) => (refuse ? Promise.reject(new Error('database or disk is full')) : real.raiseAlarm(a)),
      clearAlarm: (...a) => (refuse ? Promise.reject(new Error('full')) : real.clearAlarm(...a)),
    };
    const { log, lines } = capturingLogger('info');
    let now = 5_000_000;
    let seen = healthy();
    const m = new AlarmMonitor({ settings, journal: refusing, observe: () => seen, uncleanStart: false, clock: () => new Date(now), log });
    seen = {
      ...healthy(),
      storage: { state: 'Failing', since: now, waitingFor: null, lastError: 'database or disk is full', lastFailure: null },
    };
    m.evaluate();
    await new Promise((r) => setImmediate(r));
    now += 1000;
    seen = healthy();
    m.evaluate(); // cleared: refused too
    await new Promise((r) => setImmediate(r));
    expect(alarmReads(ctx.db).alarmJournal(new Date(0).toISOString(), 10)).toEqual([]);
    expect(lines.filter((l) => /not written/.test(l.msg))).toHaveLength(1);
    refuse = false;
    now += 1000;
    m.evaluate();
    await new Promise((r) => setTimeout(r, 10));
    expect(alarmReads(ctx.db).alarmJournal(new Date(0).toISOString(), 10)).toEqual([
      expect.objectContaining({
        Code: 'STORAGE_FAILING',
        RaisedAt: new Date(5_000_000).toISOString(),
        ClearedAt: new Date(5_001_000).toISOString(),
      }),
    ]);
  });

  it('a look that fails (a read the database refuses) is logged once, and the timer goes on', async () => {
    const { log, lines } = capturingLogger('info');
    let fail = true;
    const s = { ...settings, EvaluateSeconds: 1 };
    const m = new AlarmMonitor({
      settings: s,
      journal: journal(),
      observe: () => {
        if (fail) throw new Error('SQLITE_BUSY: database is locked');
        return healthy();
      },
      uncleanStart: false,
      clock: () => new Date(),
      log,
    });
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick'] });
    try {
      m.start();
      jest.advanceTimersByTime(3000);
      expect(lines.filter((l) => /a look at the conditions failed/.test(l.msg))).toHaveLength(1);
      fail = false;
      jest.advanceTimersByTime(1000);
      expect(m.list()).toEqual([]);
    } finally {
      m.stop();
      jest.useRealTimers();
    }
  });

  it('one gauge series per active alarm, by code and severity', async () => {
    const { at, m } = monitor();
    const registry = new client.Registry();
    alarmGauge(registry, m);
    at(0, (o) =>
      Object.assign(o, {
        deadLetters: { sortation: 1, destination: 0 },
        storage: { state: 'Failing', since: 0, waitingFor: null, lastError: 'x', lastFailure: null },
      }),
    );
    const text = await registry.metrics();
    expect(text).toContain('sorter_integration_alarm_active{code="STORAGE_FAILING",severity="critical"} 1');
    expect(text).toContain('sorter_integration_alarm_active{code="DEAD_LETTERS",severity="warning"} 1');
    at(100);
    expect(await registry.metrics()).not.toContain('sorter_integration_alarm_active{');
  });

  it('every rule has a stable upper-case code, a severity and a line of what to do', () => {
    for (const r of ALARM_RULES) expect([r.code, /^[A-Z_]+$/.test(r.code), r.whatToDo.length > 40]).toEqual([r.code, true, true]);
    expect(new Set(ALARM_RULES.map((r) => r.code)).size).toBe(ALARM_RULES.length);
  });
});
