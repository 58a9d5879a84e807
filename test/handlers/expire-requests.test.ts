// The scheduled expiry of old REQUESTs, on a real SQLite file: off by default and in test mode;
// with MaxRequestAgeSeconds set, old REQUESTs go to the history as Expired, VERIFYs stay. Those
// queued before this start count from their stored time, those of this run from their arrival on
// the clock that never steps.
import { createQueueStore } from '../../db/queue-store';
import { expireRequests } from '../../handlers/expire-requests';
import { StoredAges } from '../../lib/queue/arrivals';
import { createLogger } from '../../lib/process/logger';
import { freshDb } from '../helpers/db';
import { induct } from '../helpers/messages';

const tracks = (ctx: ReturnType<typeof freshDb>) =>
  ctx.db.prepare('SELECT type || track_id FROM sortation_queue ORDER BY id').pluck().all();

describe('expireRequests', () => {
  it('takes REQUESTs older than MaxRequestAgeSeconds out of the queue, and nothing when it is 0 or in test mode', async () => {
    const ctx = freshDb();
    const store = createQueueStore(ctx.db);
    store.enqueue(
      [induct('OLD'), { Type: 'VERIFY', TrackID: 'OLD', Barcode: '', Destination: 'D1', MessageCode: 212 }],
      '2026-11-22T08:00:00.000Z',
    );
    store.enqueue([induct('NEW')], '2026-11-22T08:00:50.000Z');
    const clock = () => new Date('2026-11-22T08:01:00.000Z');
    const deps = {
      testMode: false,
      store: { expireRequests: async (...args: Parameters<typeof store.expireRequests>) => store.expireRequests(...args) },
      settings: { MaxRequestAgeSeconds: 0 },
      requestsRemoved: { Superseded: 0, Expired: 0 },
      ages: new StoredAges(clock),
      clock,
      log: createLogger('silent'),
    };
    expect(await expireRequests(deps)).toEqual({ kind: 'empty' });
    deps.settings.MaxRequestAgeSeconds = 30;
    expect(await expireRequests({ ...deps, testMode: true })).toEqual({ kind: 'empty' });
    expect(await expireRequests(deps)).toMatchObject({ kind: 'ok', body: { Expired: 1 } });
    expect(tracks(ctx)).toEqual(['VERIFYOLD', 'REQUESTNEW']);
    expect(ctx.db.prepare('SELECT track_id, removed_reason FROM delivered_history').all()).toEqual([
      { track_id: 'OLD', removed_reason: 'Expired' },
    ]);
    expect(deps.requestsRemoved.Expired).toBe(1);
    ctx.dispose();
  });

  it("counts this run's REQUESTs from their arrival: a step of the wall clock neither expires a fresh one nor keeps a stale one", async () => {
    const ctx = freshDb();
    const store = createQueueStore(ctx.db);
    let wall = Date.parse('2026-11-22T08:00:00.000Z');
    let steady = 1_000;
    const clock = () => new Date(wall);
    const ages = new StoredAges(clock, () => steady);
    const deps = {
      testMode: false,
      store: { expireRequests: async (...args: Parameters<typeof store.expireRequests>) => store.expireRequests(...args) },
      settings: { MaxRequestAgeSeconds: 1 },
      requestsRemoved: { Superseded: 0, Expired: 0 },
      ages,
      clock,
      log: createLogger('silent'),
    };
    const arrive = (track: string) => {
      const [id] = store.enqueue([induct(track)], clock().toISOString());
      ages.arrived('sortation', id ?? 0, ages.now()); // as the telegram trigger does
    };
    const pass = async (ms: number, stepMs = 0) => {
      steady += ms;
      wall += ms + stepMs;
      return ((await expireRequests(deps)) as { body: { Expired: number } }).body.Expired;
    };
    store.enqueue([induct('PREVIOUS-RUN')], '2026-11-22T07:59:58.500Z'); // queued before this start: its stored time counts
    arrive('A');
    expect(await pass(500, 3_600_000)).toBe(1); // an hour forward: only the previous run's REQUEST, by its stored time
    expect(tracks(ctx)).toEqual(['REQUESTA']);
    expect(await pass(400)).toBe(0);
    expect(await pass(200)).toBe(1); // A is 1.1 s old
    arrive('B');
    expect(await pass(300, -7_200_000)).toBe(0); // two hours back: B is stored "in the future"
    expect(await pass(800)).toBe(1); // and 1.1 s old
    expect(ctx.db.prepare('SELECT track_id FROM delivered_history ORDER BY id').pluck().all()).toEqual(['PREVIOUS-RUN', 'A', 'B']);
    ctx.dispose();
  });
});
