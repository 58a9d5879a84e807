// The history of deliveries on a real SQLite file: the purge of old rows and the checkpoint.
import { createQueueStore } from '../../db/queue-store';
import { createHistoryStore } from '../../db/history-store';
import { createLinkStore } from '../../db/link-store';
import { createOutboxStore } from '../../db/outbox-store';
import type { VerifyDto } from '../../model/messages';
import { freshDb } from '../helpers/db';

const verify = (t: string): VerifyDto => ({ Type: 'VERIFY', TrackID: t, Barcode: 'B', Destination: 'D1', MessageCode: 212 });

describe('history store', () => {
  it('purges rows delivered before the cutoff and checkpoints the WAL', () => {
    const ctx = freshDb();
    const store = createQueueStore(ctx.db);
    const history = createHistoryStore(ctx.db);
    store.enqueue([verify('old'), verify('new')], 'T');
    store.deliver(store.head('sortation', [])!, { deliveredAt: '2026-10-01T00:00:00.000Z', clientAddress: null });
    store.deliver(store.head('sortation', [])!, { deliveredAt: '2026-11-20T00:00:00.000Z', clientAddress: null });
    expect(history.purgeHistory('2026-11-01T00:00:00.000Z', 1000)).toBe(1);
    expect(history.size()).toBe(1);
    expect(history.checkpoint().busy).toBe(false);
    ctx.dispose();
  });

  it('purges the oldest rows a chunk at a time, stopping at the first chunk with rows too new', () => {
    const ctx = freshDb();
    const store = createQueueStore(ctx.db);
    const history = createHistoryStore(ctx.db);
    const days = ['01', '02', '03', '04', '05', '20', '21'];
    store.enqueue(
      days.map((d) => verify(d)),
      'T',
    );
    for (const d of days) store.deliver(store.head('sortation', [])!, { deliveredAt: `2026-10-${d}T00:00:00.000Z`, clientAddress: null });
    const cutoff = '2026-10-10T00:00:00.000Z';
    expect([1, 2, 3].map(() => history.purgeHistory(cutoff, 2))).toEqual([2, 2, 1]);
    expect(history.purgeHistory(cutoff, 2)).toBe(0);
    expect(history.latest(10).map((r) => r.TrackID)).toEqual(['21', '20']);
    ctx.dispose();
  });

  it('purges a posted assignment once the sorter settled it; one still waiting is in the outbox, not in the history', () => {
    const ctx = freshDb();
    const outbox = createOutboxStore(ctx.db);
    const history = createHistoryStore(ctx.db);
    const acknowledged = outbox.addToOutbox(
      { kind: 'ASSIGNMENT', body: { TrackID: 'A', Barcode: 'B', Destination: 'D1' } },
      null,
      '2026-10-01T00:00:00.000Z',
    );
    outbox.addToOutbox({ kind: 'ASSIGNMENT', body: { TrackID: 'Q', Barcode: 'B', Destination: 'D1' } }, null, '2026-10-02T00:00:00.000Z');
    outbox.removeFromOutbox(acknowledged); // settled now
    expect(history.purgeHistory('2100-01-01T00:00:00.000Z', 10)).toBe(1);
    expect(ctx.db.prepare('SELECT count(*) FROM outbox_history').pluck().get()).toBe(0);
    expect(outbox.peek(10).map((e) => e.message.kind === 'ASSIGNMENT' && e.message.body.TrackID)).toEqual(['Q']);
    ctx.dispose();
  });

  it('purges an entry the sorter could not use with the history, by when it was dropped; the count of drops stays', () => {
    const ctx = freshDb();
    const outbox = createOutboxStore(ctx.db);
    const links = createLinkStore(ctx.db, createQueueStore(ctx.db));
    const history = createHistoryStore(ctx.db);
    const add = (track: string) =>
      outbox.addToOutbox(
        { kind: 'ASSIGNMENT', body: { TrackID: track, Barcode: 'B', Destination: 'D1' } },
        null,
        '2026-09-30T00:00:00.000Z',
      );
    add('OLD');
    add('NEW');
    const [older, newer] = outbox.peek(2);
    links.dropFromOutbox(older!, 'time to live passed', '2026-10-01T00:00:00.000Z');
    links.dropFromOutbox(newer!, 'time to live passed', '2026-11-20T00:00:00.000Z');
    // Each drop's fate in outbox_history (settled when dropped) and its row in outbox_dropped.
    expect(history.purgeHistory('2026-11-01T00:00:00.000Z', 10)).toBe(2);
    expect(ctx.db.prepare('SELECT track_id FROM outbox_dropped').pluck().all()).toEqual(['NEW']);
    expect(ctx.db.prepare('SELECT track_id FROM outbox_history').pluck().all()).toEqual(['NEW']);
    expect(links.droppedCount('ASSIGNMENT')).toBe(2);
    ctx.dispose();
  });

  it('keeps only the TrackID indexes on the history tables: each index is a page written by every transaction that adds a row', () => {
    const ctx = freshDb();
    const indexes = ctx.db
      .prepare(
        "SELECT tbl_name, name FROM sqlite_schema WHERE type = 'index' AND tbl_name IN ('delivered_history', 'outbox_history') ORDER BY name",
      )
      .all();
    expect(indexes).toEqual([
      { tbl_name: 'delivered_history', name: 'delivered_history_track_id' },
      { tbl_name: 'outbox_history', name: 'outbox_history_track_id' },
    ]);
    ctx.dispose();
  });
});
