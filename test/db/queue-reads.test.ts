// Reading the queue tables on a real SQLite file: FIFO, claims skipped by head, the oldest
// message, and an operator's connection reading beside the service's.
import Database from '../../db/sqlite';
import { createQueueStore } from '../../db/queue-store';
import type { DestinationInfoDto, InductDto, VerifyDto } from '../../model/messages';
import { freshDbEach } from '../helpers/db';
import { atLeast } from '../helpers/nth';

const induct = (t: string): InductDto => ({
  Type: 'REQUEST',
  TrackID: t,
  Barcode: '00012345678901234567',
  MessageCode: 210,
  InductLocation: 'IND01',
  RecirculationCount: 1,
  Length: 1.5,
  Width: 2,
  Height: 3,
  Weight: 0.25,
});
const verify = (t: string): VerifyDto => ({ Type: 'VERIFY', TrackID: t, Barcode: 'B', Destination: 'D1', MessageCode: 212 });
const scan = (d: string): DestinationInfoDto => ({
  Type: 'SCAN',
  Destination: d,
  DestinationStatus: 'Ready',
  DestinationText: '',
  LightStatus: 'Off',
  LightColor: 'Off',
  ButtonID: 0,
  MessageCode: 211,
  BatchDoorStatus: null,
});

describe('queue reads', () => {
  const ctx = freshDbEach();

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
    const [a, b] = atLeast(2, store.enqueue([verify('a'), verify('b')], 'T'));
    expect(store.head('sortation', [a])!.id).toBe(b);
    expect(store.head('sortation', [a, b])).toBeUndefined();
  });

  it('reports the oldest message time, and null for an empty queue', () => {
    const store = createQueueStore(ctx.db);
    expect(store.oldest('sortation')).toBeNull();
    store.enqueue([verify('a')], '2026-11-21T10:00:00.000Z');
    store.enqueue([verify('b')], '2026-11-21T11:00:00.000Z');
    expect(store.oldest('sortation')).toEqual({ id: expect.any(Number), receivedAt: '2026-11-21T10:00:00.000Z' });
  });

  it('counts waiting and handed-out messages in one snapshot', () => {
    const store = createQueueStore(ctx.db);
    const [a, b] = atLeast(2, store.enqueue([verify('a'), verify('b'), verify('c')], 'T'));
    expect(store.counts('sortation', [a, b])).toEqual({ waiting: 1, handedOut: 2 });
    store.deliver(store.head('sortation', [])!, { deliveredAt: 'T2', clientAddress: null });
    // A claim whose removal is committed is in neither count.
    expect(store.counts('sortation', [a, b])).toEqual({ waiting: 1, handedOut: 1 });
    expect(store.depth('sortation')).toBe(2);
  });

  it('is readable by another connection while the service holds it (WAL)', () => {
    const store = createQueueStore(ctx.db);
    store.enqueue([induct('0004711')], 'T');
    const operator = new Database(ctx.file, { readonly: true });
    expect(operator.prepare('SELECT track_id, weight FROM sortation_queue').get()).toEqual({ track_id: '0004711', weight: 0.25 });
    operator.close();
  });
});
