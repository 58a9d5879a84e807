// GET /health/live and /health/ready as a handler: each check pass, warn or fail, 503 on a fail.
import { getHealth } from '../../handlers/health';
import type { StorageStatus } from '../../db/storage-status';
import { clock, link } from '../helpers/handler-fakes';

const storage = (over: Partial<StorageStatus> = {}): { status(): StorageStatus } => ({
  status: () => ({
    State: 'Ok',
    Since: '2026-11-21T11:00:00.000Z',
    WaitingFor: null,
    PendingWrites: 0,
    LastCommitMs: 0.4,
    Commits: 9,
    Writes: 12,
    Syncs: 9,
    SyncInFlightMs: null,
    AckedBeforeSync: 0,
    LastError: null,
    Failures: 0,
    LastFailure: null,
    ReadOnly: false,
    ...over,
  }),
});
const deps = (over: object = {}) => ({
  testMode: false,
  clock,
  storage: storage(),
  schema: { applied: 5, known: 5 },
  link: link('Sent'),
  eventLoop: { delayP99Ms: () => 3 },
  ...over,
});
const statuses = (r: ReturnType<typeof getHealth>) => {
  if (r.kind !== 'ok') throw new Error(`not ok: ${r.kind}`);
  const body = r.body as { status: string; checks: Record<string, [{ status: string; output?: string }]> };
  return { http: r.status, status: body.status, checks: Object.fromEntries(Object.entries(body.checks).map(([k, [c]]) => [k, c.status])) };
};

describe('getHealth', () => {
  it('live: the event loop answers; a delay over 1 s is a warning, never a 503', () => {
    expect(statuses(getHealth(deps(), { probe: 'live' }))).toEqual({ http: 200, status: 'pass', checks: { 'eventLoop:delay': 'pass' } });
    expect(statuses(getHealth(deps({ eventLoop: { delayP99Ms: () => 1500 } }), { probe: 'live' }))).toEqual({
      http: 200,
      status: 'warn',
      checks: { 'eventLoop:delay': 'warn' },
    });
  });

  it('ready: database writable, schema applied, sorter connected', () => {
    expect(statuses(getHealth(deps(), { probe: 'ready' }))).toEqual({
      http: 200,
      status: 'pass',
      checks: { 'database:writable': 'pass', 'database:migrations': 'pass', 'sorter:link': 'pass' },
    });
  });

  it('ready fails (503) when the sorter is not connected in live mode, not in test mode', () => {
    expect(statuses(getHealth(deps({ link: link('Queued') }), { probe: 'ready' }))).toMatchObject({
      http: 503,
      status: 'fail',
      checks: { 'sorter:link': 'fail' },
    });
    expect(statuses(getHealth(deps({ link: link('Queued'), testMode: true }), { probe: 'ready' }))).toMatchObject({
      http: 200,
      status: 'pass',
    });
  });

  it('ready warns while a commit waits (a lock, a slow disk) and fails when the storage fails or is read-only', () => {
    expect(statuses(getHealth(deps({ storage: storage({ State: 'Stalled', WaitingFor: 'Lock' }) }), { probe: 'ready' }))).toMatchObject({
      http: 200,
      status: 'warn',
    });
    expect(
      statuses(
        getHealth(deps({ storage: storage({ State: 'Failing', LastError: 'SQLITE_FULL: database or disk is full' }) }), { probe: 'ready' }),
      ),
    ).toMatchObject({ http: 503, checks: { 'database:writable': 'fail' } });
    expect(statuses(getHealth(deps({ storage: storage({ ReadOnly: true }) }), { probe: 'ready' }))).toMatchObject({ http: 503 });
  });

  it('ready fails when the schema is not the one this version needs', () => {
    const r = getHealth(deps({ schema: { applied: 4, known: 5 } }), { probe: 'ready' });
    expect(statuses(r)).toMatchObject({ http: 503, checks: { 'database:migrations': 'fail' } });
    expect(JSON.stringify(r)).toContain('schema version 4, this version of the service needs 5');
  });
});
