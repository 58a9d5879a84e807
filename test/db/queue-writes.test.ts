// Writing the queue tables on a real SQLite file: removal into the history, batches all or
// none, the test mode's clear.
import { createQueueStore } from '../../db/queue-store';
import type { InductDto, VerifyDto } from '../../model/messages';
import { freshDbEach } from '../helpers/db';

const induct = (t: string): InductDto => ({ Type: 'REQUEST', TrackID: t, Barcode: '00012345678901234567', MessageCode: 210, InductLocation: 'IND01', RecirculationCount: 1, Length: 1.5, Width: 2, Height: 3, Weight: 0.25 });
const verify = (t: string): VerifyDto => ({ Type: 'VERIFY', TrackID: t, Barcode: 'B', Destination: 'D1', MessageCode: 212 });

describe('queue writes', () => {
  const ctx = freshDbEach();

  it('removes a delivered message and records it in the history in one transaction', () => {
    const store = createQueueStore(ctx.db);
    store.enqueue([induct('0004711')], '2026-11-21T10:00:00.000Z');
    const head = store.head('sortation', [])!;
    expect(store.remove(head, { deliveredAt: '2026-11-21T10:00:01.000Z', clientAddress: '127.0.0.1' })).toBe(true);
    expect(store.depth('sortation')).toBe(0);
    const row = ctx.db.prepare('SELECT * FROM delivered_history').get() as Record<string, unknown>;
    expect(row).toMatchObject({ queue: 'sortation', type: 'REQUEST', track_id: '0004711', destination: 'IND01', client_address: '127.0.0.1', delivered_at: '2026-11-21T10:00:01.000Z' });
    expect(JSON.parse(row.payload as string)).toEqual(induct('0004711'));
    expect(store.remove(head, { deliveredAt: 'x', clientAddress: null })).toBe(false);
    expect(ctx.db.prepare('SELECT count(*) FROM delivered_history').pluck().get()).toBe(1);
  });

  it('rolls back a whole batch when one message cannot be stored', () => {
    const store = createQueueStore(ctx.db);
    const bad = { ...verify('x'), Type: 'BOGUS' } as unknown as VerifyDto;
    expect(() => store.enqueue([verify('ok'), bad], 'T')).toThrow(/CHECK constraint/);
    expect(store.depth('sortation')).toBe(0);
  });

  it('clears both queues with their id counters', () => {
    const store = createQueueStore(ctx.db);
    store.enqueue([verify('a')], '2026-11-21T10:00:00.000Z');
    store.enqueue([verify('b')], '2026-11-21T11:00:00.000Z');
    store.clear();
    expect(store.depth('sortation')).toBe(0);
    expect(store.enqueue([verify('c')], 'T')).toEqual([1]);
  });
});
