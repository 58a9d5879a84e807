// Writing the queue tables on a real SQLite file: removal into the history, batches all or
// none, the test mode's clear.
import { createQueueStore } from '../../db/queue-store';
import { EXPIRED_WHERE, requestRemovalSql } from '../../db/queue-writes';
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

describe('taking REQUESTs out while VERIFYs wait', () => {
  const ctx = freshDbEach();
  const SUPERSEDED_WHERE = 'track_id = @trackId AND id < @newerId';
  const params = { firstId: 1, upToId: 2, before: 'T', trackId: 't', newerId: 3 };

  it('the expiry and the supersede read the REQUESTs index, not the rows in their id ranges (the plans on the real schema)', () => {
    for (const where of [EXPIRED_WHERE, SUPERSEDED_WHERE]) {
      const { select, remove } = requestRemovalSql(where);
      for (const sql of [select, remove]) {
        const names = [...sql.matchAll(/@(\w+)/g)].map((m) => m[1]);
        const bound = Object.fromEntries(names.map((n) => [n, params[n as keyof typeof params]]));
        const plan = ctx.db
          .prepare(`EXPLAIN QUERY PLAN ${sql}`)
          .all(bound)
          .map((r) => (r as { detail: string }).detail);
        expect(plan.some((d) => /USING (COVERING )?INDEX sortation_queue_request_track/.test(d))).toBe(true);
        expect(plan.filter((d) => /^SCAN sortation_queue$|USING INTEGER PRIMARY KEY/.test(d))).toEqual([]);
      }
    }
  });

  it('expires the old REQUESTs among the VERIFYs and keeps every VERIFY and the newer REQUESTs', () => {
    const store = createQueueStore(ctx.db);
    const ids = store.enqueue(
      Array.from({ length: 40 }, (_, i) => (i % 4 === 3 ? induct(`r${i}`) : verify(`v${i}`))),
      '2026-11-21T10:00:00.000Z',
    );
    // Up to the 20th row by arrival: REQUESTs r3 .. r19 (5 of them) go, r23 .. r39 (5) and all 30 VERIFYs stay.
    expect(store.expireRequests({ upToId: ids[19]!, firstId: ids[0]!, before: '2000-01-01T00:00:00.000Z' }, 'T2')).toBe(5);
    const left = ctx.db.prepare('SELECT type, track_id AS t FROM sortation_queue ORDER BY id').all() as Array<{ type: string; t: string }>;
    expect(left.filter((r) => r.type === 'VERIFY')).toHaveLength(30);
    expect(left.filter((r) => r.type === 'REQUEST').map((r) => r.t)).toEqual(['r23', 'r27', 'r31', 'r35', 'r39']);
    const expired = ctx.db.prepare("SELECT track_id FROM delivered_history WHERE removed_reason = 'Expired' ORDER BY id").pluck().all();
    expect(expired).toEqual(['r3', 'r7', 'r11', 'r15', 'r19']);
  });
});
