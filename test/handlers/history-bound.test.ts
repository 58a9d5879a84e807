// The size bound as a scheduled handler on a real SQLite file: past the bound it cuts the oldest
// history in chunks and records the cut; within it, nothing.
import { createHistoryStore } from '../../db/history-store';
import { measureStorage } from '../../db/storage-use';
import { historyBound } from '../../handlers/history-bound';
import { StorageWatch } from '../../lib/ops/storage-watch';
import { freshDb } from '../helpers/db';
import { capturingLogger } from '../helpers/log';

const T0 = Date.parse('2026-11-20T00:00:00.000Z');

describe('historyBound', () => {
  it('within the bound: nothing; past it: the oldest rows purged in chunks, the WAL asked to start over between them, the cut counted and logged', async () => {
    const ctx = freshDb();
    try {
      const store = createHistoryStore(ctx.db);
      const insert = ctx.db
        .prepare(`INSERT INTO delivered_history (queue, message_id, type, message_code, track_id, barcode, destination, payload, received_at, delivered_at)
        VALUES ('sortation', ?, 'VERIFY', 212, ?, '4006381333931', 'D12', '[]', ?, ?)`);
      ctx.db.transaction(() => {
        for (let i = 0; i < 6000; i++)
          insert.run(i, String(i).padStart(10, '0'), new Date(T0 + i * 1000).toISOString(), new Date(T0 + i * 1000).toISOString());
      })();
      store.checkpoint('TRUNCATE'); // the WAL counts in the bound: empty, as after a start
      const used = measureStorage(ctx.db, store, { database: ctx.file }).usedDatabaseBytes;
      const { log, lines } = capturingLogger();
      const settings = {
        maxBytes: used * 2,
        maxDiskShare: 0.4,
        keepFreeShare: 0,
        retentionDays: 30,
        walAllowanceBytes: 0,
        trafficLogMaxBytes: 0,
      };
      const watch = new StorageWatch(
        settings,
        () => measureStorage(ctx.db, store, { database: ctx.file }),
        (share) => store.timeAtShare(share),
        () => new Date(T0 + 6000e3),
        log,
        () => true,
      );
      const restarts: string[] = [];
      const history = {
        purgeHistory: async (cutoff: string, limit: number) => store.purgeHistory(cutoff, limit),
        checkpoint: async (mode?: 'TRUNCATE' | 'RESTART', waitMs?: number) => (
          restarts.push(`${mode} ${waitMs}`),
          store.checkpoint(mode, waitMs)
        ),
      };
      expect(await historyBound({ history, storageWatch: watch })).toMatchObject({ body: { Cut: false } });
      expect(store.size()).toBe(6000);

      // A bound of half the pages in use: cut to 90% of it, the oldest first.
      (settings as { maxBytes: number }).maxBytes = Math.round(used / 2);
      const result = (await historyBound({ history, storageWatch: watch })) as { body: Record<string, unknown> };
      expect(result.body).toMatchObject({ Cut: true, Chunks: expect.any(Number) });
      const purged = result.body.PurgedHistoryRows as number;
      expect(purged).toBeGreaterThan(3000);
      expect(purged).toBeLessThan(4500);
      expect(measureStorage(ctx.db, store, { database: ctx.file }).usedDatabaseBytes).toBeLessThanOrEqual(settings.maxBytes);
      expect(ctx.db.prepare('SELECT min(message_id) AS first, max(message_id) AS last FROM delivered_history').get()).toEqual({
        first: purged,
        last: 5999,
      });
      // A chunk of 1,000 rows, then the WAL asked to start over, for each chunk that purged rows.
      expect(restarts).toEqual(Array(Math.ceil(purged / 1000)).fill('RESTART 100'));
      expect(watch.status()).toMatchObject({ Cuts: 1, CutRows: purged, LastCut: { Rows: purged, Cutoff: result.body.Cutoff } });
      expect(lines.filter((l) => /^history: purged \d+ rows delivered before .* to stay within the size bound/.test(l.msg))).toHaveLength(
        1,
      );
    } finally {
      ctx.dispose();
    }
  });
});
