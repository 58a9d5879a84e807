// The history of deliveries on a real SQLite file: the purge of old rows and the checkpoint.
import { createQueueStore } from '../../db/queue-store';
import { createHistoryStore } from '../../db/history-store';
import type { VerifyDto } from '../../model/messages';
import { freshDb } from '../helpers/db';

const verify = (t: string): VerifyDto => ({ Type: 'VERIFY', TrackID: t, Barcode: 'B', Destination: 'D1', MessageCode: 212 });

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
