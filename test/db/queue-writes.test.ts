// Writing the queue tables on a real SQLite file: removal into the history, batches all or
// none, the test mode's clear.
import { createQueueStore } from '../../db/queue-store';
import type { InductDto, SorterMessage, VerifyDto } from '../../model/messages';
import { freshDbEach } from '../helpers/db';

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

describe('queue writes', () => {
  const ctx = freshDbEach();

  it('removes a delivered message and records it in the history in one transaction', () => {
    const store = createQueueStore(ctx.db);
    store.enqueue([induct('0004711')], '2026-11-21T10:00:00.000Z');
    const head = store.head('sortation', [])!;
    expect(store.deliver(head, { deliveredAt: '2026-11-21T10:00:01.000Z', clientAddress: '127.0.0.1' })).toBe(true);
    expect(store.depth('sortation')).toBe(0);
    const row = ctx.db.prepare('SELECT * FROM delivered_history').get() as Record<string, unknown>;
    expect(row).toMatchObject({
      queue: 'sortation',
      type: 'REQUEST',
      track_id: '0004711',
      destination: 'IND01',
      client_address: '127.0.0.1',
      delivered_at: '2026-11-21T10:00:01.000Z',
    });
    // The payload keeps what the columns do not; delivered_messages gives the whole body back.
    expect(JSON.parse(row.payload as string)).toEqual([1, 1.5, 2, 3, 0.25]);
    expect(ctx.db.prepare('SELECT body FROM delivered_messages').pluck().get()).toBe(JSON.stringify(induct('0004711')));
    expect(store.deliver(head, { deliveredAt: 'x', clientAddress: null })).toBe(false);
    expect(ctx.db.prepare('SELECT count(*) FROM delivered_history').pluck().get()).toBe(1);
  });

  it("keeps each message's body in delivered_messages exactly as a client received it", () => {
    const store = createQueueStore(ctx.db);
    const messages: SorterMessage[] = [
      // The longest fields, numbers as JSON writes them (no 400.0), a text with quotes and a backslash, nulls.
      {
        ...induct('0123456789012345'),
        Barcode: '0123456789012345678901234567',
        InductLocation: 'IND99',
        RecirculationCount: 12,
        Length: 400,
        Width: 0.1,
        Height: 1e-7,
        Weight: 12345.678,
      },
      { ...verify('0123456789012345'), Barcode: '', Destination: 'D017' },
      {
        Type: 'SCAN',
        Destination: 'D017',
        DestinationStatus: 'NotReady',
        DestinationText: 'Tour "4711" \\ A',
        LightStatus: 'Flashing',
        LightColor: 'RED',
        ButtonID: 3,
        MessageCode: 211,
        BatchDoorStatus: null,
      },
      {
        Type: 'SCAN',
        Destination: 'D018',
        DestinationStatus: 'Ready',
        DestinationText: '',
        LightStatus: 'Off',
        LightColor: 'Off',
        ButtonID: 0,
        MessageCode: 211,
        BatchDoorStatus: 'OPENED',
      },
    ];
    store.enqueue(messages, '2026-11-21T10:00:00.000Z');
    for (const queue of ['sortation', 'sortation', 'destination', 'destination'] as const) {
      store.deliver(store.head(queue, [])!, {
        deliveredAt: '2026-11-21T10:00:01.000Z',
        clientAddress: '::ffff:192.168.100.200',
        attempt: 2,
        readProof: 'LastResponse',
      });
    }
    expect(ctx.db.prepare('SELECT body FROM delivered_messages ORDER BY id').pluck().all()).toEqual(messages.map((m) => JSON.stringify(m)));
  });

  it('writes rows small enough that two share each 512-byte page of the history, the longest REQUESTs too', () => {
    // The bytes each item writes: a row a page would double the history's share of them.
    const store = createQueueStore(ctx.db);
    expect(ctx.db.pragma('page_size', { simple: true })).toBe(512);
    const longest: InductDto = {
      ...induct('01234567890123456789'),
      Barcode: '012345678901234567890123456789012345678901234567',
      InductLocation: 'IND99',
      RecirculationCount: 99,
      Length: 1234.56,
      Width: 1234.56,
      Height: 1234.56,
      Weight: 12345.678,
    };
    store.enqueue(
      Array.from({ length: 20 }, () => longest),
      '2026-11-21T10:00:00.000Z',
    );
    for (let i = 0; i < 20; i++)
      store.deliver(store.head('sortation', [])!, {
        deliveredAt: '2026-11-21T10:00:01.000Z',
        clientAddress: '::ffff:192.168.100.200',
        attempt: 2,
        readProof: 'LastResponse',
      });
    const leaves = ctx.db
      .prepare("SELECT count(*) AS pages, sum(ncell) AS rows FROM dbstat WHERE name = 'delivered_history' AND pagetype = 'leaf'")
      .get() as { pages: number; rows: number };
    expect(leaves).toEqual({ pages: 10, rows: 20 });
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
    store.clearQueues();
    expect(store.depth('sortation')).toBe(0);
    expect(store.enqueue([verify('c')], 'T')).toEqual([1]);
  });
});
