// The queue tables on a real SQLite file: FIFO, claims skipped by head, removal into the history.
import Database from '../../db/sqlite';
import { createOutboxStore } from '../../db/outbox-store';
import { createQueueStore } from '../../db/queue-store';
import { createHistoryStore } from '../../db/history-store';
import type { DestinationInfoDto, InductDto, VerifyDto } from '../../model/messages';
import { freshDb } from '../helpers/db';

const induct = (t: string): InductDto => ({ Type: 'REQUEST', TrackID: t, Barcode: '00012345678901234567', MessageCode: 210, InductLocation: 'IND01', RecirculationCount: 1, Length: 1.5, Width: 2, Height: 3, Weight: 0.25 });
const verify = (t: string): VerifyDto => ({ Type: 'VERIFY', TrackID: t, Barcode: 'B', Destination: 'D1', MessageCode: 212 });
const scan = (d: string): DestinationInfoDto => ({ Type: 'SCAN', Destination: d, DestinationStatus: 'Ready', DestinationText: '', LightStatus: 'Off', LightColor: 'Off', ButtonID: 0, MessageCode: 211, BatchDoorStatus: null });

describe('queue store', () => {
  let ctx: ReturnType<typeof freshDb>;
  beforeEach(() => (ctx = freshDb()));
  afterEach(() => ctx.dispose());

  it('keeps each queue FIFO and routes messages to their queue', () => {
    const store = createQueueStore(ctx.db);
    store.enqueue([induct('0001'), scan('D1'), verify('0001'), scan('D2')], '2026-11-21T10:00:00.000Z');
    expect(store.depth('sortation')).toBe(2);
    expect(store.depth('destination')).toBe(2);
    expect(store.head('sortation', [])!.message).toEqual(induct('0001'));
    expect(store.head('destination', [])!.message).toEqual(scan('D1'));
  });

  it('round-trips every field with its JSON type; identifiers stay strings', () => {
    const store = createQueueStore(ctx.db);
    store.enqueue([induct('0004711'), verify('0004711')], 'T');
    const head = store.head('sortation', [])!;
    expect(head.message).toEqual(induct('0004711'));
    expect(head.receivedAt).toBe('T');
    expect(store.head('sortation', [head.id])!.message).toEqual(verify('0004711'));
  });

  it('skips claimed ids when looking for the head', () => {
    const store = createQueueStore(ctx.db);
    const [a, b] = store.enqueue([verify('a'), verify('b')], 'T');
    expect(store.head('sortation', [a])!.id).toBe(b);
    expect(store.head('sortation', [a, b])).toBeUndefined();
  });

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

  it('reports the oldest message time and clears both queues with their id counters', () => {
    const store = createQueueStore(ctx.db);
    expect(store.oldestReceivedAt('sortation')).toBeNull();
    store.enqueue([verify('a')], '2026-11-21T10:00:00.000Z');
    store.enqueue([verify('b')], '2026-11-21T11:00:00.000Z');
    expect(store.oldestReceivedAt('sortation')).toBe('2026-11-21T10:00:00.000Z');
    store.clear();
    expect(store.depth('sortation')).toBe(0);
    expect(store.enqueue([verify('c')], 'T')).toEqual([1]);
  });

  it('is readable by another connection while the service holds it (WAL)', () => {
    const store = createQueueStore(ctx.db);
    store.enqueue([induct('0004711')], 'T');
    const operator = new Database(ctx.file, { readonly: true });
    expect(operator.prepare('SELECT track_id, weight FROM sortation_queue').get()).toEqual({ track_id: '0004711', weight: 0.25 });
    operator.close();
  });
});

describe('outbox store', () => {
  it('keeps entries in order until removed', () => {
    const ctx = freshDb();
    const outbox = createOutboxStore(ctx.db);
    const a = outbox.add({ kind: 'ASSIGNMENT', body: { TrackID: '0004711', Destination: 'D1', Barcode: '' } }, '10.0.0.1', 'T1');
    const b = outbox.add({ kind: 'DESTINATION', body: { Destination: 'D1', DestinationStatus: 'Ready', DestinationText: 'x', LightStatus: 'Solid', LightColor: 'RED', BatchDoorStatus: null } }, null, 'T2');
    expect(outbox.depth()).toBe(2);
    expect(outbox.lastId()).toBe(b);
    expect(outbox.peek(10).map((e) => e.id)).toEqual([a, b]);
    expect(outbox.peek(10)[0].message).toEqual({ kind: 'ASSIGNMENT', body: { TrackID: '0004711', Destination: 'D1', Barcode: '' } });
    expect(outbox.peek(10)[1].message.body).toMatchObject({ LightColor: 'RED', BatchDoorStatus: null });
    expect(outbox.remove(a)).toBe(true);
    expect(outbox.remove(a)).toBe(false);
    expect(outbox.peek(10).map((e) => e.id)).toEqual([b]);
    outbox.remove(b);
    expect(outbox.lastId()).toBe(0);
    ctx.dispose();
  });
});

describe('history store', () => {
  it('purges rows delivered before the cutoff and checkpoints the WAL', () => {
    const ctx = freshDb();
    const store = createQueueStore(ctx.db);
    const history = createHistoryStore(ctx.db);
    store.enqueue([verify('old'), verify('new')], 'T');
    store.remove(store.head('sortation', [])!, { deliveredAt: '2026-10-01T00:00:00.000Z', clientAddress: null });
    store.remove(store.head('sortation', [])!, { deliveredAt: '2026-11-20T00:00:00.000Z', clientAddress: null });
    expect(history.purgeDeliveredBefore('2026-11-01T00:00:00.000Z', 1000)).toBe(1);
    expect(history.size()).toBe(1);
    expect(history.checkpoint().busy).toBe(false);
    ctx.dispose();
  });
});
