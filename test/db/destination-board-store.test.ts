// The destinations board on a real SQLite file, written the way the service writes it: through
// the queue's enqueue (a SCAN) and the outbox's add (a POST /destination), in their transactions.
import { createDestinationBoardStore, destinationBoardReads } from '../../db/destination-board-store';
import { outboxWrites } from '../../db/outbox-store';
import { queueWrites } from '../../db/queue-writes';
import type { DestinationInfoDto, DestinationSetting } from '../../model/messages';
import { freshDbEach } from '../helpers/db';

const scan = (over: Partial<DestinationInfoDto> = {}): DestinationInfoDto => ({
  Type: 'SCAN',
  Destination: 'D001',
  DestinationStatus: 'Ready',
  DestinationText: 'empty',
  LightStatus: 'Off',
  LightColor: 'Off',
  ButtonID: 0,
  MessageCode: 211,
  BatchDoorStatus: 'CLOSED',
  ...over,
});
const setting = (over: Partial<DestinationSetting> = {}): DestinationSetting => ({
  Destination: 'D001',
  DestinationStatus: 'NotReady',
  DestinationText: 'full',
  LightStatus: 'Flashing',
  LightColor: 'RED',
  BatchDoorStatus: 'OPENED',
  ...over,
});

describe('destination board store', () => {
  const ctx = freshDbEach();
  const board = () => destinationBoardReads(ctx.db).board();
  const tile = (d = 'D001') => board().find((t) => t.Destination === d)!;

  it('shows a SCAN committed to the queue, one row a destination, changed by the sorter', () => {
    const queue = queueWrites(ctx.db);
    queue.enqueue([scan(), scan({ Destination: 'D002', DestinationStatus: 'NotReady', ButtonID: 3 })], '2026-11-27T09:00:00.000Z');
    queue.enqueue([scan({ DestinationText: 'half' })], '2026-11-27T09:00:05.000Z');
    expect(board().map((t) => [t.Destination, t.DestinationStatus, t.DestinationText, t.ButtonID, t.ChangedBy, t.ChangedAt])).toEqual([
      ['D001', 'Ready', 'half', 0, 'sorter', '2026-11-27T09:00:05.000Z'],
      ['D002', 'NotReady', 'empty', 3, 'sorter', '2026-11-27T09:00:00.000Z'],
    ]);
    expect(tile().Wcs).toBeNull();
    // An operator reads the same with sqlite3: one row a destination.
    expect(ctx.db.prepare('SELECT count(*) FROM destination_board').pluck().get()).toBe(2);
  });

  it('a SCAN that repeats what the board shows keeps its time and writes nothing', () => {
    const queue = queueWrites(ctx.db);
    queue.enqueue([scan()], '2026-11-27T09:00:00.000Z');
    const before = ctx.db.prepare('SELECT total_changes()').pluck().get() as number;
    queue.enqueue([scan()], '2026-11-27T09:01:00.000Z');
    // The queue row only: the board's upsert changed no row.
    expect((ctx.db.prepare('SELECT total_changes()').pluck().get() as number) - before).toBe(1);
    expect(tile().ChangedAt).toBe('2026-11-27T09:00:00.000Z');
  });

  it('shows a setting committed to the outbox, changed by the WCS address, pending until the sorter reports it', () => {
    const outbox = outboxWrites(ctx.db);
    queueWrites(ctx.db).enqueue([scan()], '2026-11-27T09:00:00.000Z');
    outbox.addToOutbox({ kind: 'DESTINATION', body: setting() }, '10.0.0.7', '2026-11-27T09:00:01.000Z');
    expect(tile()).toMatchObject({
      DestinationStatus: 'NotReady',
      LightStatus: 'Flashing',
      LightColor: 'RED',
      BatchDoorStatus: 'OPENED',
      ButtonID: 0,
      ChangedBy: '10.0.0.7',
      ChangedAt: '2026-11-27T09:00:01.000Z',
    });
    expect(tile().Wcs).toMatchObject({ DestinationStatus: 'NotReady', SetAt: '2026-11-27T09:00:01.000Z', Agreement: 'Pending' });
    // An assignment leaves the board alone.
    outbox.addToOutbox(
      { kind: 'ASSIGNMENT', body: { TrackID: '1', Destination: 'D001', Barcode: '' } },
      '10.0.0.7',
      '2026-11-27T09:00:02.000Z',
    );
    expect(tile().ChangedAt).toBe('2026-11-27T09:00:01.000Z');
  });

  it('marks the tile when the next SCAN disagrees with the setting, clears it when one agrees, and leaves later SCANs to the sorter', () => {
    const queue = queueWrites(ctx.db);
    const outbox = outboxWrites(ctx.db);
    outbox.addToOutbox({ kind: 'DESTINATION', body: setting() }, '10.0.0.7', 'T1');
    queue.enqueue([scan({ DestinationStatus: 'Ready', LightColor: 'GREEN' })], 'T2');
    expect(tile()).toMatchObject({
      DestinationStatus: 'Ready',
      LightColor: 'GREEN',
      ChangedBy: 'sorter',
      Wcs: { Agreement: 'Disagrees', LightColor: 'RED' },
    });
    queue.enqueue(
      [
        scan({
          DestinationStatus: 'NotReady',
          DestinationText: 'full',
          LightStatus: 'Flashing',
          LightColor: 'RED',
          BatchDoorStatus: 'OPENED',
        }),
      ],
      'T3',
    );
    expect(tile().Wcs!.Agreement).toBe('Agrees');
    // The chute emptied later: the sorter's own change, not a disagreement.
    queue.enqueue([scan()], 'T4');
    expect(tile()).toMatchObject({ DestinationStatus: 'Ready', ChangedAt: 'T4', Wcs: { Agreement: 'Agrees' } });
    // A new setting is pending again.
    outbox.addToOutbox({ kind: 'DESTINATION', body: setting({ LightColor: 'BLUE' }) }, null, 'T5');
    expect(tile()).toMatchObject({ LightColor: 'BLUE', ChangedBy: 'WCS', Wcs: { Agreement: 'Pending', LightColor: 'BLUE' } });
    queue.enqueue(
      [
        scan({
          DestinationStatus: 'NotReady',
          DestinationText: 'full',
          LightStatus: 'Flashing',
          LightColor: 'BLUE',
          BatchDoorStatus: 'OPENED',
        }),
      ],
      'T6',
    );
    expect(tile().Wcs!.Agreement).toBe('Agrees');
  });

  it('writes the setting and its tile all or none', () => {
    const outbox = outboxWrites(ctx.db);
    ctx.db.exec("CREATE TRIGGER refuse BEFORE INSERT ON destination_board BEGIN SELECT RAISE(ABORT, 'refused'); END");
    expect(() => outbox.addToOutbox({ kind: 'DESTINATION', body: setting() }, null, 'T')).toThrow('refused');
    expect(ctx.db.prepare('SELECT count(*) FROM outbox').pluck().get()).toBe(0);
  });

  it('reads and writes on one connection for tools', () => {
    const store = createDestinationBoardStore(ctx.db);
    store.scanned(scan({ BatchDoorStatus: null }), 'T');
    expect(store.board()).toEqual([expect.objectContaining({ Destination: 'D001', BatchDoorStatus: null, Wcs: null })]);
  });
});
