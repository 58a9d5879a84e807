// Health checks (lib/ops/health.ts): liveness from the event loop's delay, readiness from the
// storage, the schema and the sorter link, and the problems /status lists (the event loop's
// sampler: test/lib/ops/event-loop.test.ts).
import type { StorageStatus } from '../../../db/storage-status';
import { RECOVERED_AFTER_MS } from '../../../db/storage-status';
import { type HealthInputs, liveness, problems, readiness } from '../../../lib/ops/health';
import { offlineLink } from '../../../lib/link/sorter-link-status';

const now = new Date('2026-01-02T03:04:05.000Z');
const storage = (over: Partial<StorageStatus> = {}): StorageStatus => ({
  State: 'Ok',
  Since: '2026-01-02T03:00:00.000Z',
  WaitingFor: null,
  PendingWrites: 0,
  LastCommitMs: 1,
  Commits: 1,
  Writes: 1,
  Syncs: 1,
  SyncInFlightMs: null,
  AckedBeforeSync: 0,
  LastError: null,
  Failures: 0,
  LastFailure: null,
  ReadOnly: false,
  ...over,
});
const inputs = (over: Partial<HealthInputs> = {}): HealthInputs => ({
  testMode: false,
  now,
  storage: storage(),
  schema: { applied: 7, known: 7 },
  link: { ...offlineLink('10.0.0.5:2000').status(), Connected: true },
  eventLoop: { delayP99Ms: () => 12 },
  ...over,
});

describe('liveness', () => {
  it('passes with the delay observed; a delay over 1 s is a warning that says so', () => {
    expect(liveness(inputs())).toEqual({
      status: 'pass',
      checks: { 'eventLoop:delay': [{ status: 'pass', observedValue: 12, observedUnit: 'ms', time: now.toISOString() }] },
    });
    const slow = liveness(inputs({ eventLoop: { delayP99Ms: () => 1500.4 } }));
    expect(slow.status).toBe('warn');
    expect(slow.checks['eventLoop:delay']?.[0]).toMatchObject({ observedValue: 1500, output: 'the event loop was held up to 1500 ms' });
  });
});

describe('readiness', () => {
  it('passes when the storage takes writes, the schema is this version and the sorter is connected', () => {
    const r = readiness(inputs());
    expect(r.status).toBe('pass');
    expect(Object.keys(r.checks)).toEqual(['database:writable', 'database:migrations', 'sorter:link']);
    expect(problems(r)).toEqual([]);
  });

  it('fails for a read-only or failing storage, a schema of another version, or no sorter; the problems say why', () => {
    const r = readiness(
      inputs({
        storage: storage({ State: 'Failing', LastError: 'SQLITE_FULL: database or disk is full' }),
        schema: { applied: 6, known: 7 },
        link: { ...offlineLink('10.0.0.5:2000').status(), Since: '2026-01-02T03:00:00.000Z' },
      }),
    );
    expect(r.status).toBe('fail');
    expect(problems(r)).toEqual([
      'database:writable: SQLITE_FULL: database or disk is full',
      'database:migrations: schema version 6, this version of the service needs 7',
      'sorter:link: the sorter 10.0.0.5:2000 is not connected (since 2026-01-02T03:00:00.000Z)',
    ]);
    expect(problems(readiness(inputs({ storage: storage({ ReadOnly: true }) })))).toEqual([
      'database:writable: the database does not take writes',
    ]);
  });

  it('a transaction failed within the last 10 s: the storage check fails although the state reads Ok (commits go through between failures)', () => {
    const failedAgo = (ms: number) =>
      readiness(
        inputs({
          storage: storage({
            Failures: 3,
            LastFailure: { At: new Date(now.getTime() - ms).toISOString(), Error: 'SQLITE_FULL: database or disk is full' },
          }),
        }),
      );
    const recent = failedAgo(RECOVERED_AFTER_MS - 1);
    expect(recent.status).toBe('fail');
    expect(problems(recent)).toEqual([
      `database:writable: a transaction failed at ${new Date(now.getTime() - RECOVERED_AFTER_MS + 1).toISOString()} (SQLITE_FULL: database or disk is full); some commits go through between failures`,
    ]);
    expect(recent.checks['database:writable']?.[0]?.observedValue).toBe('Ok');
    expect(failedAgo(RECOVERED_AFTER_MS).status).toBe('pass');
  });

  it('a stalled storage is a warning naming what it waits for; the worst check decides', () => {
    const stalled = readiness(inputs({ storage: storage({ State: 'Stalled', Since: '2026-01-02T03:04:00.000Z', WaitingFor: 'Lock' }) }));
    expect(stalled.status).toBe('warn');
    expect(problems(stalled)).toEqual([
      'database:writable: a commit has waited since 2026-01-02T03:04:00.000Z (a lock held by another connection)',
    ]);
    const disk = readiness(inputs({ storage: storage({ State: 'Stalled', WaitingFor: 'Disk' }), schema: { applied: 1, known: 7 } }));
    expect(disk.status).toBe('fail');
    expect(problems(disk)[0]).toMatch(/\(the disk\)$/);
  });

  it('in test mode, no sorter link is needed', () => {
    const r = readiness(inputs({ testMode: true, link: offlineLink(null).status() }));
    expect(r.status).toBe('pass');
    expect(r.checks['sorter:link']?.[0]).toMatchObject({ status: 'pass', observedValue: false, output: 'test mode: no sorter link' });
  });
});
