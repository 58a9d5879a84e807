// The outbox: what the service must still deliver to the sorter, in order, on a real SQLite file.
import { openDatabase } from '../../db/connection';
import { createOutboxStore } from '../../db/outbox-store';
import { freshDb } from '../helpers/db';
import { atLeast } from '../helpers/nth';

const assignment = (TrackID: string) => ({ kind: 'ASSIGNMENT' as const, body: { TrackID, Destination: 'D1', Barcode: '' } });

describe('outbox store', () => {
  it('keeps entries in id order with their message, and reads after an id, oldest first', () => {
    const ctx = freshDb();
    const outbox = createOutboxStore(ctx.db);
    expect([outbox.depth(), outbox.lastId(), outbox.peek(1)]).toEqual([0, 0, []]);
    const ids = atLeast(
      3,
      ['A', 'B', 'C'].map((t) => outbox.addToOutbox(assignment(t), '127.0.0.1', '2026-11-22T00:00:00.000Z')),
    );
    expect(ids).toEqual([ids[0], ids[0] + 1, ids[0] + 2]);
    expect(outbox.lastId()).toBe(ids[2]);
    expect(outbox.peek(1)[0]).toMatchObject({ id: ids[0], message: assignment('A'), createdAt: '2026-11-22T00:00:00.000Z' });
    expect(outbox.after(ids[0], 10).map((e) => e.message.body)).toEqual([assignment('B').body, assignment('C').body]);
    expect(outbox.removeFromOutbox(ids[1])).toBe(true);
    expect(outbox.removeFromOutbox(ids[1])).toBe(false);
    expect(outbox.after(0, 10).map((e) => e.id)).toEqual([ids[0], ids[2]]);
    expect(outbox.depth()).toBe(2);
    ctx.dispose();
  });

  it('never gives an id twice (it is the telegram number and the history key): not after the outbox emptied and the connection closed', () => {
    const ctx = freshDb();
    const outbox = createOutboxStore(ctx.db);
    const first = atLeast(
      2,
      ['A', 'B'].map((t) => outbox.addToOutbox(assignment(t), null, 'T')),
    );
    for (const id of first) outbox.removeFromOutbox(id); // acknowledged by the sorter
    ctx.db.close();
    const again = openDatabase(ctx.file);
    try {
      const next = createOutboxStore(again).addToOutbox(assignment('C'), null, 'T');
      expect(next).toBe(first[1] + 1);
      createOutboxStore(again).removeFromOutbox(next);
      // Each entry kept its own history row: none was ignored for an id already there.
      expect(again.prepare('SELECT outbox_id, track_id FROM outbox_history ORDER BY outbox_id').all()).toEqual([
        { outbox_id: first[0], track_id: 'A' },
        { outbox_id: first[1], track_id: 'B' },
        { outbox_id: next, track_id: 'C' },
      ]);
    } finally {
      again.close();
      ctx.dispose();
    }
  });

  it('round-trips destination settings, null BatchDoorStatus included', () => {
    const ctx = freshDb();
    const outbox = createOutboxStore(ctx.db);
    const setting = {
      kind: 'DESTINATION' as const,
      body: {
        Destination: 'D9',
        DestinationStatus: 'Ready' as const,
        DestinationText: 'Tour 9',
        LightStatus: 'Solid' as const,
        LightColor: 'GREEN' as const,
        BatchDoorStatus: null,
      },
    };
    outbox.addToOutbox(setting, null, '2026-11-22T00:00:00.000Z');
    expect(outbox.peek(1)[0]?.message).toEqual(setting);
    ctx.dispose();
  });

  it('keeps entries of both kinds in order until removed, and lastId is 0 when it is empty', () => {
    const ctx = freshDb();
    const outbox = createOutboxStore(ctx.db);
    const a = outbox.addToOutbox({ kind: 'ASSIGNMENT', body: { TrackID: '0004711', Destination: 'D1', Barcode: '' } }, '10.0.0.1', 'T1');
    const b = outbox.addToOutbox(
      {
        kind: 'DESTINATION',
        body: {
          Destination: 'D1',
          DestinationStatus: 'Ready',
          DestinationText: 'x',
          LightStatus: 'Solid',
          LightColor: 'RED',
          BatchDoorStatus: null,
        },
      },
      null,
      'T2',
    );
    expect(outbox.depth()).toBe(2);
    expect(outbox.lastId()).toBe(b);
    expect(outbox.peek(10).map((e) => e.id)).toEqual([a, b]);
    expect(outbox.peek(10)[0]?.message).toEqual({ kind: 'ASSIGNMENT', body: { TrackID: '0004711', Destination: 'D1', Barcode: '' } });
    expect(outbox.peek(10)[1]?.message.body).toMatchObject({ LightColor: 'RED', BatchDoorStatus: null });
    expect(outbox.removeFromOutbox(a)).toBe(true);
    expect(outbox.removeFromOutbox(a)).toBe(false);
    expect(outbox.peek(10).map((e) => e.id)).toEqual([b]);
    outbox.removeFromOutbox(b);
    expect(outbox.lastId()).toBe(0);
    ctx.dispose();
  });
});
