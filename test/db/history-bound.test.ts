// The history bounded by size on a real SQLite file: what the stores take, the share to cut, the
// cutoff that takes it (the oldest first), freed pages reused, and the days that fit.
import fs from 'node:fs';
import path from 'node:path';
import { type BoundSettings, CUT_TO_SHARE, cutShare, lookAtBound, project, walLimitsFor } from '../../db/history-bound';
import { purgeInChunks } from '../../db/history-purge';
import { createHistoryStore } from '../../db/history-store';
import { createQueueStore } from '../../db/queue-store';
import { measureStorage, rotatedFilesBytes } from '../../db/storage-use';
import { WAL_LIMITS } from '../../db/wal-limits';
import { sampleRequest as request, sampleVerify as verify } from '../../bench/sample-item';
import { freshDb } from '../helpers/db';

const T0 = Date.parse('2026-11-01T00:00:00.000Z');

/** `items` items' history as the service writes it, one a second from `from`: a REQUEST and a VERIFY delivered, an assignment acknowledged. */
function items(db: ReturnType<typeof freshDb>['db'], from: number, count: number, first = 0) {
  const queue = createQueueStore(db);
  // As the outbox's trigger writes it when the sorter acknowledges the assignment, settled at the item's time.
  const settled =
    db.prepare(`INSERT INTO outbox_history (outbox_id, kind, track_id, barcode, destination, client_address, created_at, fate, settled_at)
    VALUES (?, 'ASSIGNMENT', ?, '4006381333931', 'D12', '10.0.0.5', ?, 'Acknowledged', ?)`);
  db.transaction(() => {
    for (let i = first; i < first + count; i++) {
      const at = new Date(T0 + (from + i - first) * 1000).toISOString();
      const t = String(i).padStart(10, '0');
      queue.enqueue([request(t), verify(t)], at);
      queue.deliver(queue.head('sortation', [])!, { deliveredAt: at, clientAddress: '10.0.0.5', readProof: 'NextRequest' });
      queue.deliver(queue.head('sortation', [])!, { deliveredAt: at, clientAddress: '10.0.0.5', readProof: 'NextRequest' });
      settled.run(i + 1, t, at, at);
    }
  })();
}

const settings = (over: Partial<BoundSettings> = {}): BoundSettings => ({
  maxBytes: null,
  maxDiskShare: 0.4,
  keepFreeShare: 0.1,
  retentionDays: 30,
  walAllowanceBytes: 0,
  trafficLogMaxBytes: 0,
  ...over,
});
const GB = 1e9;

describe('history bound', () => {
  it('reads the history extent from the ends of its tables, and the time before which a share of it lies', () => {
    const ctx = freshDb();
    try {
      const history = createHistoryStore(ctx.db);
      expect(history.extent()).toEqual({ rows: 0, oldestAt: null, newestAt: null });
      expect(history.timeAtShare(0.5)).toBeNull();
      items(ctx.db, 0, 100);
      expect(history.extent()).toEqual({ rows: 300, oldestAt: '2026-11-01T00:00:00.000Z', newestAt: '2026-11-01T00:01:39.000Z' });
      // The fourth of 200 delivered rows, two an item: the 50th row is item 25's REQUEST.
      expect(history.timeAtShare(0.25)).toBe('2026-11-01T00:00:25.000Z');
      expect(history.timeAtShare(1)).toBe('2026-11-01T00:01:39.001Z');
      // Purged by that cutoff: a quarter of both tables, the oldest.
      history.purgeHistory(history.timeAtShare(0.25)!, 1000);
      expect(history.extent()).toEqual({ rows: 225, oldestAt: '2026-11-01T00:00:25.000Z', newestAt: '2026-11-01T00:01:39.000Z' });
    } finally {
      ctx.dispose();
    }
  });

  it('measures the files and the pages in use: a purge frees pages in the file, and new rows reuse them without growing it', () => {
    const ctx = freshDb();
    try {
      const history = createHistoryStore(ctx.db);
      items(ctx.db, 0, 4000);
      history.checkpoint('TRUNCATE');
      const full = measureStorage(ctx.db, history, { database: ctx.file });
      expect(full.databaseBytes).toBe(fs.statSync(ctx.file).size);
      expect(full.walBytes).toBe(0);
      expect(full.usedDatabaseBytes).toBeLessThanOrEqual(full.databaseBytes);
      expect(full.usedDatabaseBytes).toBeGreaterThan(full.databaseBytes * 0.95);
      expect(full.fileSystemBytes).toBeGreaterThan(0);
      expect(full.freeBytes).toBeGreaterThan(0);
      // Half of it purged: the file keeps its size, half its pages are free.
      const done = history.purgeHistory(history.timeAtShare(0.5)!, 1e9);
      expect(done).toBe(6000);
      history.checkpoint('TRUNCATE');
      const half = measureStorage(ctx.db, history, { database: ctx.file });
      expect(half.databaseBytes).toBe(full.databaseBytes);
      expect(half.usedDatabaseBytes).toBeLessThan(full.usedDatabaseBytes * 0.6);
      // As many items again: into the freed pages, the file grows by a few pages at most.
      items(ctx.db, 4000, 2000, 4000);
      history.checkpoint('TRUNCATE');
      const again = measureStorage(ctx.db, history, { database: ctx.file });
      expect(again.databaseBytes - full.databaseBytes).toBeLessThan(full.databaseBytes * 0.02);
      process.stdout.write(
        `history on a real file: ${Math.round(full.usedDatabaseBytes / 4000)} bytes an item (512-byte pages), file ${full.databaseBytes} bytes; after half purged and as many items again ${again.databaseBytes}\n`,
      );
    } finally {
      ctx.dispose();
    }
  });

  it('counts a rotated log by its files: the log and its numbered rotations, nothing else', () => {
    const ctx = freshDb();
    try {
      const dir = path.dirname(ctx.file);
      const log = `${dir}/Service_PLC.log`;
      fs.writeFileSync(log, 'x'.repeat(100));
      fs.writeFileSync(`${log}.1`, 'x'.repeat(50));
      fs.writeFileSync(`${log}.2`, 'x'.repeat(25));
      fs.writeFileSync(`${log}.bak`, 'x'.repeat(1000));
      expect(rotatedFilesBytes(log)).toBe(175);
      expect(measureStorage(ctx.db, createHistoryStore(ctx.db), { database: ctx.file, trafficLog: log }).trafficLogBytes).toBe(175);
    } finally {
      ctx.dispose();
    }
  });

  it('bounds the three files together: the configured bytes or the share of the file system, and the reserve of free space, whichever is smaller', () => {
    const extent = { rows: 1000, oldestAt: null, newestAt: null };
    const m = {
      databaseBytes: 4 * GB,
      walBytes: 16e6,
      trafficLogBytes: 10e6,
      usedDatabaseBytes: 3 * GB,
      fileSystemBytes: 32 * GB,
      freeBytes: 20 * GB,
      history: extent,
    };
    // The share of 32 GB: 12.8 GB, less the WAL and the traffic log at their most.
    expect(lookAtBound(settings({ walAllowanceBytes: 32e6, trafficLogMaxBytes: 60e6 }), m)).toMatchObject({
      boundBytes: 12.8 * GB,
      boundBy: 'HistoryMaxDiskShare',
      filesBytes: 4.026 * GB,
      databaseBudgetBytes: 12.8 * GB - 32e6 - 60e6,
      cutShare: 0,
      diskLow: false,
      lowBelowBytes: 3.2 * GB,
    });
    // HistoryMaxBytes instead of the share; the pages in use above what the database may take: cut to 90% of it.
    const small = lookAtBound(settings({ maxBytes: 2 * GB }), m);
    expect(small).toMatchObject({ boundBytes: 2 * GB, boundBy: 'HistoryMaxBytes', databaseBudgetBytes: 2 * GB - 16e6 - 10e6 });
    expect(small.cutShare).toBeCloseTo((3 * GB - CUT_TO_SHARE * (2 * GB - 26e6)) / (3 * GB), 6);
    // Another program takes the disk: 2 GB free, the reserve 3.2 GB: the bound is what our files take less the 1.2 GB missing, and the disk is Low.
    const filled = lookAtBound(settings(), { ...m, freeBytes: 2 * GB });
    expect(filled).toMatchObject({ boundBy: 'HistoryKeepFreeShare', boundBytes: 4.026 * GB - 1.2 * GB, diskLow: true });
    expect(filled.cutShare).toBeGreaterThan(0);
    // No reserve: the share alone; the disk is still Low below 2% free.
    expect(lookAtBound(settings({ keepFreeShare: 0 }), { ...m, freeBytes: 0.5 * GB })).toMatchObject({
      boundBy: 'HistoryMaxDiskShare',
      diskLow: true,
      lowBelowBytes: 0.64 * GB,
    });
    // A file system that cannot be measured: HistoryMaxBytes still holds, the share cannot.
    expect(lookAtBound(settings(), { ...m, fileSystemBytes: null, freeBytes: null })).toMatchObject({
      boundBytes: null,
      boundBy: 'None',
      cutShare: 0,
      diskLow: false,
    });
    expect(lookAtBound(settings({ maxBytes: GB }), { ...m, fileSystemBytes: null, freeBytes: null })).toMatchObject({
      boundBytes: GB,
      boundBy: 'HistoryMaxBytes',
    });
  });

  it('cuts nothing within the budget, down to 90% of it past it (ahead of the growth until the next look), and all of it when nothing fits', () => {
    expect(cutShare(900, 1000, 10)).toBe(0);
    expect(cutShare(1000, 1000, 10)).toBe(0);
    expect(cutShare(1200, 1000, 10)).toBeCloseTo(0.25, 6);
    expect(cutShare(1200, 0, 10)).toBe(1);
    expect(cutShare(1200, 1000, 0)).toBe(0);
    // Growing 200 between two looks: cut already at 900, down to 90% less that growth.
    expect(cutShare(900, 1000, 10, 200)).toBeCloseTo((900 + 200 - 900) / 900, 6);
    expect(cutShare(700, 1000, 10, 200)).toBe(0);
  });

  it('projects the days that fit from the rate the history shows, and when the size bound begins to cut it short of the retention', () => {
    const now = new Date('2026-11-03T00:00:00.000Z');
    const two = { rows: 1000, oldestAt: '2026-11-01T00:00:00.000Z', newestAt: '2026-11-03T00:00:00.000Z' };
    const m = {
      databaseBytes: 2 * GB,
      walBytes: 0,
      trafficLogBytes: 0,
      usedDatabaseBytes: 2 * GB,
      fileSystemBytes: 100 * GB,
      freeBytes: 80 * GB,
      history: two,
    };
    // 1 GB a day, 40 GB of bound: 40 days fit, 30 are kept.
    expect(project(settings(), m, lookAtBound(settings(), m), now)).toEqual({
      bytesPerDay: GB,
      daysFit: 40,
      retentionMet: true,
      sizeCutsFrom: null,
    });
    // 10 GB of bound: 10 days fit; the history reaches it in 8 days.
    const small = settings({ maxBytes: 10 * GB });
    expect(project(small, m, lookAtBound(small, m), now)).toEqual({
      bytesPerDay: GB,
      daysFit: 10,
      retentionMet: false,
      sizeCutsFrom: '2026-11-11T00:00:00.000Z',
    });
    // Too little history to tell a rate.
    const young = { ...m, history: { ...two, oldestAt: '2026-11-02T23:59:55.000Z' } };
    expect(project(settings(), young, lookAtBound(settings(), young), now)).toBeNull();
    // Unless an earlier look measured one: then that rate stands in.
    expect(project(small, young, lookAtBound(small, young), now, GB)).toMatchObject({ bytesPerDay: GB, daysFit: 10, retentionMet: false });
  });

  it('under a small bound the WAL starts over at a sixteenth of it; from 256 MB on it keeps its usual limits', () => {
    expect(walLimitsFor(null)).toBe(WAL_LIMITS);
    expect(walLimitsFor(16 * GB)).toBe(WAL_LIMITS);
    expect(walLimitsFor(8 * 1048576)).toMatchObject({ restartBytes: 512 * 1024, maxBytes: 2 * 1048576 });
    expect(walLimitsFor(1048576)).toMatchObject({ restartBytes: 256 * 1024 });
  });

  it('a history past its bound is cut, the oldest first, in chunks, until its pages in use are within the budget; the newest stays', async () => {
    const ctx = freshDb();
    try {
      const history = createHistoryStore(ctx.db);
      items(ctx.db, 0, 6000);
      const before = measureStorage(ctx.db, history, { database: ctx.file });
      // A bound that holds about two thirds of it.
      const s = settings({ maxBytes: Math.round((before.usedDatabaseBytes * 2) / 3), keepFreeShare: 0 });
      const look = lookAtBound(s, { ...before, walBytes: 0 });
      expect(look.cutShare).toBeGreaterThan(0.3);
      const cutoff = history.timeAtShare(look.cutShare)!;
      const chunks: number[] = [];
      const done = await purgeInChunks(
        { purgeHistory: async (c, l) => (chunks.push(history.purgeHistory(c, l)), chunks[chunks.length - 1]!) },
        cutoff,
      );
      expect(chunks.length).toBeGreaterThan(3);
      expect(Math.max(...chunks)).toBeLessThanOrEqual(2000);
      const after = measureStorage(ctx.db, history, { database: ctx.file });
      expect(after.usedDatabaseBytes).toBeLessThanOrEqual(s.maxBytes!);
      expect(after.usedDatabaseBytes).toBeGreaterThan(s.maxBytes! * 0.75);
      expect(done.purged).toBe(before.history.rows - after.history.rows);
      // What is left is the newest, without a gap: every item from the first kept to the last.
      const kept = ctx.db
        .prepare("SELECT min(track_id) AS first, max(track_id) AS last, count(*) AS n FROM delivered_history WHERE type = 'VERIFY'")
        .get() as { first: string; last: string; n: number };
      expect(kept.last).toBe('0000005999');
      expect(Number(kept.last) - Number(kept.first) + 1).toBe(kept.n);
      expect(after.history.oldestAt! >= cutoff).toBe(true);
    } finally {
      ctx.dispose();
    }
  });
});
