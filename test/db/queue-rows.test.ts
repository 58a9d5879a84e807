// A message as rows, on a real SQLite file: put back under the id it had, deleted once, and named
// the same way in delivered_history and dead_letters.
import { openDatabase } from '../../db/connection';
import { type StoredMessage, historyPayload, messageColumns, messageDelete, messageInsert } from '../../db/queue-rows';
import type { DestinationInfoDto } from '../../model/messages';
import { induct } from '../helpers/messages';
import { freshDbEach } from '../helpers/db';

const request = induct('0004711', { Barcode: 'B1' });
const scan: DestinationInfoDto = {
  Type: 'SCAN',
  Destination: 'D7',
  DestinationStatus: 'NotReady',
  DestinationText: 'x',
  LightStatus: 'Off',
  LightColor: 'Off',
  ButtonID: 2,
  MessageCode: 211,
  BatchDoorStatus: null,
};

describe('queue rows', () => {
  const ctx = freshDbEach();

  it('inserts under the next id, or back under the id a message had, in its own table', () => {
    const insert = messageInsert(ctx.db);
    expect([insert(request, 'T'), insert(request, 'T')]).toEqual([1, 2]);
    expect(insert(scan, 'T')).toBe(1); // each table numbers its own
    expect(insert(request, 'T', 17)).toBe(17);
    const ids = ctx.db.prepare('SELECT id FROM sortation_queue ORDER BY id').pluck().all();
    expect(ids).toEqual([1, 2, 17]);
    expect(() => insert(request, 'T', 2)).toThrow(/UNIQUE|PRIMARY KEY/);
  });

  it('never gives an id twice: not after the queue drained, the connection closed, or an operator deleted rows with sqlite3', () => {
    const insert = messageInsert(ctx.db);
    const remove = messageDelete(ctx.db);
    const ids = [insert(request, 'T'), insert(request, 'T'), insert(request, 'T')];
    expect(ids).toEqual([1, 2, 3]);
    for (const id of ids) remove({ id, queue: 'sortation', message: request, receivedAt: 'T' });
    expect(insert(request, 'T')).toBe(4); // the queue was empty: SQLite alone would give 1 again
    ctx.db.close();
    const again = openDatabase(ctx.file);
    try {
      again.prepare('DELETE FROM sortation_queue').run(); // as an operator would
      expect(messageInsert(again)(request, 'T')).toBe(5);
      expect(messageInsert(again)(scan, 'T')).toBe(1); // each table numbers its own
      expect(again.prepare("SELECT count(*) FROM sqlite_sequence WHERE name = 'sortation_queue'").pluck().get()).toBe(0);
    } finally {
      again.close();
    }
  });

  it('takes no id in a transaction that rolls back: ids stay consecutive', () => {
    const insert = messageInsert(ctx.db);
    expect(insert(request, 'T')).toBe(1);
    expect(() =>
      ctx.db.transaction(() => {
        insert(request, 'T');
        throw new Error('rolled back');
      })(),
    ).toThrow('rolled back');
    expect(insert(request, 'T')).toBe(2);
  });

  it('deletes a message from its own table, once', () => {
    const id = messageInsert(ctx.db)(scan, 'T');
    const remove = messageDelete(ctx.db);
    const stored: StoredMessage = { id, queue: 'destination', message: scan, receivedAt: 'T' };
    expect(remove({ ...stored, queue: 'sortation' } as StoredMessage)).toBe(0);
    expect(remove(stored)).toBe(1);
    expect(remove(stored)).toBe(0);
  });

  it('names a REQUEST by its induct location and a SCAN by its destination, without a TrackID', () => {
    expect(messageColumns({ id: 3, queue: 'sortation', message: request, receivedAt: 'T' })).toEqual({
      queue: 'sortation',
      message_id: 3,
      type: 'REQUEST',
      message_code: 210,
      track_id: '0004711',
      barcode: 'B1',
      destination: 'IND01',
      received_at: 'T',
    });
    expect(messageColumns({ id: 4, queue: 'destination', message: scan, receivedAt: 'T' })).toMatchObject({
      track_id: null,
      barcode: null,
      destination: 'D7',
      type: 'SCAN',
    });
  });

  it("keeps in the history payload only the fields the columns do not hold, in the message's order", () => {
    expect(historyPayload(request)).toBe('[0,1,2,3,4]');
    expect(historyPayload({ Type: 'VERIFY', TrackID: '0004711', Barcode: 'B1', Destination: 'D7', MessageCode: 212 })).toBe('[]');
    expect(JSON.parse(historyPayload(scan))).toEqual([
      scan.DestinationStatus,
      scan.DestinationText,
      scan.LightStatus,
      scan.LightColor,
      scan.ButtonID,
      scan.BatchDoorStatus,
    ]);
  });
});
