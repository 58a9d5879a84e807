// The scheduled housekeeping on a real SQLite file: the retention purge in short chunks, oldest
// first, then a checkpoint that waits for readers only briefly.
import Database from '../../db/sqlite';
import { createHistoryStore } from '../../db/history-store';
import { housekeeping, PURGE_CHUNK_ROWS } from '../../handlers/housekeeping';
import { createLogger } from '../../lib/process/logger';
import { freshDb } from '../helpers/db';
import { clock } from '../helpers/handler-fakes';

// clock() is 2026-11-21T12:00Z; with 7 days of retention the cutoff is 2026-11-14T12:00Z.
const OLD = '2026-11-10T00:00:00.000Z';
const KEPT = '2026-11-20T00:00:00.000Z';

function fill(db: Database.Database, delivered: Array<[string, number]>, outbox: Array<[string, string | null, number]>) {
  const d = db.prepare(`INSERT INTO delivered_history (queue, message_id, type, message_code, track_id, payload, received_at, delivered_at)
    VALUES ('sortation', ?, 'VERIFY', 212, ?, '{}', ?, ?)`);
  const o = db.prepare(`INSERT INTO outbox_history (outbox_id, kind, track_id, destination, created_at, fate, settled_at)
    VALUES (?, 'ASSIGNMENT', ?, 'D1', ?, ?, ?)`);
  let id = 0;
  db.transaction(() => {
    for (const [at, n] of delivered) for (let i = 0; i < n; i++, id++) d.run(id, `T${id}`, at, at);
    for (const [created, settled, n] of outbox)
      for (let i = 0; i < n; i++, id++) o.run(id, `T${id}`, created, settled ? 'Acknowledged' : 'Queued', settled);
  })();
}

describe('housekeeping', () => {
  it('purges what is older than the retention in chunks of at most PURGE_CHUNK_ROWS per table, and keeps the rest', async () => {
    const ctx = freshDb();
    try {
      // 2.5 chunks of old deliveries, 1.2 chunks of old settled assignments; one assignment made
      // before the cutoff but settled after it, one never settled; newer rows of both.
      fill(
        ctx.db,
        [
          [OLD, 2.5 * PURGE_CHUNK_ROWS],
          [KEPT, 10],
        ],
        [
          [OLD, OLD, 1.2 * PURGE_CHUNK_ROWS],
          [OLD, KEPT, 1],
          [OLD, null, 1],
          [KEPT, KEPT, 5],
        ],
      );
      const store = createHistoryStore(ctx.db);
      const chunks: number[] = [];
      const waits: Array<number | undefined> = [];
      const history = {
        // Each call is one writer command, committed on its own (as db/service-stores.ts does).
        purgeHistory: async (cutoff: string, limit: number) => {
          const n = store.purgeHistory(cutoff, limit);
          chunks.push(n);
          return n;
        },
        checkpoint: async (mode?: 'TRUNCATE' | 'RESTART', waitMs?: number) => (waits.push(waitMs), store.checkpoint(mode, waitMs)),
      };
      const result = await housekeeping({ history, clock, settings: { HistoryRetentionDays: 7 }, log: createLogger('silent') });
      expect(chunks).toEqual([2 * PURGE_CHUNK_ROWS, 1.2 * PURGE_CHUNK_ROWS, 0.5 * PURGE_CHUNK_ROWS, 0]);
      expect(result).toMatchObject({
        body: { PurgedHistoryRows: 3.7 * PURGE_CHUNK_ROWS, Chunks: 4, Cutoff: '2026-11-14T12:00:00.000Z', Checkpoint: { busy: false } },
      });
      expect(ctx.db.prepare('SELECT delivered_at, count(*) AS n FROM delivered_history GROUP BY 1').all()).toEqual([
        { delivered_at: KEPT, n: 10 },
      ]);
      expect(ctx.db.prepare('SELECT created_at, settled_at, count(*) AS n FROM outbox_history GROUP BY 1, 2 ORDER BY 1, 2').all()).toEqual([
        { created_at: OLD, settled_at: null, n: 1 },
        { created_at: OLD, settled_at: KEPT, n: 1 },
        { created_at: KEPT, settled_at: KEPT, n: 5 },
      ]);
      expect(waits).toEqual([100]);
    } finally {
      ctx.dispose();
    }
  });

  it('says once an hour how many days of history fit, after its purge', async () => {
    const ctx = freshDb();
    try {
      fill(ctx.db, [[OLD, 10]], []);
      const store = createHistoryStore(ctx.db);
      const said: string[] = [];
      const history = {
        purgeHistory: async (c: string, l: number) => (said.push('purge'), store.purgeHistory(c, l)),
        checkpoint: async () => store.checkpoint('TRUNCATE', 0),
      };
      await housekeeping({
        history,
        clock,
        settings: { HistoryRetentionDays: 7 },
        log: createLogger('silent'),
        storageWatch: { logProjection: (when) => said.push(when) },
      });
      expect(said).toEqual(['purge', 'purge', 'hourly']);
    } finally {
      ctx.dispose();
    }
  });

  it('goes on past an assignment posted before the cutoff and settled after it, which stays among the oldest rows', async () => {
    const ctx = freshDb();
    try {
      // The late one first by id, then 2.5 chunks of old settled assignments.
      fill(
        ctx.db,
        [],
        [
          [OLD, KEPT, 1],
          [OLD, OLD, 2.5 * PURGE_CHUNK_ROWS],
        ],
      );
      const store = createHistoryStore(ctx.db);
      const history = {
        purgeHistory: async (c: string, l: number) => store.purgeHistory(c, l),
        checkpoint: async (m?: 'TRUNCATE' | 'RESTART', w?: number) => store.checkpoint(m, w),
      };
      const result = await housekeeping({ history, clock, settings: { HistoryRetentionDays: 7 }, log: createLogger('silent') });
      expect(result).toMatchObject({ body: { PurgedHistoryRows: 2.5 * PURGE_CHUNK_ROWS } });
      expect(ctx.db.prepare('SELECT created_at, settled_at FROM outbox_history').all()).toEqual([{ created_at: OLD, settled_at: KEPT }]);
    } finally {
      ctx.dispose();
    }
  });

  it('stops between two chunks when the service stops; the next run goes on', async () => {
    const ctx = freshDb();
    try {
      fill(ctx.db, [[OLD, 3 * PURGE_CHUNK_ROWS]], []);
      const store = createHistoryStore(ctx.db);
      let state: 'Running' | 'Stopping' = 'Running';
      const history = {
        purgeHistory: async (cutoff: string, limit: number) => ((state = 'Stopping'), store.purgeHistory(cutoff, limit)),
        checkpoint: async () => store.checkpoint('TRUNCATE', 0),
      };
      const deps = { history, clock, settings: { HistoryRetentionDays: 7 }, log: createLogger('silent'), state: () => state };
      expect(await housekeeping(deps)).toMatchObject({ body: { PurgedHistoryRows: PURGE_CHUNK_ROWS, Chunks: 1 } });
      state = 'Running';
      history.purgeHistory = async (cutoff, limit) => store.purgeHistory(cutoff, limit);
      expect(await housekeeping(deps)).toMatchObject({ body: { PurgedHistoryRows: 2 * PURGE_CHUNK_ROWS } });
      expect(store.size()).toBe(0);
    } finally {
      ctx.dispose();
    }
  });

  it('gives up the checkpoint after a short wait while a reader holds the WAL, instead of holding the writer', async () => {
    const ctx = freshDb();
    const reader = new Database(ctx.file, { readonly: true });
    try {
      fill(ctx.db, [[OLD, 10]], []);
      reader.exec('BEGIN');
      reader.prepare('SELECT count(*) FROM delivered_history').get();
      fill(ctx.db, [[KEPT, 10]], []); // frames the reader's snapshot does not have
      const store = createHistoryStore(ctx.db);
      const history = {
        purgeHistory: async (c: string, l: number) => store.purgeHistory(c, l),
        checkpoint: async (m?: 'TRUNCATE' | 'RESTART', w?: number) => store.checkpoint(m, w),
      };
      const started = Date.now();
      const result = await housekeeping({ history, clock, settings: { HistoryRetentionDays: 7 }, log: createLogger('silent') });
      expect(result).toMatchObject({ body: { PurgedHistoryRows: 10, Checkpoint: { busy: true } } });
      // Well under the connection's 5 s busy timeout, which it waited for before.
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      reader.close();
      ctx.dispose();
    }
  });
});

describe('housekeeping and the alarm journal', () => {
  it('purges the alarms cleared before the cutoff with the history, through the monitor', async () => {
    const ctx = freshDb();
    try {
      const { alarmReads, alarmWrites } = await import('../../db/alarm-store');
      const w = alarmWrites(ctx.db);
      w.raiseAlarm({ id: 1, code: 'DEAD_LETTERS', severity: 'warning', detail: 'old', raisedAt: OLD });
      w.clearAlarm(1, OLD);
      w.raiseAlarm({ id: 2, code: 'SORTER_SILENT', severity: 'warning', detail: 'kept', raisedAt: OLD });
      w.clearAlarm(2, KEPT);
      w.raiseAlarm({ id: 3, code: 'DEAD_LETTERS', severity: 'warning', detail: 'newest', raisedAt: OLD });
      w.clearAlarm(3, OLD);
      const cutoffs: string[] = [];
      const store = createHistoryStore(ctx.db);
      const result = await housekeeping({
        history: {
          purgeHistory: async (c, l) => store.purgeHistory(c, l),
          checkpoint: async () => ({ busy: false, walFrames: 0, checkpointed: 0 }),
        },
        alarms: { purgeClearedBefore: async (cutoff) => (cutoffs.push(cutoff), w.purgeAlarmsBefore(cutoff, 1000)) },
        clock,
        settings: { HistoryRetentionDays: 7 },
        log: createLogger('silent'),
      });
      expect(cutoffs).toEqual(['2026-11-14T12:00:00.000Z']);
      expect(result).toMatchObject({ kind: 'ok', body: { PurgedHistoryRows: 1 } });
      // The one cleared after the cutoff stays, and so does the newest row (ids are never given twice).
      expect(
        alarmReads(ctx.db)
          .alarmJournal(OLD, 10)
          .map((a) => a.Id),
      ).toEqual([3, 2]);
    } finally {
      ctx.dispose();
    }
  });
});
