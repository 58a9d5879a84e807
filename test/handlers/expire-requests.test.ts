// The scheduled expiry of old REQUESTs, on a real SQLite file: off by default and in test mode;
// with MaxRequestAgeSeconds set, old REQUESTs go to the history as Expired, VERIFYs stay.
import { createQueueStore } from '../../db/queue-store';
import { expireRequests } from '../../handlers/expire-requests';
import { createLogger } from '../../lib/process/logger';
import { freshDb } from '../helpers/db';

describe('expireRequests', () => {
  it('takes REQUESTs older than MaxRequestAgeSeconds out of the queue, and nothing when it is 0 or in test mode', async () => {
    const ctx = freshDb();
    const store = createQueueStore(ctx.db);
    const request = (track: string) =>
      ({
        Type: 'REQUEST',
        TrackID: track,
        Barcode: '',
        MessageCode: 210,
        InductLocation: 'IND01',
        RecirculationCount: 0,
        Length: 1,
        Width: 1,
        Height: 1,
        Weight: 1,
      }) as const;
    store.enqueue(
      [request('OLD'), { Type: 'VERIFY', TrackID: 'OLD', Barcode: '', Destination: 'D1', MessageCode: 212 }],
      '2026-11-22T08:00:00.000Z',
    );
    store.enqueue([request('NEW')], '2026-11-22T08:00:50.000Z');
    const deps = {
      testMode: false,
      store: { expireRequests: async (before: string, at: string) => store.expireRequests(before, at) },
      settings: { MaxRequestAgeSeconds: 0 },
      requestsRemoved: { Superseded: 0, Expired: 0 },
      clock: () => new Date('2026-11-22T08:01:00.000Z'),
      log: createLogger('silent'),
    };
    expect(await expireRequests(deps)).toEqual({ kind: 'empty' });
    deps.settings.MaxRequestAgeSeconds = 30;
    expect(await expireRequests({ ...deps, testMode: true })).toEqual({ kind: 'empty' });
    expect(await expireRequests(deps)).toMatchObject({ kind: 'ok', body: { Expired: 1 } });
    expect(ctx.db.prepare('SELECT type || track_id FROM sortation_queue ORDER BY id').pluck().all()).toEqual(['VERIFYOLD', 'REQUESTNEW']);
    expect(ctx.db.prepare('SELECT track_id, removed_reason FROM delivered_history').all()).toEqual([
      { track_id: 'OLD', removed_reason: 'Expired' },
    ]);
    expect(deps.requestsRemoved.Expired).toBe(1);
    ctx.dispose();
  });
});
